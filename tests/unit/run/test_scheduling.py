"""Shards, the choice of a bot's next test, and the timings that weigh tests.

Covers: lib/run/scheduling.py, lib/run/timings.py
"""
import random

import pytest

from lib.errors import UsageError
from lib.run.scheduling import parse_shard, pick_next, shard
from lib.run.timings import Timings


NAMES = [f"suite{i % 3}.t{i:02d}_test" for i in range(23)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 30])
def test_shards_partition_the_selection(n):
    weights = {name: random.Random(name).randint(1, 5000) for name in NAMES}
    for weight in (lambda s: 1.0, lambda s: float(weights[s])):
        slices = [shard(NAMES, k, n, str, weight) for k in range(1, n + 1)]
        flat = [name for part in slices for name in part]
        assert sorted(flat) == sorted(NAMES) and len(flat) == len(set(flat))
        # the same slices whatever order the selection came in
        assert [set(part) for part in slices] == \
            [set(shard(list(reversed(NAMES)), k, n, str, weight)) for k in range(1, n + 1)]


def test_shards_balance_by_weight():
    weights = {"a": 100.0, "b": 1.0, "c": 1.0, "d": 98.0}
    parts = [shard(list(weights), k, 2, str, weights.get) for k in (1, 2)]
    assert sorted(sum(weights[x] for x in part) for part in parts) == [100.0, 100.0]


def test_shard_keeps_selection_order():
    assert shard(["z", "a", "m"], 1, 1, str, lambda s: 1.0) == ["z", "a", "m"]


@pytest.mark.parametrize("bad", ["0/3", "4/3", "a/b", "3", "1/0", ""])
def test_parse_shard_rejects(bad):
    with pytest.raises(UsageError):
        parse_shard(bad)


def test_pick_next_prefers_affinity_then_unused_servers_then_longest():
    pending = [("A", 10), ("B", 50), ("A", 30), ("C", 40)]
    key, weight = (lambda t: t[0]), (lambda t: t[1])
    assert pick_next(pending, "A", key, weight) == 2          # same servers, longest
    assert pick_next(pending, None, key, weight) == 1         # longest overall
    assert pick_next(pending, None, key, weight, busy_keys=["B"]) == 3  # servers nobody uses


def test_timings_average_and_default(tmp_path):
    path = str(tmp_path / "t.json")
    t = Timings(path)
    assert t.weight("x") == 1000.0
    t.record("x", 100)
    t.record("x", 300)
    t.save()
    again = Timings(path)
    assert again.weight("x") == 200.0
    assert again.weight("unknown") == 200.0
