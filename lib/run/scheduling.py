"""Which test runs where: shards across CI agents, order and affinity within a run
(``pick_next``), and the bots' schedule (``BotSchedule``: what each bot runs next and
the tests announced to it)."""
from __future__ import annotations

from typing import Callable, Hashable, Iterable, Sequence, TypeVar

from ..errors import UsageError

T = TypeVar("T")


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` with 1 <= K <= N; UsageError otherwise."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise UsageError(f"--shard {text!r}: expected K/N, e.g. 2/3") from None
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"--shard {text!r}: K must be between 1 and N")
    return k, n


def shard(items: Sequence[T], k: int, n: int, name: Callable[[T], str],
          weight: Callable[[T], float]) -> list[T]:
    """The K-th of N disjoint slices that together cover items.

    Deterministic: items are sorted by weight (descending) then name, and each
    goes to the lightest slice so far (ties to the lowest slice number).  With
    equal weights this deals the sorted names round-robin.  Every shard must be
    given the same weights (the same timings file, or none) to partition.
    """
    loads = [0.0] * n
    chosen: list[T] = []
    for item in sorted(items, key=lambda i: (-weight(i), name(i))):
        slot = min(range(n), key=lambda s: (loads[s], s))
        loads[slot] += weight(item)
        if slot == k - 1:
            chosen.append(item)
    order = {id(item): i for i, item in enumerate(items)}
    return sorted(chosen, key=lambda item: order[id(item)])


def pick_next(pending: Sequence[T], affinity: Hashable | None, key: Callable[[T], Hashable],
              weight: Callable[[T], float], busy_keys: Sequence[Hashable] = ()) -> int:
    """Index in pending of the test a free bot should run next.

    First a test needing the servers the bot already has (longest first), then
    one whose servers no other bot is using (longest first), then the longest.
    """
    if not pending:
        raise ValueError("nothing pending")
    indexes = range(len(pending))
    same = [i for i in indexes if affinity is not None and key(pending[i]) == affinity]
    if same:
        return max(same, key=lambda i: (weight(pending[i]), -i))
    fresh = [i for i in indexes if key(pending[i]) not in busy_keys]
    pool = fresh or list(indexes)
    return max(pool, key=lambda i: (weight(pending[i]), -i))


class BotSchedule:
    """Which test each bot of a pool runs next, and which are announced to it.

    Tests are indexes into the run's queue; ``keys[i]`` names the servers test i needs
    (tests with equal keys can share servers) and ``weights[i]`` its expected duration.
    A free bot is given a test by ``assign`` (the one announced to it if still pending,
    else ``pick_next``'s choice), and with it the test it will get after that
    (``upcoming``) and, when that one is the last its servers serve, the one after it
    (``later``), so that it can prepare their servers while the test runs.
    """

    def __init__(self, keys: Sequence[Hashable], weights: Sequence[float],
                 bots: Iterable[str]) -> None:
        self.keys = list(keys)
        self.weights = list(weights)
        self.bots = list(bots)  # the bots alive
        self.pending = list(range(len(self.keys)))
        self.busy: dict[str, int] = {}  # bot -> the test it runs
        self.affinity: dict[str, Hashable | None] = {bot: None for bot in self.bots}
        self.upcoming: dict[str, int | None] = {bot: None for bot in self.bots}
        self.later: dict[str, int | None] = {bot: None for bot in self.bots}  # after upcoming

    def assign(self, bot: str) -> int:
        """The test free bot runs now (taken from pending, bot busy with it), after
        which ``upcoming[bot]`` and ``later[bot]`` name the tests announced to it."""
        first = self._choose(bot, self.affinity[bot])
        assert first is not None
        index = self.pending.pop(first)
        self.busy[bot] = index
        # announced in advance, so that the bot can prepare its servers
        following = (self._choose(bot, self.keys[index], announcing=True)
                     if self.pending else None)
        self.upcoming[bot] = self.later[bot] = None
        if following is not None:
            self.upcoming[bot] = self.pending[following]
            self.later[bot] = self._look_ahead(bot, index, self.pending[following])
        return index

    def finished(self, bot: str, current: Hashable | None) -> int:
        """Bot is free again, its servers now serving current; returns the test it ran."""
        self.affinity[bot] = current
        return self.busy.pop(bot)

    def drop(self, bot: str) -> None:
        """Bot is gone (its worker died): nothing more is announced to it or kept for it."""
        self.bots.remove(bot)

    def _promised_elsewhere(self, bot: str) -> set[int]:
        """The tests announced to the other bots (next or later): theirs to run."""
        return {i for b in self.bots if b != bot for i in (self.upcoming[b], self.later[b])
                if i is not None}

    def _choose(self, bot: str, after: Hashable | None, announcing: bool = False,
                exclude: tuple[int, ...] = ()) -> int | None:
        """Index in pending (not empty) of bot's next test when its servers serve
        after: the one announced to it if still pending, else pick_next's choice among
        the tests not announced to another bot nor in exclude (to run: all of them
        when only those are left; to announce: None then, so that no two bots prepare
        servers for the same test, competing for the CPU, when one of them will not
        run it)."""
        pending = self.pending
        announced = self.upcoming[bot]
        if not announcing and announced is not None and announced in pending:
            return pending.index(announced)
        promised_later = self.later[bot]
        if announcing and promised_later is not None and promised_later in pending:
            return pending.index(promised_later)  # promised with the test before it
        promised = self._promised_elsewhere(bot)
        free = [i for i in pending if i not in promised and i not in exclude]
        if not free:
            if announcing:
                return None
            free = pending
        busy_keys = [self.keys[i] for b, i in self.busy.items() if b != bot]
        picked = pick_next(free, after, self.keys.__getitem__, self.weights.__getitem__,
                           busy_keys)
        return pending.index(free[picked])

    def _look_ahead(self, bot: str, index: int, next_index: int) -> int | None:
        """The test bot will run after next_index, announced too so that its servers
        start while index runs (a short test between them, such as a skip, would leave
        them no time): when next_index is the last pending test index's servers serve
        (tests announced to other bots are theirs, and so is one more for each other
        bot running on such servers) and the one after needs other servers.  None
        otherwise, and when promising it would leave another bot nothing of its own
        to run next."""
        keys, pending = self.keys, self.pending
        others = self._promised_elsewhere(bot)
        # same-key tests still free: one each is left to the other bots serving that
        # key (they take those first), so they do not keep this bot from looking ahead
        same_left = [i for i in pending if i != next_index and i not in others
                     and keys[i] == keys[index]]
        sharing = sum(1 for b, i in self.busy.items() if b != bot and keys[i] == keys[index])
        if keys[next_index] != keys[index] or len(same_left) > sharing:
            return None
        after = self._choose(bot, keys[next_index], announcing=True,
                             exclude=(next_index, *same_left))
        if after is None or keys[pending[after]] == keys[index]:
            return None
        # near the end, a test is promised no further ahead than the other bots need:
        # each should still find one to run (and prepare) rather than take this one
        left = [i for i in pending if i not in others
                and i not in (next_index, pending[after])]
        if len(left) < len(self.bots) - 1:
            return None
        return pending[after]
