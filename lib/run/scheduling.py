"""Which test runs where: shards across CI agents, order and affinity within a run."""
from __future__ import annotations

from typing import Callable, Hashable, Sequence, TypeVar

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
