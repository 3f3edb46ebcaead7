"""Which queued replay a free bot takes next: one that its server already serves.

A bot keeps a server per code tree; a reproducer with other server options than
the last one's needs a fresh server.  The replay's jobs are sorted tree by tree
and, within a tree, by options, so a group of reproducers of the same options
is contiguous; handed out in plain queue order, two bots leapfrog through a
group and each starts a server for it.  :func:`next_job` keeps a bot on its
group instead:

1. the first queued job of the bot's own group (the tree and options of its last
   job): its server serves it;
2. else the first job of a group no other busy bot is on (a fresh server either
   way, and none started twice);
3. else the first queued job.
"""
from __future__ import annotations

from typing import AbstractSet, Hashable, Mapping, Sequence


def next_job(queue: Sequence[int], group_of: Mapping[int, Hashable], mine: Hashable | None,
             others: AbstractSet[Hashable]) -> int:
    """The position in queue (job indexes, not empty) of the job a free bot takes:
    ``group_of`` gives each job's group, ``mine`` is the bot's last group (None before
    its first job), ``others`` the groups the other busy bots are on."""
    if mine is not None:
        for position, job in enumerate(queue):
            if group_of[job] == mine:
                return position
    for position, job in enumerate(queue):
        if group_of[job] not in others:
            return position
    return 0


class Lanes:
    """Which free bot replays which queued job, with ``lanes`` replays at work at once.

    A busy bot whose reproducer only waits (a ``SLEEP``, a lock wait:
    :mod:`lib.replay.waits`) is told :meth:`waits` and does not count: another bot may
    take a job meanwhile, so the run keeps more bots than lanes (lib/modes/replay/run.py).
    Free bots are served in the order given, so while no reproducer waits the first
    ``lanes`` bots do all the work (and keep their servers); each takes a job by
    :func:`next_job`.
    """

    def __init__(self, group_of: Mapping[int, Hashable], lanes: int) -> None:
        self.group_of = dict(group_of)
        self.lanes = lanes
        self.queue = sorted(self.group_of)
        self.busy: dict[str, int] = {}       # bot -> its job
        self.idle: set[str] = set()          # busy bots whose reproducer waits
        self.last: dict[str, Hashable] = {}  # bot -> its last job's group
        self.most_at_once = 0                # the most busy bots at one time

    def working(self) -> int:
        """Busy bots whose reproducer works (or whose waits are not known)."""
        return len(self.busy) - len(self.idle & set(self.busy))

    def assign(self, bots: Sequence[str]) -> list[tuple[str, int]]:
        """Jobs for free bots of bots while fewer than ``lanes`` work: (bot, job) pairs."""
        out: list[tuple[str, int]] = []
        for bot in bots:
            if bot in self.busy or not self.queue or self.working() >= self.lanes:
                continue
            others = {self.group_of[i] for i in self.busy.values()}
            index = self.queue.pop(next_job(self.queue, self.group_of, self.last.get(bot),
                                            others))
            self.busy[bot] = index
            self.last[bot] = self.group_of[index]
            out.append((bot, index))
        self.most_at_once = max(self.most_at_once, len(self.busy))
        return out

    def waits(self, bot: str, idle: bool) -> None:
        """bot's reproducer waits (idle) or works again."""
        if idle and bot in self.busy:
            self.idle.add(bot)
        else:
            self.idle.discard(bot)

    def finished(self, bot: str) -> int:
        """bot is free again; the job it did."""
        self.idle.discard(bot)
        return self.busy.pop(bot)
