"""A checker's answer: valid, invalid or unknown, with the evidence behind it."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from .oplog import Counts

EVIDENCE_SHOWN = 15


class VerdictStatus(StrEnum):
    """A checker's conclusion; reports show it upper-cased (``append: INVALID``)."""

    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"

    @property
    def valid(self) -> bool:
        """The invariant held (unknown is not valid)."""
        return self is VerdictStatus.VALID

    @property
    def invalid(self) -> bool:
        """The invariant was broken: there is evidence against it."""
        return self is VerdictStatus.INVALID


VALID, INVALID, UNKNOWN_VERDICT = VerdictStatus.VALID, VerdictStatus.INVALID, VerdictStatus.UNKNOWN


@dataclass
class Verdict:
    """What a checker concluded (``status``), why (``summary``), and the proof.

    ``evidence`` names the operations, tables and rows that break the
    invariant; ``counts`` are the workload's ok / fail / unknown operations
    (None for checks of server state alone).
    """

    checker: str
    status: VerdictStatus
    summary: str
    evidence: list[str] = field(default_factory=list)
    counts: Counts | None = None
    history_file: str = ""

    def __post_init__(self) -> None:
        self.status = VerdictStatus(self.status)

    @property
    def valid(self) -> bool:
        """True only for ``valid`` (unknown is not valid)."""
        return VerdictStatus(self.status).valid

    @property
    def invalid(self) -> bool:
        """True for ``invalid``."""
        return VerdictStatus(self.status).invalid

    def report(self, shown: int = EVIDENCE_SHOWN) -> str:
        """A few lines for a test report: verdict, counts, the first pieces of evidence."""
        ops = f" (ops: {self.counts})" if self.counts is not None else ""
        lines = [f"{self.checker}: {self.status.upper()}{ops}: {self.summary}"]
        lines += [f"  {e}" for e in self.evidence[:shown]]
        if len(self.evidence) > shown:
            lines.append(f"  ... {len(self.evidence) - shown} more")
        if self.history_file and not self.valid:  # a passing test's history is removed
            lines.append(f"  history: {self.history_file}")
        return "\n".join(lines)

    __str__ = report


def combine(checker: str, verdicts: list[Verdict]) -> Verdict:
    """One verdict for several: invalid if any is, else unknown if any is (or if there
    is none), else valid; the operation counts are summed."""
    if any(v.invalid for v in verdicts):
        status = VerdictStatus.INVALID
    elif verdicts and all(v.valid for v in verdicts):
        status = VerdictStatus.VALID
    else:
        status = VerdictStatus.UNKNOWN
    bad = [v for v in verdicts if not v.valid]
    summary = "; ".join(f"{v.checker}: {v.summary}" for v in (bad or verdicts)) or "nothing checked"
    evidence = [e for v in verdicts for e in v.evidence]
    counted = [v.counts for v in verdicts if v.counts is not None]
    counts = None
    if counted:
        counts = Counts(sum(c.ok for c in counted), sum(c.fail for c in counted),
                        sum(c.unknown for c in counted))
    return Verdict(checker, status, summary, evidence, counts)
