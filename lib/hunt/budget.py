"""The hunt's ``--duration`` kept: the trials' loads are cut so that their checks fit.

A trial is its servers (started or reused), its load, then the oracles' checks
(health, wrong results, divergence, the error log) and its findings written.
``--duration`` covers all of it: :class:`TrialClock` gives the next trial's
load what is left of the budget less a reserve for what comes after a load --
the longest such tail a trial of this hunt has taken so far
(:meth:`TrialClock.note`), :data:`CHECK_RESERVE` before any has been
measured -- and no trial starts that could not load for ``MIN_TRIAL`` seconds.
Inside a trial, a check that cannot fit in what is left (:func:`fits`) is
skipped, and the trial says so (``TrialResult.skipped``); a wrong-result oracle
that started in time runs on connections that end it at the deadline
(:class:`DeadlineConnection`: its checks so far and their findings kept, its
statistics saying it was cut short).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..platform.logsetup import get_logger
from .wrongresult.errors import ServerLostError

CHECK_RESERVE = 15.0    # seconds kept for a trial's checks before a trial has measured them
MIN_CHECK = 3.0         # seconds a check (an oracle, the replicas' wait) needs to start
MIN_TRIAL = 5.0         # seconds: a --duration budget starts no shorter trial


def load_seconds(left: float, trial_duration: float, reserve: float,
                 min_trial: float = MIN_TRIAL) -> float | None:
    """How long the next trial's load may run: trial_duration, cut so that reserve
    seconds stay for its checks out of left; None when that leaves less than a trial's
    minimum (the budget is spent)."""
    load = min(trial_duration, left - reserve)
    if load < min(min_trial, trial_duration):
        return None
    return load


def left_of(deadline: float | None, now: float | None = None) -> float:
    """Seconds until deadline (a ``time.monotonic()`` value; None: no budget, infinite)."""
    if deadline is None:
        return float("inf")
    return deadline - (time.monotonic() if now is None else now)


def fits(deadline: float | None, needs: float = MIN_CHECK, now: float | None = None) -> bool:
    """Whether a check that needs some seconds fits before deadline."""
    return left_of(deadline, now) >= needs


@dataclass
class Checks:
    """What a trial's checks may take: the hunt's deadline (None: no --duration), and the
    checks skipped for it, by name."""

    deadline: float | None = None
    skipped: list[str] = field(default_factory=list)

    def left(self) -> float:
        """Seconds left for the checks (infinite without --duration)."""
        return left_of(self.deadline)

    def fit(self, name: str, trial: int, needs: float = MIN_CHECK) -> bool:
        """Whether the check name fits; when not, it is skipped and said so."""
        if fits(self.deadline, needs):
            return True
        self.skipped.append(name)
        get_logger().warning(f"trial {trial}: {name} skipped: the --duration budget has "
                             f"{max(0.0, self.left()):.1f}s left, the check needs {needs:g}s")
        return False


BUDGET_SPENT = "the --duration budget is spent"


class BudgetSpentError(ServerLostError):
    """A statement a wrong-result oracle would send after the hunt's deadline: the oracle
    ends as it ends on a lost connection, keeping its findings (no finding of its own)."""


class _DeadlineCursor:
    """A cursor whose execute refuses to start after the deadline."""

    def __init__(self, cursor: Any, deadline: float) -> None:
        self._cursor = cursor
        self._deadline = deadline

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        """The cursor's execute, before the deadline; BudgetSpentError after it."""
        if time.monotonic() >= self._deadline:
            raise BudgetSpentError(BUDGET_SPENT)
        return self._cursor.execute(*args, **kwargs)

    def __enter__(self) -> "_DeadlineCursor":
        self._cursor.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        return self._cursor.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


class DeadlineConnection:
    """A DB-API connection whose cursors send nothing after the deadline (the rest is the
    connection's own)."""

    def __init__(self, conn: Any, deadline: float) -> None:
        self._conn = conn
        self._deadline = deadline

    def cursor(self, *args: Any, **kwargs: Any) -> _DeadlineCursor:
        """A cursor of the connection, held to the deadline."""
        return _DeadlineCursor(self._conn.cursor(*args, **kwargs), self._deadline)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class TrialClock:
    """The hunt's budget in time: its deadline, and the reserve a trial's checks need."""

    def __init__(self, duration: float, trial_duration: float,
                 now: float | None = None) -> None:
        start = time.monotonic() if now is None else now
        self.deadline: float | None = start + duration if duration else None
        self.trial_duration = trial_duration
        self.reserve = CHECK_RESERVE
        self.measured = False

    def note(self, trial_seconds: float, load_seconds: float) -> None:
        """A finished trial: what it took besides its load (servers, checks, findings)."""
        tail = max(0.0, trial_seconds - load_seconds)
        self.reserve = tail if not self.measured else max(self.reserve, tail)
        self.measured = True

    def next_load(self, now: float | None = None) -> float | None:
        """The next trial's load in seconds, None when the budget is spent."""
        if self.deadline is None:
            return self.trial_duration
        return load_seconds(left_of(self.deadline, now), self.trial_duration, self.reserve)
