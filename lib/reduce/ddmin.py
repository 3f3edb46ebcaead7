"""Delta debugging (Zeller and Hildebrandt's ddmin) over a list, and the statement-level
reductions built on it.

:func:`ddmin` takes items and a ``fails(candidate) -> bool`` test and returns a
1-minimal failing sublist (removing any one item makes it pass), keeping the
items' order.  It first tries each of ``n`` chunks alone, then each complement,
doubling ``n`` when neither fails.  Candidates already answered are not asked
again (the answers are cached by the tuple of item indexes).

:func:`ddmin_groups` runs ddmin over groups of items that go or stay together
(a connection's statements, every statement of one shape): few candidates
remove most of a long trace before ddmin runs over the statements left.
Items are kept in trace order, so every candidate keeps each connection's own
statement order.
"""
from __future__ import annotations

from typing import Callable, Generic, Hashable, Sequence, TypeVar

T = TypeVar("T")


class Cached(Generic[T]):
    """A test whose answers are remembered by the candidate's item indexes."""

    def __init__(self, items: Sequence[T], fails: Callable[[Sequence[T]], bool]) -> None:
        self.items = list(items)
        self.fails = fails
        self.answers: dict[tuple[int, ...], bool] = {}
        self.asked = 0

    def __call__(self, indexes: Sequence[int]) -> bool:
        """Does the candidate made of these indexes (ascending) still fail?"""
        key = tuple(indexes)
        if key not in self.answers:
            self.asked += 1
            self.answers[key] = bool(self.fails([self.items[i] for i in key]))
        return self.answers[key]


def _chunks(indexes: list[int], n: int) -> list[list[int]]:
    size, extra = divmod(len(indexes), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        if end > start:
            out.append(indexes[start:end])
        start = end
    return out


def ddmin(items: Sequence[T], fails: Callable[[Sequence[T]], bool],
          on_smaller: Callable[[Sequence[T]], None] | None = None) -> list[T]:
    """A 1-minimal sublist of items (order kept) for which fails() holds; items must fail.

    on_smaller is told every smaller failing candidate (progress, resume)."""
    test: Cached[T] = Cached(items, fails)
    current = list(range(len(items)))
    n = 2
    while len(current) >= 2:
        chunks = _chunks(current, min(n, len(current)))
        reduced = False
        for chunk in chunks:                      # a chunk alone
            if len(chunk) < len(current) and test(chunk):
                current, n, reduced = chunk, 2, True
                break
        if not reduced and len(chunks) > 2:       # a complement
            for chunk in chunks:
                rest = [i for i in current if i not in set(chunk)]
                if test(rest):
                    current, n, reduced = rest, max(len(chunks) - 1, 2), True
                    break
        if reduced:
            if on_smaller is not None:
                on_smaller([test.items[i] for i in current])
            continue
        if n >= len(current):
            break
        n = min(len(current), 2 * n)
    return [test.items[i] for i in current]


def ddmin_groups(items: Sequence[T], key: Callable[[T], Hashable],
                fails: Callable[[Sequence[T]], bool],
                on_smaller: Callable[[Sequence[T]], None] | None = None) -> list[T]:
    """ddmin over groups of items (all the items with one key go or stay together: a
    connection, a statement shape); the items that are left, in their first order."""
    groups: dict[Hashable, list[int]] = {}
    for index, item in enumerate(items):
        groups.setdefault(key(item), []).append(index)
    if len(groups) < 2:
        return list(items)
    keys = list(groups)

    def flat(chosen: Sequence[Hashable]) -> list[T]:
        """The items of the chosen groups, in their first order."""
        return [items[i] for i in sorted(i for k in chosen for i in groups[k])]

    def told(chosen: Sequence[Hashable]) -> None:
        """Pass a smaller failing candidate on, as items."""
        if on_smaller is not None:
            on_smaller(flat(chosen))

    kept = ddmin(keys, lambda chosen: fails(flat(chosen)), told)
    return flat(kept)
