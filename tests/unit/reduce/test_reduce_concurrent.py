"""Pure logic of --mode=reduce's concurrent order: the setup a round runs first and the
lanes it then runs free-running, the lanes as mysqltest's step-by-step send/reap, how many
rounds a try makes, the reducer's start asking the concurrent candidate last (with or
without traced times) and keeping its order, ``--reduce-order`` asking one order only, the case written in rounds (connections
made anew each round, errors let through, the server proved alive, the errorlog check
inside the round), and the rounds counted in the record of tries.

Covers: lib/reduce/concurrent.py, lib/reduce/errorlog.py, lib/reduce/mtrcase.py, lib/reduce/reducer.py, lib/reduce/attempts.py, lib/modes/reduce/options.py
"""
from lib.hunt.signature import Signature
from lib.reduce import attempts, concurrent
from lib.reduce.case import ReduceInput, Statement
from lib.reduce.mtrcase import case_text
from lib.reduce.reducer import Reducer, load_smallest

SIG = Signature("crash", ("f",))


def _trace():
    # conn 5 builds the table, conns 7 and 8 call the function; conn 5 comes back later
    return [Statement(1, 5, "CREATE TABLE t1 (a INT)"), Statement(2, 5, "INSERT INTO t1 VALUES (1)"),
            Statement(3, 7, "SELECT f(a) FROM t1"), Statement(4, 8, "SELECT f(a) FROM t1"),
            Statement(5, 7, "DELETE FROM t1"), Statement(6, 5, "SELECT 1"),
            Statement(7, 8, "SELECT f(a) FROM t1 WHERE a > 0")]


def _case(statements, kind="crash", finding=None):
    finding = finding or {"details": {"in_flight": [{"seq": statements[-1].seq}]}}
    return ReduceInput("/f", kind, kind, SIG, "t", "single", ((),), tuple(statements), finding)


def test_the_setup_is_the_first_connections_lead_and_the_rest_are_lanes():
    setup, lanes = concurrent.split(_trace())
    assert [s.seq for s in setup] == [1, 2]
    assert {c: [s.seq for s in lane] for c, lane in lanes.items()} == {7: [3, 5], 8: [4, 7],
                                                                      5: [6]}
    assert list(lanes) == [7, 8, 5]                    # in the order they first appear
    one = [Statement(1, 5, "a"), Statement(2, 5, "b")]
    setup, lanes = concurrent.split(one)              # one connection: its last is a lane
    assert [s.seq for s in setup] == [1] and [s.seq for s in lanes[5]] == [2]
    assert concurrent.split([]) == ([], {})


def test_lockstep_sends_each_step_after_reaping_the_step_before():
    # bdeed5453f7e's case: one lane's SET SESSION then INSERT, the other's INSERT alone --
    # the two INSERTs go in one step
    lanes = {2: [Statement(2, 2, "SET SESSION tx_isolation = 'READ-COMMITTED'"),
                 Statement(4, 2, "INSERT b")], 3: [Statement(3, 3, "INSERT a")]}
    assert [(a, s.seq) for a, s in concurrent.lockstep(lanes)] == [
        ("send", 2), ("reap", 2), ("send", 4), ("send", 3), ("reap", 4), ("reap", 3)]
    _, lanes = concurrent.split(_trace())
    actions = [(a, s.seq) for a, s in concurrent.lockstep(lanes)]
    # aligned at their ends: conn 5's one statement goes with the others' last ones
    assert actions == [("send", 3), ("send", 4),
                       ("reap", 3), ("send", 5), ("reap", 4), ("send", 7), ("send", 6),
                       ("reap", 5), ("reap", 7), ("reap", 6)]
    # every statement sent once and reaped once, each connection's in its order
    sent = [s for a, s in actions if a == "send"]
    assert sorted(sent) == sorted(s for a, s in actions if a == "reap") == [3, 4, 5, 6, 7]


def test_rounds_are_fewer_when_a_round_is_long():
    assert concurrent.rounds_for(0.01) == concurrent.ROUNDS
    assert concurrent.rounds_for(5.0) == 5            # 1 + 20 s / 5 s
    assert concurrent.rounds_for(60.0) == 1
    assert concurrent.rounds_for(0.0, 7) == 7


def test_start_asks_the_concurrent_candidate_last_and_keeps_its_order(tmp_path):
    orders, asked = [], []

    def reorder(order, candidate):
        orders.append((order, candidate))

    def fails(cand, opts):   # only every connection at once reproduces
        asked.append(orders[-1][1])
        return orders[-1][0] == "concurrent"
    trace = _trace()          # no traced times: no ended/interleaved/timed candidates
    reducer = Reducer(_case(trace), fails, str(tmp_path), lambda: len(asked), reorder=reorder)
    assert reducer.start()
    assert asked == ["related", "serialized", "concurrent"], asked
    assert reducer.order == "concurrent" and orders[-1] == ("concurrent", "pass")
    assert load_smallest(str(tmp_path), reducer.case)["order"] == "concurrent"
    single = [Statement(1, 5, "a"), Statement(2, 5, "b")]
    alone = Reducer(_case(single), fails, str(tmp_path / "x"), lambda: 0, reorder=reorder)
    orders.clear()
    assert not alone.start() and ("concurrent", "concurrent") not in orders


def test_a_concurrent_case_runs_in_rounds():
    trace = _trace()
    text = case_text(_case(trace), trace, {5: 1146}, rounds=100)
    lines = text.splitlines()
    loop = lines.index("while ($kw_rounds_left)")
    assert lines[loop - 1] == "--let $kw_rounds_left= 100" and lines[loop + 1] == "{"
    body = lines[loop + 2:lines.index("}", loop)]
    assert body[:3] == [f"connect (con{n},localhost,root,,test);" for n in (1, 2, 3)]
    assert body[3] == "--disable_abort_on_error"
    assert body[4:7] == ["connection con1;", "CREATE TABLE t1 (a INT);",
                         "INSERT INTO t1 VALUES (1);"]
    assert body[7:12] == ["connection con2;", "send SELECT f(a) FROM t1;", "connection con3;",
                          "send SELECT f(a) FROM t1;", "connection con2;"]
    assert "--error" not in text                       # errors are let through in rounds
    alive = body.index("SELECT 1;", body.index("--enable_abort_on_error"))
    assert body[alive - 2] == "connection default;"
    assert body[-5:] == ["connection default;", "DROP DATABASE test;", "CREATE DATABASE test;",
                         "USE test;", "--dec $kw_rounds_left"]
    assert "disconnect con3;" in body
    assert lines[-1] == "--echo # kewpie: the case ran to its end"
    one = [Statement(1, 5, "SELECT 1"), Statement(2, 5, "SELECT 2")]
    assert "while" not in case_text(_case(one), one, {}, rounds=100)


def test_an_errorlog_case_checks_the_log_in_every_round():
    trace = _trace()
    line = "2026-11-28  5:16:53 7 [ERROR] mariadbd: This transaction was rolled back"
    case = _case(trace, "errorlog", {"details": {"lines": [line]}})
    text = case_text(case, trace, {}, rounds=10)
    loop, end = text.index("while ($kw_rounds_left)"), text.index("--dec $kw_rounds_left")
    # the log's size noted once, before the rounds; each round checks from there after its
    # connections closed (the line can be logged as they close), and once more at the end
    assert text.index("let KW_ERRORLOG=") < loop and text.count("let KW_ERRORLOG=") == 1
    check = text.index("# the bug: the error log gained", loop)
    assert text.index("disconnect con3;") < check < end
    assert text.count("# the bug: the error log gained") == 2
    assert "unlink" not in text[loop:end] and "unlink" in text[end:]


def test_the_record_counts_the_concurrent_rounds():
    tries = [attempts.Attempt("concurrent", "concurrent", 9, 20.0, "nothing", 9, rounds=12),
             attempts.Attempt("concurrent", "concurrent", 9, 21.0, "nothing", 9, rounds=11)]
    row, = attempts.summary(tries)
    assert row["rounds"] == 23 and row["tries"] == 2
    line, = attempts.lines(tries)
    assert "2 tries, 2 nothing in 23 concurrent rounds" in line


def test_an_order_asked_for_is_the_only_one_the_start_tries(tmp_path):
    orders = []
    trace = _trace()
    reducer = Reducer(_case(trace), lambda c, o: False, str(tmp_path), lambda: 0,
                      reorder=lambda order, name: orders.append((order, name)))
    reducer.only = "concurrent"
    assert not reducer.start()
    assert orders == [("concurrent", "concurrent"), ("concurrent", "whole trace")], orders
    orders.clear()
    ended = Reducer(_case(trace), lambda c, o: orders[-1][0] == "ended", str(tmp_path / "e"),
                    lambda: 0, reorder=lambda order, name: orders.append((order, name)))
    ended.only = "ended"        # no traced times: the truncated trace in send order
    assert ended.start() and ended.order == "ended"
    assert orders[0] == ("ended", "ended"), orders


def test_the_reduce_order_option():
    import argparse
    import pytest
    from lib.modes.reduce.options import add_options, section
    parser = argparse.ArgumentParser()
    add_options(parser)
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("tests", nargs="*")
    assert section(parser.parse_args(["--reduce-order", "concurrent"])).order == "concurrent"
    assert section(parser.parse_args([])).order == ""
    with pytest.raises(SystemExit):
        parser.parse_args(["--reduce-order", "sideways"])
    from lib.modes.reduce.options import ORDERS
    from lib.reduce.interleave import ORDERS as REPLAY_ORDERS
    assert ORDERS == REPLAY_ORDERS      # the option's choices are the replay's orders


def test_a_die_line_mysqltest_cut_still_counts():
    from lib.hunt.signature import errorlog_signature
    from lib.reduce.errorlog import reproduced_in
    line = ("2026-11-28  5:16:53 7 [ERROR] mariadbd: This transaction was rolled back and "
            "cannot be committed. Only supported operation is to roll it back, so all pending "
            "changes will be discarded. Please restart another transaction.")
    sig = errorlog_signature(line)
    cut = ("At line 1: errorlog: 2026-11-28 22:57:27 43 [ERROR] mariadbd: This transaction "
           "was rolled back and cannot be committed. Only supported operation is to roll it "
           "back, so al")
    assert reproduced_in(cut, sig)
    assert not reproduced_in("At line 1: errorlog: 2026-11-28 22:57:27 43 [ERROR] mariadbd: "
                             "This transaction was", sig)          # too short to tell
    other = cut.replace("rolled back", "committed twice")
    assert not reproduced_in(other, sig)
