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

A round's candidates (the chunks, then the complements) can be checked at once:
when the test has a ``first(candidates)`` method (a :class:`Batched` test, e.g.
the parallel check of :mod:`.parallel`), ddmin hands it the round's unanswered
candidates and it returns the index of the first that fails *in the serial
order* -- the one a one-at-a-time ddmin would have taken -- so the result is the
same whatever checks ran at once.  :func:`first_failing` is that question for any
test (one candidate after the other when it has no ``first``).
"""
from __future__ import annotations

from typing import Any, Callable, Generic, Hashable, Sequence, TypeVar

T = TypeVar("T")
U = TypeVar("U")
First = Callable[[Sequence[Sequence[Any]]], "int | None"]


def first_failing(fails: Callable[[Sequence[T]], bool],
                  candidates: Sequence[Sequence[T]]) -> int | None:
    """The index of the first candidate (in their order) that fails, or None: through
    the test's ``first`` when it has one (several checked at once, the same answer),
    else one after the other."""
    batch: First | None = getattr(fails, "first", None)
    if batch is not None:
        return batch(candidates)
    for index, candidate in enumerate(candidates):
        if fails(candidate):
            return index
    return None


class Batched(Generic[T]):
    """A fails test with a batch form: ``first(candidates)`` answers "which is the first
    that fails" for several candidates at once (see :func:`first_failing`)."""

    def __init__(self, fails: Callable[[Sequence[T]], bool],
                 first: Callable[[Sequence[Sequence[T]]], int | None]) -> None:
        self.fails = fails
        self.first = first

    def __call__(self, candidate: Sequence[T]) -> bool:
        """Does this one candidate fail?"""
        return self.fails(candidate)


def mapped(fails: Callable[[Sequence[U]], bool], to: Callable[[Sequence[T]], Sequence[U]]
           ) -> Callable[[Sequence[T]], bool]:
    """A test over T candidates made from a test over U candidates (each candidate
    mapped by ``to``), keeping its batch form when it has one."""
    def one(candidate: Sequence[T]) -> bool:
        """The mapped candidate's answer."""
        return fails(to(candidate))
    if getattr(fails, "first", None) is None:
        return one
    return Batched(one, lambda cands: first_failing(fails, [to(c) for c in cands]))


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

    def first(self, candidates: Sequence[Sequence[int]]) -> int | None:
        """The index of the first candidate (index lists) that fails, in their order, as
        asking them one after the other would find it; the unanswered ones before the
        first known failing one go to the test together (its ``first`` when it has
        one), and only the answers that decide are remembered."""
        keys = [tuple(c) for c in candidates]
        stop = next((n for n, k in enumerate(keys) if self.answers.get(k)), len(keys))
        todo = [n for n in range(stop) if keys[n] not in self.answers]
        if todo:
            found = first_failing(self.fails, [[self.items[i] for i in keys[n]] for n in todo])
            self.asked += len(todo) if found is None else found + 1
            for position, n in enumerate(todo):
                if found is not None and position > found:
                    break
                self.answers[keys[n]] = found == position
            if found is not None:
                return todo[found]
        return stop if stop < len(keys) else None


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
        alone = [chunk for chunk in chunks if len(chunk) < len(current)]
        hit = test.first(alone)                   # a chunk alone
        if hit is not None:
            current, n, reduced = alone[hit], 2, True
        if not reduced and len(chunks) > 2:       # a complement
            rests = [[i for i in current if i not in set(chunk)] for chunk in chunks]
            hit = test.first(rests)
            if hit is not None:
                current, n, reduced = rests[hit], max(len(chunks) - 1, 2), True
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

    kept = ddmin(keys, mapped(fails, flat), told)
    return flat(kept)
