"""The parallel check of --mode=reduce (--reduce-parallel) without servers: ddmin's batch
question answers as the serial order would (same reduced list, cache kept), the
parallel check's scheduler over fake checkers (the first failing candidate in serial
order even when a later one answers first, a sporadic candidate's tries spread and
stopped at the first reproduction, later candidates' tries stopped, errors waited for),
the UDF detection of the cheap reset, the width of --reduce-parallel 0.

Covers: lib/reduce/ddmin.py, lib/reduce/parallel.py, lib/reduce/check.py, lib/reduce/passes.py, lib/modes/reduce/run.py
"""
import threading

import pytest

from lib.hunt.signature import Signature
from lib.reduce import passes
from lib.reduce.case import Statement
from lib.reduce.check import Outcome, loads_udf
from lib.reduce.ddmin import Batched, ddmin, ddmin_groups, first_failing
from lib.reduce.parallel import ParallelCheck
from lib.modes.reduce.run import parallel_width

SIG = Signature("crash", ("signal 11",))


def _needs(*wanted):
    return lambda candidate: set(wanted) <= set(candidate)


def _batched(fails, batches):
    def first(candidates):
        batches.append([list(c) for c in candidates])
        return next((n for n, c in enumerate(candidates) if fails(c)), None)
    return Batched(fails, first)


@pytest.mark.parametrize("wanted", [(5,), (3, 17, 18, 60), (0, 63), tuple(range(8))])
def test_batched_ddmin_gives_the_serial_result(wanted):
    serial_calls = []

    def serial(candidate):
        serial_calls.append(list(candidate))
        return _needs(*wanted)(candidate)
    batches = []
    assert ddmin(list(range(64)), _batched(_needs(*wanted), batches)) == \
        ddmin(list(range(64)), serial) == list(wanted)
    asked = [c for b in batches for c in b]
    assert len(asked) == len({tuple(c) for c in asked})      # the cache still answers
    assert all(len(b) >= 1 for b in batches)


def test_batched_groups_rows_and_edits_keep_the_batch_form():
    items = [(i % 4, i) for i in range(40)]
    batches = []
    fails = _batched(lambda c: any(g == 2 for g, _ in c), batches)
    assert ddmin_groups(items, lambda it: it[0], fails) == [it for it in items if it[0] == 2]
    assert batches and max(len(b) for b in batches) > 1
    stmts = [Statement(1, 1, "INSERT INTO t VALUES (1), (2), (3), (4)"),
             Statement(2, 1, "SELECT * FROM t WHERE a = 1 ORDER BY a LIMIT 10")]
    batches.clear()
    kept = passes.by_rows(stmts, _batched(lambda c: "(3)" in c[0].sql, batches))
    assert kept[0].sql == "INSERT INTO t VALUES (3)" and batches
    batches.clear()
    cut = passes.by_edits(stmts, _batched(lambda c: "SELECT" in c[-1].sql, batches),
                          passes.clause_cuts)
    assert cut[-1].sql == "SELECT * FROM t" and batches


def test_first_failing_without_a_batch_form_asks_in_order_and_stops():
    asked = []

    def fails(c):
        asked.append(c)
        return c == [2]
    assert first_failing(fails, [[1], [2], [3]]) == 1 and asked == [[1], [2]]


class FakeChecker:
    """A checker whose tries are answered by a function of (candidate, try number)."""

    def __init__(self, answer, trials=1):
        self.answer = answer
        self.trials = trials
        self.runs = 0

    def once(self, statements, options=None, stop=None):
        self.runs += 1
        out = Outcome()
        result = self.answer(statements, stop)
        if result == "stopped":
            out.replayed.stopped = True
        elif result:
            out.signatures.append(SIG)
        return out

    def reproduces(self, outcome):
        return any(s.id == SIG.id for s in outcome.signatures)


def _check(answer, width=2, trials=1):
    return ParallelCheck([FakeChecker(answer, trials) for _ in range(width)])


def test_the_first_failing_candidate_in_serial_order_even_when_a_later_one_answers_first():
    later_done = threading.Event()

    def answer(candidate, stop):
        if candidate == ["a"]:
            assert later_done.wait(10)      # candidate 1 answers before candidate 0
            return True
        later_done.set()
        return True
    check = _check(answer)
    assert check.first([["a"], ["b"]]) == 0
    assert check.last is not None and check.last.signatures == [SIG]


def test_none_when_every_try_of_every_candidate_passes():
    check = _check(lambda c, stop: False, width=2, trials=3)
    assert check.first([["a"], ["b"], ["c"]]) is None
    assert check.runs == 9


def test_a_sporadic_candidate_fails_at_its_first_reproduction():
    tries = []
    lock = threading.Lock()

    def answer(candidate, stop):
        with lock:
            tries.append(candidate)
            return len(tries) == 3          # the third try reproduces
    check = _check(answer, width=2, trials=8)
    assert check.fails(["x"]) is True
    assert 3 <= check.runs <= 5              # with the tries in flight then: not all 8


def test_later_candidates_stop_once_an_earlier_one_failed():
    stopped = []

    def answer(candidate, stop):
        if candidate == ["a"]:
            return True
        for _ in range(1000):               # a long replay: asks stop() between statements
            if stop():
                stopped.append(candidate)
                return "stopped"
            threading.Event().wait(0.01)
        return False
    check = _check(answer, width=2, trials=1)
    assert check.first([["a"], ["b"], ["c"]]) == 0
    assert stopped == [["b"]] or stopped == []   # b stopped (or never handed out)


def test_an_error_in_a_try_waits_for_the_others_and_goes_on():
    other_done = threading.Event()

    def answer(candidate, stop):
        if candidate == ["a"]:
            raise RuntimeError("server did not start")
        while not stop():
            threading.Event().wait(0.01)
        other_done.set()
        return "stopped"
    check = _check(answer)
    with pytest.raises(RuntimeError, match="did not start"):
        check.first([["a"], ["b"]])
    assert other_done.is_set()


def test_udf_loads_detected_and_the_parallel_width():
    assert loads_udf([Statement(1, 1, "CREATE FUNCTION IF NOT EXISTS f RETURNS INTEGER "
                                      "SONAME 'f.so'")])
    assert not loads_udf([Statement(1, 1, "CREATE FUNCTION f() RETURNS INT RETURN 1")])
    assert parallel_width(3) == 3 and 1 <= parallel_width(0) <= 4


def _crash_case(statements):
    from lib.reduce.case import ReduceInput
    finding = {"details": {"in_flight": [{"seq": statements[-1].seq}]}}
    return ReduceInput("/f", "crash", "crash", SIG, "t", "single", ((),), tuple(statements),
                       finding)


def test_start_tries_the_related_statements_before_the_whole_trace(tmp_path):
    from lib.reduce.reducer import Reducer
    stmts = [Statement(1, 1, "CREATE TABLE t1 (a INT)"), Statement(2, 2, "CREATE TABLE n (a INT)"),
             Statement(3, 1, "INSERT INTO t1 VALUES (1)"), Statement(4, 2, "SELECT * FROM n"),
             Statement(5, 1, "SELECT f(a) FROM t1"), Statement(6, 1, "SELECT 1")]
    asked = []

    def fails(cand, opts):
        asked.append([s.seq for s in cand])
        return {1, 5} <= {s.seq for s in cand}
    reducer = Reducer(_crash_case(stmts[:5]), fails, str(tmp_path), lambda: len(asked))
    assert reducer.start() and asked == [[1, 3, 5]]
    assert reducer.done == ["truncate", "related"] and not reducer.resumed
    nothing = Reducer(_crash_case(stmts[:5]), lambda c, o: False, str(tmp_path), lambda: 0)
    assert not nothing.start() and "related" in nothing.skip
