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
