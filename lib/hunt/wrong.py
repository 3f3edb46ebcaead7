"""The wrong-result oracles in a trial: NoREC, TLP, differential, DQP, EET... over generated SELECTs.

The oracles themselves are :mod:`lib.hunt.wrongresult` (their interface:
``wrong_result_oracles(names)`` gives objects with ``name`` and
``run(conns, metadata, seed, budget) -> list[WrongResult]``).  A trial runs
them after its load, when the tables no longer change, on DB-API
connections to the servers to check (s0; s0 and the servers it is compared
with for ``differential``), and each :class:`WrongResult` becomes a finding
of kind ``wrong-result`` signed with the oracle and the query's shape --
or, for CERT's, of kind ``performance`` (a row estimate, never a wrong
result).  A finding its oracle recognised as a known bug of the server (``known``: CERT's
``cert-range-keypart``) is signed with the bug's name instead of the shape
(``performance | cert | known bug cert-range-keypart``), so every shape of it is one
finding, which the known-bugs corpus tags known.  :data:`NAMES` lists them all (the package's registry says the same:
a unit test checks it).

The randgen load of a ``compare`` topology is itself differential: every
statement also runs on the other servers (the ResultsetComparator
validator), and each difference it saw is a finding of oracle
``differential`` too (:func:`load_difference_findings`).
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Protocol, Sequence

from .finding import Finding
from .signature import fingerprint, performance_signature, wrong_result_signature

NAMES = ("norec", "tlp", "differential", "dqp", "eet", "coddtest", "pinolo", "dqe", "radar",
         "tlp-aggregate", "tlp-distinct", "tlp-groupby", "tlp-having", "cert")
MAX_TEXT = 20000
KNOWN_PART = "known bug "  # the signature's part of a finding its oracle recognised as a
                           # known bug: one signature for every shape of it


class WrongResultLike(Protocol):
    """What the hunt reads of a wrong-result oracle's finding."""

    oracle: str
    shape: str
    queries: tuple[str, ...]
    results: tuple[str, ...]
    detail: str


def load_oracles(names: Sequence[str]) -> list[Any]:
    """The wrong-result oracles named (their package's typed error for an unknown name)."""
    if not names:
        return []
    package = importlib.import_module(f"{__package__}.wrongresult")
    return list(package.wrong_result_oracles(list(names)))


def finding_of(result: WrongResultLike, server: str) -> Finding:
    """A wrong result as a finding."""
    text = [f"{result.oracle}: {result.detail}", f"shape: {result.shape}", ""]
    for i, query in enumerate(result.queries, start=1):
        text.append(f"query {i}: {query}")
    for i, rendered in enumerate(result.results, start=1):
        text.append(f"result {i}: {rendered}")
    kind = getattr(result, "kind", "wrong-result")
    known = str(getattr(result, "known", ""))
    sig = (performance_signature if kind == "performance" else wrong_result_signature)(
        result.oracle, f"{KNOWN_PART}{known}" if known else result.shape)
    details = {"shape": result.shape, "queries": list(result.queries),
               "results": [r[:MAX_TEXT] for r in result.results], "detail": result.detail}
    if known:
        details["known"] = known
        text.insert(2, f"known bug: {known}")
    return Finding(kind, result.oracle, sig,
                   f"{result.oracle} on {server}: {result.detail}"[:300], server, details,
                   {f"{kind}.txt": "\n".join(text)[:MAX_TEXT * 4] + "\n"})


def run_oracles(oracles: Sequence[Any], conns: Sequence[Any], metadata: Any, seed: int,
                budget: int, server: str, fits: Callable[[str], bool] = lambda name: True
                ) -> tuple[list[Finding], dict[str, Any]]:
    """Run each oracle that fits (fits(name): the hunt's --duration; one that does not is
    skipped, said by fits); their findings, and each one's statistics (when it keeps them)."""
    findings: list[Finding] = []
    stats: dict[str, Any] = {}
    for oracle in oracles:
        if not fits(oracle.name):
            continue
        results = oracle.run(conns, metadata, seed, budget)
        findings.extend(finding_of(r, server) for r in results)
        kept = getattr(oracle, "stats", None)
        if kept is not None:
            stats[oracle.name] = {k: v for k, v in vars(kept).items()
                                  if isinstance(v, (int, float, str))}
    return findings, stats


def load_difference_findings(differences: Sequence[dict[str, Any]], server: str) -> list[Finding]:
    """The compare topology's load: the ResultsetComparator's differences as findings (one
    per query shape)."""
    findings: dict[str, Finding] = {}
    for diff in differences:
        query = str(diff.get("query", ""))
        sig = wrong_result_signature("differential", fingerprint(query))
        if sig.id in findings:
            continue
        findings[sig.id] = Finding(
            "wrong-result", "differential", sig,
            f"differential (load) on {server}: {diff.get('kind', 'difference')} in {query[:200]}",
            server, {"source": "load (ResultsetComparator)", "difference": diff,
                     "queries": [query]},
            {"wrong-result.txt": f"{diff}\n"})
    return list(findings.values())
