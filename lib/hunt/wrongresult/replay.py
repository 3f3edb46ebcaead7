"""An oracle's finding judged again after a replay: the reduce predicate of the oracles.

A wrong-result finding of an oracle that runs over the load's tables (TLP, NoREC, DQP,
EET, CODDTest, Pinolo, the TLP variants) or over copies of them it can build again (Radar,
DQE), and a performance finding of CERT (:func:`finding_kind`: never called a wrong
result), holds the statements it compared (``details.queries``) and the oracle's comparison of
their rows (``detail``: ``EET (aggregate): rows only in Q: ...``).  After a candidate's
statements are replayed, :func:`judge_again` runs those statements again on a new
connection, as the oracle's run did (tables flushed, the sql_mode flags
``PAD_CHAR_TO_FULL_LENGTH``, ``NO_ZERO_DATE``, ``NO_ZERO_IN_DATE``, ``TRADITIONAL`` left
out, ``max_statement_time`` set: :class:`~lib.hunt.wrongresult.oracle.Sessions`; what
they name beyond the load's tables built again first:
:meth:`~lib.hunt.wrongresult.oracle.OracleBase.rebuild`, Radar's raw copies and DQE's
copy under the names the statements give them) and asks the oracle's own ``judge``
(DQE and CERT run them their own way too: the UPDATE and DELETE undone, each EXPLAIN's
note read): the candidate still fails when the oracle still disagrees -- with any rows
or estimates, not the recorded ones (the reduction removes rows).  :func:`mtr_check`
writes the comparison as mysqltest lines, so the reduced case fails while the bug is
there: the statements that rebuilt the oracle's tables, then each compared statement run
unchanged by the mysql client and its rows compared, sorted as text, with the first
statement's (:mod:`lib.hunt.wrongresult.rowsform`: no CTE or digest wrapped around a
statement, whose materialisation changed what it read), then the rebuilt tables dropped;
NoREC's two counts compared as numbers.  Rows compare as the server sends them in text,
so a case may still fail on a value's form the oracle reads as the same (a float's last
digits): it never passes while the oracle disagrees.  DQE's, CERT's and Pinolo's
comparisons are of rows touched, of estimates and of one statement's rows within
another's: lib/hunt/wrongresult/checkforms.py writes the first two, from what the judging
saw (``Rebuilt.seen``: DQE's copy, CERT's plans), lib/hunt/wrongresult/withinform.py
Pinolo's (``Q`` within ``Q+``, ``Q-`` within ``Q``: multisets of the client's sorted rows,
or counts; the variant judged, ``seen``).

Not replayable (:func:`not_replayable` says why): the differential oracle (reduced on its
compare topology by lib/reduce itself; its case's check is rowsform's too:
:func:`lib.hunt.wrongresult.rowsform.expected_lines`) and any name that is no oracle of
this package.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

from .checkforms import cert_lines, dqe_lines
from .execute import Outcome
from .oracle import Check, OracleBase, Rebuilt, Sessions
from .registry import wrong_result_oracles
from .rowsform import compare_lines
from .withinform import pinolo_lines

# oracle -> the statements compared with the first (by index; -1: the last)
COMPARED: Mapping[str, tuple[int, ...]] = MappingProxyType({
    "tlp": (1,), "norec": (1,), "eet": (1,), "coddtest": (-1,), "dqp": (),  # dqp: every one
    "tlp-aggregate": (1,), "tlp-distinct": (1,), "tlp-groupby": (1,), "tlp-having": (1,),
    "radar": (1,),
})
# oracle -> its comparison's mysqltest form, of checkforms.py and withinform.py (not one
# statement's rows against another's)
OWN_FORMS: Mapping[str, Callable[[Sequence[str], Rebuilt, str], list[str]]] = \
    MappingProxyType({"dqe": dqe_lines, "cert": cert_lines, "pinolo": pinolo_lines})
REPLAYABLE = frozenset(COMPARED) | frozenset(OWN_FORMS)
_KINDS: Mapping[str, str] = MappingProxyType({"cert": "performance"})
_VARIANT_RE = re.compile(r"^[\w-]+ \(([\w-]+)\):")
REPLAY_TIMEOUT = 20.0   # seconds: max_statement_time of the statements judged again


def not_replayable(oracle: str) -> str:
    """Why an oracle's findings cannot be judged again after a replay ('' when they can)."""
    if oracle in REPLAYABLE:
        return ""
    return "it is no oracle of lib/hunt/wrongresult"


def finding_kind(oracle: str) -> str:
    """The kind of an oracle's findings: ``performance`` for CERT's (a row estimate),
    ``wrong-result`` for the others'."""
    return _KINDS.get(oracle, "wrong-result")


def variant_of(detail: str) -> str:
    """The check's variant from a finding's detail (``EET (aggregate): ...``), '' if none."""
    m = _VARIANT_RE.match(detail)
    return m.group(1) if m else ""


@dataclass(frozen=True)
class JudgedAgain:
    """A finding's statements judged again: does the oracle still disagree, and what it
    built again to run them (:class:`~lib.hunt.wrongresult.oracle.Rebuilt`)."""

    differs: bool
    rebuilt: Rebuilt = field(default_factory=Rebuilt)


def judge_again(conn: Any, oracle: str, queries: Sequence[str], detail: str = "") -> JudgedAgain:
    """Run the finding's statements on conn (a DB-API connection to the replayed server),
    after what the oracle builds for them, and judge them with the oracle's own
    comparison (see the module docstring).  A statement that fails (the candidate lost
    a table it reads, a copy could not be made) is no disagreement."""
    if oracle not in REPLAYABLE:
        raise ValueError(f"the {oracle} oracle's findings cannot be judged again: "
                         f"{not_replayable(oracle)}")
    (judge,) = wrong_result_oracles([oracle])
    assert isinstance(judge, OracleBase)
    check = Check(tuple(queries), variant_of(detail))
    with Sessions([conn], REPLAY_TIMEOUT):
        try:
            rebuilt = judge.rebuild([conn], check.queries)
            outcomes: list[Outcome] = (judge.execute([conn], check) if oracle in OWN_FORMS
                                       else OracleBase.execute(judge, [conn], check))
            verdict = judge.verdict(check, outcomes)
            seen = judge.seen(check, outcomes) if verdict.kind == "differ" else ()
        finally:
            judge.finish([conn])
    return JudgedAgain(verdict.kind == "differ",
                       Rebuilt(rebuilt.statements, rebuilt.undo, seen))


def mtr_check(oracle: str, queries: Sequence[str], delimiter: str = ";",
              rebuilt: Rebuilt = Rebuilt()) -> list[str]:
    """mysqltest lines that die while the oracle's comparison of queries still disagrees
    ([] when it has no such form: the oracle is not replayable).  What the oracle rebuilt
    for them is built first and undone last (rebuilt); DQE's and CERT's comparisons are
    checkforms.py's, Pinolo's withinform.py's, NoREC's two counts are read into variables and compared as numbers,
    the others' rows are compared by :func:`lib.hunt.wrongresult.rowsform.compare_lines`:
    each statement run unchanged (a DQP plan's ``SET STATEMENT`` and modifiers as the oracle
    sent them), nothing wrapped around it."""
    if oracle in OWN_FORMS:
        return OWN_FORMS[oracle](queries, rebuilt, delimiter)
    if oracle not in REPLAYABLE or len(queries) < 2:
        return []
    texts = [q.strip().rstrip(";") for q in queries]
    lines = ["", f"# the wrong result ({oracle}): the statements compared must agree"]
    if rebuilt.statements:
        lines += [f"# what the {oracle} oracle built for them, as the reduction built it"]
        lines += [sql + delimiter for sql in rebuilt.statements]
    if oracle == "norec":
        # each count read as the statement gives it (a NULL sum reads NULL: 0), compared
        # as numbers
        lines += [f"let $kw_n1= `{texts[0]}`{delimiter}", f"let $kw_n2= `{texts[1]}`{delimiter}",
                  f"let $kw_same= `SELECT IFNULL(NULLIF('$kw_n1', 'NULL'), 0) + 0 = "
                  f"IFNULL(NULLIF('$kw_n2', 'NULL'), 0) + 0`{delimiter}",
                  "if (!$kw_same)", "{", f"  --die wrong result ({oracle}): the counts differ",
                  "}"]
        return lines + [sql + delimiter for sql in rebuilt.undo]
    picks = [i % len(texts) for i in COMPARED[oracle]] or list(range(1, len(texts)))
    return lines + compare_lines(oracle, texts, picks) + [sql + delimiter
                                                          for sql in rebuilt.undo]
