"""Candidates checked at once on several bots (``--reduce-parallel N``).

A :class:`ParallelCheck` holds one :class:`lib.reduce.check.Checker` per bot
(each with its own manager from ``RunEnvironment.make_manager``: leased ports,
its own vardir, tagged processes) and answers the batch question of
:mod:`.ddmin`: *which is the first of these candidates that fails?*

The work is a list of tries in the serial order -- candidate 0's ``trials``
tries, then candidate 1's, ... -- handed to whichever bot is free, so the
tries of one sporadic candidate and the candidates of one ddmin round run at
once.  The answer is the one a one-at-a-time check would give:

- a candidate fails at its first reproducing try (its other tries stop);
- a candidate passes when all of its tries passed;
- the answer is the first candidate, in their order, that fails once every
  candidate before it passed -- so a later candidate that failed first waits
  for the earlier ones, and once a candidate failed, the tries of every later
  one stop (they can no longer be the answer).

A try that is no longer wanted stops before its next statement (a stopped try
signs nothing and counts for neither answer).  On an error or an interrupt
(SIGINT) every try in flight is told to stop and waited for before the
exception goes on, so no thread is left touching a server; the managers are
shut down by their owner (``RunEnvironment.close``).
"""
from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable, Sequence

from .case import Statement
from .check import Checker, Outcome


@dataclass
class _Round:
    """The state of one batch question: which tries were handed out and answered."""

    count: int
    trials: int
    issued: list[int] = field(default_factory=list)
    passed: list[int] = field(default_factory=list)
    failed: dict[int, Outcome] = field(default_factory=dict)
    low: int = -1                   # the lowest candidate seen failing (-1: none yet)
    aborted: bool = False

    def __post_init__(self) -> None:
        self.issued = [0] * self.count
        self.passed = [0] * self.count

    def answer(self) -> tuple[bool, int | None]:
        """(decided, the first failing candidate or None) from the answers so far."""
        for index in range(self.count):
            if index in self.failed:
                return True, index
            if self.passed[index] < self.trials:
                return False, None
        return True, None

    def next_try(self) -> int | None:
        """The candidate whose next try is due (serial order), or None."""
        for index in range(self.count):
            if 0 <= self.low < index:
                return None
            if index not in self.failed and self.issued[index] < self.trials:
                return index
        return None

    def unwanted(self, index: int) -> bool:
        """May a try of this candidate stop (its answer can no longer matter)?"""
        return self.aborted or index in self.failed or 0 <= self.low < index


def _stopper(state: _Round, index: int) -> Callable[[], bool]:
    """The stop question of one try of candidate index."""
    return lambda: state.unwanted(index)


class ParallelCheck:
    """The "still fails?" check over several checkers at once (module docstring)."""

    def __init__(self, checkers: Sequence[Checker]) -> None:
        if not checkers:
            raise ValueError("ParallelCheck needs at least one checker")
        self.checkers = list(checkers)
        self.trials = self.checkers[0].trials
        self.last: Outcome | None = None     # the try that reproduced, of the last answer

    @property
    def runs(self) -> int:
        """Tries made on all bots (stopped ones included)."""
        return sum(c.runs for c in self.checkers)

    def fails(self, statements: Sequence[Statement],
              options: Sequence[Sequence[str]] | None = None) -> bool:
        """Does the candidate still give the finding's signature (its tries spread over
        the bots, stopping at the first that reproduces)?"""
        return self.first([statements], options) == 0

    def first(self, candidates: Sequence[Sequence[Statement]],
              options: Sequence[Sequence[str]] | None = None) -> int | None:
        """The index of the first candidate that fails, as a one-at-a-time check in
        their order would find it; None when none does."""
        state = _Round(len(candidates), self.trials)
        idle = list(self.checkers)
        running: dict[Future[Outcome], tuple[Checker, int]] = {}
        with ThreadPoolExecutor(max_workers=len(self.checkers),
                                thread_name_prefix="reduce") as pool:
            try:
                while True:
                    decided, found = state.answer()
                    if decided:
                        break
                    while idle:
                        index = state.next_try()
                        if index is None:
                            break
                        state.issued[index] += 1
                        checker = idle.pop(0)
                        future = pool.submit(checker.once, candidates[index], options,
                                             _stopper(state, index))
                        running[future] = (checker, index)
                    if not running:   # nothing due, nothing answered: cannot happen
                        raise RuntimeError("reduce: parallel check with no try to wait for")
                    done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=lambda f: running[f][1]):
                        checker, index = running.pop(future)
                        idle.append(checker)
                        outcome = future.result()
                        if outcome.replayed.stopped:
                            continue
                        if checker.reproduces(outcome):
                            state.failed.setdefault(index, outcome)
                            state.low = min(state.failed)
                        else:
                            state.passed[index] += 1
            finally:
                state.aborted = True
                if running:
                    wait(list(running))
        if found is not None:
            self.last = state.failed[found]
        return found
