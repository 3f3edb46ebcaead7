"""The triage table of ``--mode=reduce RUN``: one row per signature of a hunt's run, what
its reduction gave, as ``triage.json`` and a short ``triage.md`` (docs/hunting.md,
"Reducing a whole run").

A row says the signature's kind and oracle, its findings and trials, the finding
reduced, and the result -- one of :data:`RESULTS` -- in words (:attr:`Row.verdict`):
``reduced N -> M statements`` with the confirmation's per-tree presence, ``not
reproducible: <why>``, ``stopped at the cap``, ``skipped: known <bug>``, ``not
reducible: <why>``, ``failed: <error>``.  A reduction's verdict is read back from its
output folder's files (:func:`finished`: ``reduce.json``, ``not-reproducible.json``), so
a second run shows what the first one finished.  Pure: the caller writes the texts.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from ..errors import EXIT_ENVIRONMENT, EXIT_OK, EXIT_TEST_FAILED
from .attempts import FROM_TRACE
from .runfolder import SignatureGroup, known_bug

FORMAT = "kewpie-reduce-triage/1"
JSON_FILE = "triage.json"
MARKDOWN_FILE = "triage.md"

REDUCED = "reduced"
NOT_REPRODUCIBLE = "not-reproducible"
STOPPED = "stopped"              # at --reduce-timeout: resumes on the next run
INTERRUPTED = "interrupted"      # by a signal: resumes on the next run
FAILED = "failed"                # an error ended it (its message kept)
SKIPPED_KNOWN = "skipped-known"
NOT_REDUCIBLE = "not-reducible"
PENDING = "pending"              # not reached yet
RESULTS = (REDUCED, NOT_REPRODUCIBLE, STOPPED, INTERRUPTED, FAILED, SKIPPED_KNOWN,
           NOT_REDUCIBLE, PENDING)
VERDICTS = frozenset({REDUCED, NOT_REPRODUCIBLE, SKIPPED_KNOWN, NOT_REDUCIBLE})
UNFINISHED = frozenset({STOPPED, INTERRUPTED, FAILED, PENDING})   # reduced on the next run


@dataclass
class Row:
    """One signature of the run and what became of it."""

    signature: str
    kind: str
    oracle: str
    title: str
    findings: int                   # the run's findings of the signature
    trials: list[int]               # the trials that found it
    finding: str                    # the finding reduced (its folder)
    statements: int                 # its trace's statements
    known: str = ""                 # the finding's known bug, in words ('' : new)
    tag: str = "new"                # the finding's tag: new, known, known-fixed
    result: str = PENDING
    verdict: str = "not reduced yet"
    statements_out: int | None = None
    present: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    case: str = ""                  # the reduced mysql-test case
    output: str = ""                # the reduction's output folder
    seconds: float | None = None    # the reduction's own (reduce.json)

    def to_json(self) -> dict[str, Any]:
        """The row as triage.json holds it."""
        return asdict(self)


def row_of(group: SignatureGroup) -> Row:
    """A signature group's row, its result pending."""
    picked = group.picked
    return Row(group.signature, picked.kind, picked.oracle, picked.title, len(group.findings),
               group.trials, picked.folder, picked.statements, known_bug(picked), picked.tag)


def skip_known(row: Row) -> None:
    """The row of a signature skipped as the known bug its finding names."""
    row.result, row.verdict = SKIPPED_KNOWN, f"skipped: known {row.known}"


def not_reducible(row: Row, why: str) -> None:
    """The row of a finding --mode=reduce refuses (its kind, oracle or topology)."""
    row.result, row.verdict = NOT_REDUCIBLE, f"not reducible: {why}"


def unfinished(row: Row, result: str, why: str, output: str) -> None:
    """The row of a reduction that ended without a verdict (stopped, interrupted, failed)."""
    row.result, row.verdict, row.output = result, why, output


def finished(row: Row, output: str, figures: dict[str, Any] | None,
             record: dict[str, Any] | None) -> bool:
    """Fill row from a reduction's output files (``reduce.json``: figures,
    ``not-reproducible.json``: record; None when absent); False when neither says the
    reduction ended."""
    if record is not None:
        state = str(record.get("state") or FROM_TRACE)
        row.result, row.output = NOT_REPRODUCIBLE, output
        row.verdict = state if state.startswith("not reproduc") else f"not reproducible: {state}"
        if figures:   # a case was written but no tool failed it on any tree
            _figures(row, figures)
        return True
    if figures is None:
        return False
    row.result, row.output = REDUCED, output
    _figures(row, figures)
    trees = f"present in {', '.join(row.present) or 'none'}"
    if row.absent:
        trees += f"; absent in {', '.join(row.absent)}"
    row.verdict = f"reduced {figures.get('statements_in')} -> {row.statements_out} " \
                  f"statements; {trees}"
    return True


def _figures(row: Row, figures: dict[str, Any]) -> None:
    """A reduce.json's figures into row."""
    out = figures.get("statements_out")
    row.statements_out = out if isinstance(out, int) else None
    row.present = [str(t) for t in figures.get("present") or ()]
    row.absent = [str(t) for t in figures.get("absent") or ()]
    row.case = str(figures.get("test") or "")
    seconds = figures.get("seconds")
    row.seconds = float(seconds) if isinstance(seconds, (int, float)) else None


def exit_status(rows: Sequence[Row]) -> int:
    """0 when every signature got a verdict; 2 when a reduction failed (an error, as the
    single-finding mode exits 2); else 1 (a reduction stopped at its cap, or not reached)."""
    if any(r.result == FAILED for r in rows):
        return EXIT_ENVIRONMENT
    if any(r.result not in VERDICTS for r in rows):
        return EXIT_TEST_FAILED
    return EXIT_OK


def to_json(run: str, rows: Sequence[Row], settings: dict[str, Any]) -> dict[str, Any]:
    """triage.json: the run, the settings the reductions ran with, the counts by result,
    the rows."""
    counts = {result: sum(1 for r in rows if r.result == result) for result in RESULTS}
    return {"format": FORMAT, "run": run, "settings": settings,
            "signatures": len(rows), "findings": sum(r.findings for r in rows),
            "results": {k: v for k, v in counts.items() if v},
            "exit_status": exit_status(rows), "rows": [r.to_json() for r in rows]}


def markdown(run: str, rows: Sequence[Row]) -> str:
    """triage.md: a line about the run, then the table (one row per signature)."""
    counts = ", ".join(f"{sum(1 for r in rows if r.result == result)} {result}"
                       for result in RESULTS if any(r.result == result for r in rows))
    lines = [f"# Triage of hunt run {run}", "",
             f"{len(rows)} signature{'s' if len(rows) != 1 else ''}, "
             f"{sum(r.findings for r in rows)} finding{'s' if sum(r.findings for r in rows) != 1 else ''}"
             + (f": {counts}" if counts else ""), "",
             "| signature | kind (oracle) | findings (trials) | finding reduced | result | case |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        known = f" [{r.tag}: {r.known}]" if r.known else (f" [{r.tag}]" if r.tag != "new" else "")
        cells = [r.signature, f"{r.kind} ({r.oracle})",
                 f"{r.findings} ({', '.join(str(t) for t in r.trials)})",
                 f"{r.finding.rsplit('/', 1)[-1]} ({r.statements} statements){known}",
                 r.verdict, r.case or "-"]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """A table cell: one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")
