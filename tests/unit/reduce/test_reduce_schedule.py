"""Pure logic of --mode=reduce's replay with the trace's own interleaving: the
happens-before schedule from the traced send times and durations (a statement waits
for what had ended before it was sent, on every other connection; a subset keeps the
order of what is left; the schedule cannot deadlock), the timed variant's offsets,
the statements' times read from a trace record and kept in the resume file, the
ended variant (one at a time in the order the statements ended), the reducer's start
asking the ended, interleaved and timed candidates between the related statements
and the serialized trace (and keeping their order for the passes), the schedule as
mysqltest's send/reap in the case's text, and the record of tries of a finding its
trace does not reproduce; a try that gives a signature ``--reduce-accept`` names counts
as reproducing.

Covers: lib/reduce/schedule.py, lib/reduce/case.py, lib/reduce/reducer.py, lib/reduce/attempts.py, lib/reduce/mtrcase.py, lib/reduce/check.py, lib/modes/reduce/options.py
"""
import itertools
import random

from lib.hunt.signature import Signature
from lib.reduce import attempts, schedule
from lib.reduce.case import ReduceInput, Statement
from lib.reduce.reducer import Reducer, load_smallest

SIG = Signature("crash", ("f",))


def _s(seq, conn, t, ms, sql="SELECT 1"):
    return Statement(seq, conn, sql, 0, t, ms)


def _trace():
    # conn 1: INSERT [0, 1) then INSERT [1.5, 2); conn 2: SELECT sent at 0.5 (overlaps the
    # first INSERT), SELECT sent at 2.5 (after both INSERTs ended); conn 3: a long
    # statement [0.2, 3) ended after everything else was sent
    return [_s(1, 1, 100.0, 1000, "INSERT INTO t1 VALUES (1)"), _s(2, 3, 100.2, 2800),
            _s(3, 2, 100.5, 10, "SELECT kw(a) FROM t1"),
            _s(4, 1, 101.5, 500, "INSERT INTO t1 VALUES (2)"),
            _s(5, 2, 102.5, 10, "SELECT kw(COUNT(*)) FROM t1")]


def test_a_statement_waits_for_what_had_ended_before_it_was_sent():
    waits = schedule.happens_before(_trace())
    assert waits[0] == {} and waits[1] == {}
    assert waits[2] == {}                     # sent while conn 1's INSERT ran: free to overlap
    assert waits[3] == {2: 1}                 # conn 2's first SELECT had ended
    assert waits[4] == {1: 2}                 # both INSERTs; conn 3's long one had not ended


def test_only_statements_sent_earlier_are_waited_for():
    # conn 2's statement was sent after conn 1's but ended first: conn 1's next waits for it
    trace = [_s(1, 1, 10.0, 100), _s(2, 2, 10.01, 1), _s(3, 1, 10.2, 1)]
    assert schedule.happens_before(trace) == [{}, {}, {2: 1}]


def test_a_subset_keeps_the_order_of_what_is_left():
    trace = _trace()
    without = [s for s in trace if s.seq != 3]      # the statement in between removed
    waits = schedule.happens_before(without)
    assert waits[-1] == {1: 2}                      # still after both INSERTs
    assert waits[2] == {}                           # conn 1's second INSERT: nothing left to wait for


def test_statements_without_times_wait_for_nothing_and_are_not_timed():
    trace = [Statement(1, 1, "a"), Statement(2, 2, "b")]
    assert schedule.happens_before(trace) == [{}, {}]
    assert not schedule.timed(trace) and schedule.timed(_trace()) and not schedule.timed([])


def _simulate(trace, rng):
    """A random run of the schedule: lanes pick any ready statement; True when every
    statement ran (no deadlock) and none ran before what it waits for."""
    waits = schedule.happens_before(trace)
    lanes = schedule.lanes(trace)
    position = {conn: 0 for conn in lanes}
    ended = {conn: 0 for conn in lanes}
    done = set()
    while len(done) < len(trace):
        ready = [c for c in lanes if position[c] < len(lanes[c]) and
                 schedule.ready(waits[lanes[c][position[c]]], ended)]
        if not ready:
            return False
        conn = rng.choice(ready)
        index = lanes[conn][position[conn]]
        for other, count in waits[index].items():
            assert sum(1 for i in done if trace[i].conn == other) >= count
        done.add(index)
        position[conn] += 1
        ended[conn] += 1
    return True


def test_random_traces_never_deadlock():
    rng = random.Random(46)
    for _ in range(200):
        clock, trace, seq = {c: rng.uniform(0, 1) for c in range(4)}, [], itertools.count(1)
        sends = []
        for conn in range(4):
            for _ in range(rng.randint(0, 8)):
                start = clock[conn]
                took = rng.choice([0.0, rng.uniform(0, 2)])
                sends.append((start, conn, took))
                clock[conn] = start + took + rng.uniform(0, 0.5)
        sends.sort()
        trace = [_s(next(seq), conn, 1000 + start, took * 1000) for start, conn, took in sends]
        assert _simulate(trace, rng)
        order = schedule.serial_order(trace)       # one statement at a time keeps it too
        waits = schedule.happens_before(trace)
        seen: dict[int, int] = {}
        for index in order:
            assert schedule.ready(waits[index], seen)
            seen[trace[index].conn] = seen.get(trace[index].conn, 0) + 1


def test_the_ended_order_puts_a_lock_waiter_after_its_releaser():
    # conn 2's INSERT waited for conn 1's table lock until the UNLOCK
    trace = [_s(1, 1, 10.0, 1, "LOCK TABLES t WRITE"), _s(2, 2, 10.1, 900, "INSERT ... SELECT"),
             _s(3, 1, 10.2, 1, "INSERT"), _s(4, 1, 10.9, 1, "UNLOCK TABLES"),
             _s(5, 2, 11.1, 1, "SELECT")]
    assert [s.seq for s in schedule.in_end_order(trace)] == [1, 3, 4, 2, 5]
    untimed = [Statement(2, 1, "b"), Statement(1, 2, "a")]
    assert schedule.in_end_order(untimed) == untimed


def test_send_and_reap_keeps_overlaps_and_reaps_only_what_must_come_first():
    actions = schedule.send_and_reap(_trace())
    assert actions == [("send", 0), ("send", 1), ("send", 2),   # three at once
                       ("reap", 0), ("reap", 2), ("send", 3),   # its own first, conn 2's SELECT
                       ("reap", 3), ("send", 4),                # the last SELECT after both INSERTs
                       ("reap", 4), ("reap", 1)]                # the rest in the order they ended


def test_send_and_reap_of_random_traces_keeps_the_schedule():
    rng = random.Random(7)
    for _ in range(100):
        trace, clock, seq = [], {c: 0.0 for c in range(3)}, itertools.count(1)
        sends = []
        for conn in range(3):
            for _ in range(rng.randint(1, 6)):
                took = rng.uniform(0, 1)
                sends.append((clock[conn], conn, took))
                clock[conn] += took + rng.uniform(0, 0.3)
        sends.sort()
        trace = [_s(next(seq), conn, 50 + start, took * 1000) for start, conn, took in sends]
        waits, running, reaped = schedule.happens_before(trace), {}, {c: 0 for c in range(3)}
        for action, index in schedule.send_and_reap(trace):
            conn = trace[index].conn
            if action == "send":
                assert conn not in running and schedule.ready(waits[index], reaped)
                running[conn] = index
            else:
                assert running.pop(conn) == index
                reaped[conn] += 1
        assert not running and sum(reaped.values()) == len(trace)


def test_a_concurrent_case_sends_and_reaps():
    from lib.reduce.mtrcase import case_text
    trace = _trace()
    case = _case(trace)
    text = case_text(case, trace, {4: 1062}, concurrent=True)
    body = text[text.index("connect (con1"):text.index("disconnect")].splitlines()
    assert body[:4] == ["connect (con1,localhost,root,,test);",
                        "connect (con2,localhost,root,,test);",
                        "connect (con3,localhost,root,,test);", "connection con1;"]
    assert body[4:8] == ["send INSERT INTO t1 VALUES (1);", "connection con2;", "send SELECT 1;",
                         "connection con3;"], body
    # the expected error goes before the reap of its statement
    reaps = [n for n, line in enumerate(body) if line == "--error 0,1062"]
    assert len(reaps) == 1 and body[reaps[0] + 1] == "reap;"
    plain = case_text(case, trace, {}, concurrent=False)
    assert "send " not in plain and "reap;" not in plain


def test_offsets_are_seconds_after_the_first_statement():
    assert [round(x, 6) for x in schedule.offsets(_trace())] == [0.0, 0.2, 0.5, 1.5, 2.5]
    assert schedule.offsets([Statement(1, 1, "a")]) == [0.0]


def test_times_are_read_from_a_trace_record_and_kept_in_the_resume_file():
    record = {"seq": 3, "t": 1795850461.62903, "ms": 0.17, "conn": 5, "sql": "SELECT 1"}
    s = Statement.from_json(record)
    assert (s.t, s.ms) == (1795850461.62903, 0.17)
    assert Statement.from_json(s.to_json()) == s and Statement.from_json(s.to_json()).t == s.t
    assert s == Statement(3, 5, "SELECT 1")               # times are no part of equality
    assert "t" not in Statement(1, 1, "a").to_json()


def _case(statements):
    finding = {"details": {"in_flight": [{"seq": statements[-1].seq}]}}
    return ReduceInput("/f", "crash", "crash", SIG, "t", "single", ((),), tuple(statements),
                       finding)


def test_start_asks_the_interleaved_candidate_and_keeps_its_order(tmp_path):
    orders, asked = [], []

    def reorder(order, candidate):
        orders.append((order, candidate))

    def fails(cand, opts):   # only a replay with the trace's interleaving reproduces
        asked.append((orders[-1][1], len(cand)))
        return orders[-1][0] == "interleaved" and {1, 4, 5} <= {s.seq for s in cand}
    reducer = Reducer(_case(_trace()), fails, str(tmp_path), lambda: len(asked),
                      reorder=reorder)
    assert reducer.start()
    assert [a[0] for a in asked] == ["related", "ended", "interleaved"]
    assert reducer.order == "interleaved" and orders[-1] == ("interleaved", "pass")
    assert reducer.done == ["truncate"] and "related" not in reducer.skip
    assert load_smallest(str(tmp_path), reducer.case)["order"] == "interleaved"
    again = Reducer(_case(_trace()), fails, str(tmp_path), lambda: 0, reorder=reorder)
    again.resume(load_smallest(str(tmp_path), again.case))
    assert again.order == "interleaved" and orders[-1] == ("interleaved", "resumed")


def test_start_asks_every_candidate_then_gives_the_serial_order_back(tmp_path):
    orders = []
    reducer = Reducer(_case(_trace()), lambda c, o: False, str(tmp_path), lambda: 0,
                      reorder=lambda order, name: orders.append((order, name)))
    assert not reducer.start()
    assert [name for _, name in orders] == ["related", "ended", "interleaved", "timed",
                                            "serialized", "concurrent", "whole trace"]
    assert orders[-1] == ("serial", "whole trace") and "related" in reducer.skip
    plain = Reducer(_case(_trace()), lambda c, o: False, str(tmp_path), lambda: 0)
    assert not plain.start() and plain.order == "serial"   # no reorder: no interleaved candidate


def test_the_record_of_a_finding_its_trace_does_not_reproduce():
    tries = [attempts.Attempt("related", "serial", 3, 1.0, "nothing"),
             attempts.Attempt("interleaved", "interleaved", 5, 2.0, "other abc", 5, 1),
             attempts.Attempt("interleaved", "interleaved", 5, 2.5, "nothing", 5)]
    data = attempts.record("/f", "sig", "a crash", 5, 2, tries)
    assert data["state"] == "not reproducible from its trace"
    assert data["candidates"][1] == {"candidate": "interleaved", "order": "interleaved",
                                     "statements": 5, "tries": 2,
                                     "saw": {"other abc": 1, "nothing": 1}, "seconds": 4.5,
                                     "differ": [], "rounds": 0}
    text = attempts.report(data)
    assert "NOT REPRODUCIBLE FROM ITS TRACE" in text and "in 2 tries each" in text
    assert "interleaved (interleaved replay, 5 statements): 2 tries, 1 other abc, 1 nothing" \
        in text
    assert attempts.seen(False, [], True, 0, False, False) == "hang"
    assert attempts.seen(True, ["x"], True, 0, False, False) == "reproduced"
    assert attempts.seen(False, [], False, 7, False, False) == "stuck at 7"
    assert attempts.seen(False, [], False, 0, True, False) == "timed out"
    assert attempts.seen(False, ["b", "a"], True, 0, False, True) == "stopped"


def test_an_accepted_signature_reproduces_and_the_option_reads_lists():
    import argparse
    from lib.modes.reduce.options import add_options, section
    from lib.reduce.check import Checker, Outcome
    checker = Checker(_case(_trace()), None, "/nowhere")
    other = Signature("crash", ("signal 11", "frames: g"))
    assert not checker.reproduces(Outcome(signatures=[other]))
    assert checker.reproduces(Outcome(signatures=[SIG]))
    checker.accept = frozenset({other.id})
    assert checker.reproduces(Outcome(signatures=[other]))
    parser = argparse.ArgumentParser()
    add_options(parser)
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("tests", nargs="*")
    args = parser.parse_args(["--reduce-accept", "aaa,bbb", "--reduce-accept", " ccc "])
    assert section(args).accept == ("aaa", "bbb", "ccc")


def test_divergence_counts_statements_that_failed_otherwise_than_traced():
    trace = [Statement(1, 1, "a", 0), Statement(2, 1, "b", 1146), Statement(3, 2, "c", 0)]
    assert attempts.divergence(trace, {2: 1146}) == (0, 0)
    assert attempts.divergence(trace, {3: 1205}) == (2, 2)     # 2 did not fail, 3 did
    tries = [attempts.Attempt("ended", "ended", 3, 1.0, "nothing", 3, 0, n, 2) for n in (4, 9)]
    assert attempts.lines(tries) == ["ended (ended replay, 3 statements): 2 tries, 2 nothing "
                                     "(2 s; failed otherwise than traced: 4-9 statements per "
                                     "whole replay)"]
