"""The list-append isolation checker on hand-made histories: each anomaly, and valid ones.

Covers: lib/consistency/elle.py, lib/consistency/listappend.py
"""
import random

from lib.consistency.elle import anomaly_kinds, check_list_append, classify
from lib.consistency.oplog import FAIL, OK, UNKNOWN, Op


def T(index, *mops, outcome=OK, process=None):
    """A transaction op: mops are ('append', k, v) / ('r', k, [..])."""
    return Op(index, process or f"c{index}", "s0", "txn", [list(m) for m in mops], outcome,
              float(index), float(index) + 0.5)


def kinds(*txns):
    verdict = check_list_append(list(txns))
    return verdict, anomaly_kinds(verdict)


def test_serial_history_is_valid():
    verdict, found = kinds(T(0, ("append", "x", 1)),
                           T(1, ("r", "x", [1]), ("append", "x", 2)),
                           T(2, ("r", "x", [1, 2]), ("r", "y", [])),
                           T(3, ("append", "y", 3), ("r", "y", [3])))
    assert verdict.valid, verdict.report()
    assert not found
    assert "4 committed transactions over 2 keys" in verdict.summary


def test_g0_write_cycle():
    verdict, found = kinds(T(1, ("append", "x", 1), ("append", "y", 2)),
                           T(2, ("append", "x", 3), ("append", "y", 4)),
                           T(3, ("r", "x", [1, 3])), T(4, ("r", "y", [4, 2])))
    assert verdict.invalid
    assert "G0" in found
    assert any("T#1 -ww-> T#2 -ww-> T#1" in e or "T#2 -ww-> T#1 -ww-> T#2" in e
               for e in verdict.evidence), verdict.report()


def test_g1a_aborted_read():
    verdict, found = kinds(T(1, ("append", "x", 1), outcome=FAIL), T(2, ("r", "x", [1])))
    assert verdict.invalid and found == {"G1a"}
    assert "appended by a failed transaction" in verdict.evidence[0]


def test_g1b_intermediate_read():
    verdict, found = kinds(T(1, ("append", "x", 1), ("append", "x", 2)), T(2, ("r", "x", [1])))
    assert verdict.invalid and found == {"G1b"}, verdict.report()
    assert "intermediate append" in verdict.evidence[0]


def test_own_intermediate_read_is_fine():
    verdict, _ = kinds(T(1, ("append", "x", 1), ("r", "x", [1]), ("append", "x", 2)),
                       T(2, ("r", "x", [1, 2])))
    assert verdict.valid, verdict.report()


def test_g1c_circular_information_flow():
    verdict, found = kinds(T(1, ("append", "x", 1), ("r", "y", [2])),
                           T(2, ("append", "y", 2), ("r", "x", [1])))
    assert verdict.invalid and found == {"G1c"}, verdict.report()
    assert any("-wr->" in e and "-rw->" not in e for e in verdict.evidence if e.startswith("G1c"))


def test_g_single_read_skew():
    # T1 saw T2's y but not T2's x: one anti-dependency closes the cycle
    verdict, found = kinds(T(1, ("r", "x", []), ("r", "y", [5])),
                           T(2, ("append", "x", 7), ("append", "y", 5)),
                           T(3, ("r", "x", [7])))
    assert verdict.invalid and found == {"G-single"}, verdict.report()
    cycle = next(e for e in verdict.evidence if e.startswith("G-single"))
    assert "-rw->" in cycle and "-wr->" in cycle
    assert any("missed 7" in e for e in verdict.evidence)


def test_g2_item_write_skew():
    verdict, found = kinds(T(1, ("r", "x", []), ("append", "y", 1)),
                           T(2, ("r", "y", []), ("append", "x", 2)),
                           T(3, ("r", "x", [2])), T(4, ("r", "y", [1])))
    assert verdict.invalid and found == {"G2-item"}, verdict.report()
    cycle = next(e for e in verdict.evidence if e.startswith("G2-item"))
    assert cycle.count("-rw->") == 2


def test_incompatible_order_garbage_and_duplicates():
    verdict, found = kinds(T(1, ("append", "x", 1)), T(2, ("append", "x", 2)),
                           T(3, ("r", "x", [1, 2])), T(4, ("r", "x", [2, 1])),
                           T(5, ("r", "y", [99])), T(6, ("r", "x", [1, 1])))
    assert {"incompatible-order", "garbage-read", "duplicate-elements"} <= found


def test_unknown_transaction_seen_committed_takes_part():
    # T2's outcome is unknown, but T1 read its append: it committed, and the cycle counts
    verdict, found = kinds(T(1, ("r", "x", []), ("r", "y", [5])),
                           T(2, ("append", "x", 7), ("append", "y", 5), outcome=UNKNOWN),
                           T(3, ("r", "x", [7])))
    assert found == {"G-single"}, verdict.report()


def test_failed_and_unread_transactions_are_ignored():
    verdict, _ = kinds(T(1, ("append", "x", 1)), T(2, ("append", "x", 2), outcome=FAIL),
                       T(3, ("append", "x", 3), outcome=UNKNOWN), T(4, ("r", "x", [1, 3])))
    assert verdict.valid, verdict.report()


def test_nothing_committed_is_unknown():
    verdict = check_list_append([T(1, ("append", "x", 1), outcome=FAIL)])
    assert verdict.status == "unknown"


def test_classify():
    assert classify(["ww", "ww"]) == "G0"
    assert classify(["ww", "wr"]) == "G1c"
    assert classify(["wr", "rw"]) == "G-single"
    assert classify(["rw", "ww", "rw"]) == "G2-item"


def _serial_history(n, keys=60, seed=3):
    rng = random.Random(seed)
    state = {}
    ops = []
    value = 0
    for i in range(n):
        mops = []
        for _ in range(rng.randint(1, 4)):
            k = rng.randrange(keys)
            if rng.random() < 0.5:
                value += 1
                state.setdefault(k, []).append(value)
                mops.append(("append", k, value))
            else:
                mops.append(("r", k, list(state.get(k, []))))
        ops.append(T(i, *mops))
    return ops


def test_large_serial_history_is_valid():
    verdict = check_list_append(_serial_history(5000))
    assert verdict.valid, verdict.report()
    assert "5000 committed transactions over 60 keys" in verdict.summary


def test_swapped_reads_in_a_serial_history_are_caught():
    ops = _serial_history(300)
    # make one transaction read a stale x while it also saw a later write elsewhere
    stale = T(10_000, ("r", 0, []), ("r", 1, next(m[2] for op in reversed(ops)
                                                     for m in op.value if m[0] == "r" and m[1] == 1)))
    verdict = check_list_append(ops + [stale])
    assert verdict.invalid, verdict.report()
    assert anomaly_kinds(verdict) & {"G-single", "G2-item"}


def test_final_lists_lost_and_diverged():
    from lib.consistency.listappend import check_final_lists, parse_list
    assert parse_list("3,7,12") == [3, 7, 12] and parse_list(None) == [] and parse_list("") == []
    ops = [T(1, ("append", 1, 5), ("append", 2, 6)), T(2, ("append", 1, 7), outcome=FAIL)]
    good = check_final_lists(ops, {"s0": {1: [5], 2: [6]}, "s1": {1: [5], 2: [6]}})
    assert good.valid, good.report()
    bad = check_final_lists(ops, {"s0": {1: [5], 2: [6]}, "s1": {1: [5]}})
    assert bad.invalid
    assert any(e.startswith("lost on s1: acknowledged append 6 to key 2") for e in bad.evidence)
    assert "diverged: key 2 is [6] on s0 but [] on s1" in bad.evidence
