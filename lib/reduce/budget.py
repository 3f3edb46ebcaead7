"""How long one candidate's replay may take: the per-replay time cap of a reduction.

A reduction's candidates are subsets (or edits) of a case that reproduced, so a
candidate's replay should take about as long as that case's did, or less.  One
that takes far longer is waiting (on a lock, on a statement that lost the index
it had) and its answer is not worth the time: a :class:`ReplayBudget` gives each
try a cap, and a try past it stops before its next statement and counts as "does
not fail" (the safe answer: a candidate is dropped, never a statement wrongly).

- Before any try reproduced, the cap is ``start_factor`` times the trial's own
  wall time as traced (the trace's first to last statement), at least
  ``start_floor`` seconds: a serial replay of a multi-threaded load takes longer
  than the load did;
- after a try reproduced in ``s`` seconds, the cap is ``factor * s``, at least
  ``floor`` seconds: generous, because the machine's load swings (a reduction at
  ``nice 19`` on a loaded machine saw a smaller candidate take 4 times as long as
  the case it came from) and a wrongly stopped try costs reduction, while what the
  cap is for -- a replay stuck for many minutes -- stays cut;
- with no traced time and no reproducing try yet there is no cap.

One budget is shared by every bot of a reduction (``--reduce-parallel``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ReplayBudget:
    """The per-replay time cap (module docstring)."""

    traced_seconds: float = 0.0     # the trial's wall time as traced (0: unknown)
    start_factor: float = 10.0
    start_floor: float = 600.0
    factor: float = 10.0
    floor: float = 300.0
    reference: float = 0.0          # seconds of the last try that reproduced (0: none yet)
    timed_out: int = 0              # tries stopped at their cap

    def cap(self) -> float | None:
        """Seconds a try may take now, or None for no cap."""
        if self.reference > 0:
            return max(self.floor, self.factor * self.reference)
        if self.traced_seconds > 0:
            return max(self.start_floor, self.start_factor * self.traced_seconds)
        return None

    def reproduced(self, seconds: float) -> None:
        """A try reproduced in this many seconds: the next caps are measured on it."""
        if seconds > 0:
            self.reference = seconds

    def stopped(self) -> None:
        """A try reached its cap."""
        self.timed_out += 1
