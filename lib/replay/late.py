"""The results a replay bot holds back while a late crash could still be theirs.

A reproducer may crash the server a moment after its last statement has returned (a
thread it started, a purge it left behind: MDEV-35492 on 10.11.18).  A crash by the
time its restore is done is its own (lib/replay/execute.py); one that comes later
lands on the kept server while the next reproducer starts or runs on it, or while the
server waits for the run's end.  So the result of a reproducer whose server was kept
is not final at once: the bot holds it (:class:`HeldResults`) for :data:`LATE_WINDOW`
seconds after its end, and releases it when the kept server is found sound after that,
or when the server goes (discarded, replaced after its own crash).  A crash found on the
kept server while results are held -- at the next start, at the run's end, or during the
next reproducer when that one does not crash a fresh server again -- is searched for
among them: each is replayed on a fresh server and watched for the window, newest first,
and the one that crashes gets the crash as its result.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .corpus import Reproducer
    from .execute import ReplayResult

LATE_WINDOW = 3.0    # seconds after a reproducer's end in which a crash may still be its own


@dataclass
class Held:
    """A result held back: the reproducer, its result and when it ended (monotonic)."""

    reproducer: "Reproducer"
    result: "ReplayResult"
    ended: float


@dataclass
class HeldResults:
    """The held results of one bot, per code tree (its kept server), and the results
    ready to be handed to the run."""

    clock: Callable[[], float] = time.monotonic
    held: dict[str, list[Held]] = field(default_factory=dict)
    ready: list["ReplayResult"] = field(default_factory=list)

    def hold(self, tree: str, reproducer: "Reproducer", result: "ReplayResult") -> None:
        """Hold a result whose kept server may still crash of it."""
        self.held.setdefault(tree, []).append(Held(reproducer, result, self.clock()))

    def done(self, result: "ReplayResult") -> None:
        """A final result."""
        self.ready.append(result)

    def candidates(self, tree: str) -> list[Held]:
        """The held results of tree, newest first."""
        return list(reversed(self.held.get(tree, [])))

    def release(self, tree: str, settled_only: bool = False) -> None:
        """Make tree's held results final: all of them, or (settled_only) those whose
        window has passed (their server was found sound after it)."""
        now = self.clock()
        keep = [h for h in self.held.get(tree, []) if settled_only and
                now - h.ended < LATE_WINDOW]
        self.ready += [h.result for h in self.held.get(tree, []) if h not in keep]
        self.held[tree] = keep

    def replace(self, tree: str, old: "ReplayResult", new: "ReplayResult") -> None:
        """A held result of tree replaced (the late crash found to be its)."""
        for held in self.held.get(tree, []):
            if held.result is old:
                held.result = new

    def remaining(self, tree: str) -> float:
        """Seconds until every held result of tree has passed its window (0 when none)."""
        ends = [h.ended for h in self.held.get(tree, [])]
        return max(0.0, max(ends) + LATE_WINDOW - self.clock()) if ends else 0.0

    def take(self) -> list["ReplayResult"]:
        """The results ready, handed over once."""
        out, self.ready = self.ready, []
        return out
