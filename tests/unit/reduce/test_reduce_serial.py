"""Pure logic of --mode=reduce's handling of long multi-connection traces: the
serialized trace (one connection, no transaction control or locks, no other
connection's session settings, no sleeps, prepared statements renamed per connection),
the failing statements pinned in every ddmin candidate, the per-replay time cap
(ReplayBudget), the trace's traced time, the replay's lock-wait caps set again after a
statement that changes them, and the reducer's start and one-connection pass trying
the serialized trace.

Covers: lib/reduce/passes.py, lib/reduce/budget.py, lib/reduce/case.py, lib/reduce/replay.py, lib/reduce/reducer.py, lib/reduce/mtrcase.py
"""
import pytest

from lib.hunt.signature import Signature
from lib.reduce import passes
from lib.reduce.budget import ReplayBudget
from lib.reduce.case import ReduceInput, Statement, traced_seconds
from lib.reduce.ddmin import Batched
from lib.reduce.reducer import Reducer
from lib.reduce.replay import resets_caps


def _s(seq, sql, conn=1):
    return Statement(seq, conn, sql)


@pytest.mark.parametrize("sql, expected", [
    ("BEGIN", True), ("start transaction read only", True), ("COMMIT", True),
    ("ROLLBACK TO SAVEPOINT a", True), ("SAVEPOINT a", True), ("RELEASE SAVEPOINT a", True),
    ("XA START 'x'", True), ("LOCK TABLES t1 WRITE", True), ("UNLOCK TABLES", True),
    ("FLUSH TABLES WITH READ LOCK", True), ("SET autocommit = 0", True),
    ("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE", True),
    ("SET @@SESSION.tx_isolation = 'READ-COMMITTED'", True),
    ("SELECT 1", False), ("FLUSH TABLES", False), ("SET SESSION sql_mode = ''", False),
    ("INSERT INTO commits VALUES (1)", False),
])
def test_transaction_control(sql, expected):
    assert passes.transaction_control(sql) is expected


@pytest.mark.parametrize("sql, expected", [
    ("SET SESSION optimizer_switch = 'mrr=on'", True), ("SET join_cache_level = 8", True),
    ("SET @@SESSION.big_tables = 1", True), ("SET @@sql_mode = ''", True),
    ("SET NAMES utf8mb4", True),
    ("SET GLOBAL innodb_stats_persistent = 0", False), ("SET @@GLOBAL.x = 1", False),
    ("SET @v = 1", False), ("SET STATEMENT max_statement_time=1 FOR SELECT 1", False),
    ("SET PASSWORD = PASSWORD('x')", False), ("SELECT 1", False),
])
def test_session_setting(sql, expected):
    assert passes.session_setting(sql) is expected


def test_prepared_statements_renamed_per_connection():
    assert passes.renamed_prepared("PREPARE s1 FROM 'SELECT 1'", 7) == "PREPARE s1_c7 FROM 'SELECT 1'"
    assert passes.renamed_prepared("EXECUTE s1 USING @a", 7) == "EXECUTE s1_c7 USING @a"
    assert passes.renamed_prepared("DEALLOCATE PREPARE s1", 7) == "DEALLOCATE PREPARE s1_c7"
    assert passes.renamed_prepared("drop prepare `p q`", 9) == "drop prepare `p q_c9`"
    assert passes.renamed_prepared("EXECUTE IMMEDIATE 'SELECT 1'", 7) == "EXECUTE IMMEDIATE 'SELECT 1'"
    assert passes.renamed_prepared("SELECT 'PREPARE s1'", 7) == "SELECT 'PREPARE s1'"


def test_serialize_moves_everything_to_the_failing_connection():
    stmts = [_s(1, "CREATE TABLE t1 (a INT)", 5), _s(2, "SET SESSION join_cache_level = 8", 6),
             _s(3, "SET SESSION optimizer_switch = 'mrr=on'", 7), _s(4, "BEGIN", 6),
             _s(5, "INSERT INTO t1 VALUES (1)", 6), _s(6, "SELECT SLEEP(2)", 8),
             _s(7, "PREPARE s FROM 'SELECT 1'", 6), _s(8, "PREPARE s FROM 'SELECT 2'", 7),
             _s(9, "COMMIT", 6), _s(10, "SET @v = 1", 6), _s(11, "EXECUTE s", 7)]
    out = passes.serialize(stmts, [stmts[-1]])
    assert {s.conn for s in out} == {7}
    assert [s.seq for s in out] == [1, 3, 5, 7, 8, 10, 11]      # send order kept
    assert [s.sql for s in out] == ["CREATE TABLE t1 (a INT)",
                                    "SET SESSION optimizer_switch = 'mrr=on'",
                                    "INSERT INTO t1 VALUES (1)", "PREPARE s_c6 FROM 'SELECT 1'",
                                    "PREPARE s FROM 'SELECT 2'", "SET @v = 1", "EXECUTE s"]


def test_serialize_keeps_a_failing_statement_of_any_kind():
    stmts = [_s(1, "CREATE TABLE t1 (a INT)", 5), _s(2, "COMMIT", 6)]
    assert [s.seq for s in passes.serialize(stmts, [stmts[1]])] == [1, 2]
    assert passes.serialize([], []) == []
    assert {s.conn for s in passes.serialize(stmts, [])} == {5}


def test_with_pinned_never_asks_without_the_failing_statement():
    stmts = [_s(i, f"INSERT INTO t VALUES ({i})") for i in range(1, 41)]
    asked = []

    def fails(cand):
        seqs = {s.seq for s in cand}
        asked.append(seqs)
        return {3, 17, 40} <= seqs
    out = passes.with_pinned(stmts, {40}, passes.by_statements, fails)
    assert [s.seq for s in out] == [3, 17, 40]
    assert asked and all(40 in a for a in asked)
    assert all([s.seq for s in c] == sorted(s.seq for s in c) for c in [out])


def test_with_pinned_keeps_the_batch_form_and_its_edge_cases():
    stmts = [_s(1, "SELECT 1"), _s(2, "SELECT 2"), _s(3, "SELECT 3")]
    batches = []

    def first(cands):
        batches.append(len(cands))
        return next((n for n, c in enumerate(cands) if 1 in {s.seq for s in c}), None)
    test = Batched(lambda c: 1 in {s.seq for s in c}, first)
    assert [s.seq for s in passes.with_pinned(stmts, {3}, passes.by_statements, test)] == [1, 3]
    assert batches                                   # asked through first(), several at once
    only = passes.with_pinned(stmts[2:], {3}, passes.by_statements, test)
    assert [s.seq for s in only] == [3]              # nothing but the pinned: nothing asked
    none = passes.with_pinned(stmts, set(), passes.by_statements, test)
    assert [s.seq for s in none] == [1]              # nothing pinned: the plain pass


def test_replay_budget_caps():
    assert ReplayBudget().cap() is None
    budget = ReplayBudget(traced_seconds=48.0)
    assert budget.cap() == 600.0                     # at least start_floor
    assert ReplayBudget(traced_seconds=120.0).cap() == 1200.0
    budget.reproduced(45.0)
    assert budget.cap() == 450.0                     # 10 x the last reproducing try
    budget.reproduced(2.0)
    assert budget.cap() == 300.0                     # at least floor
    budget.reproduced(0.0)
    assert budget.cap() == 300.0                     # a 0 s try changes nothing
    budget.stopped()
    assert budget.timed_out == 1


def test_traced_seconds_of_a_trace():
    records = [{"seq": 1, "t": 100.0, "ms": 5.0}, {"seq": 2, "t": 140.5, "ms": 500.0},
               {"seq": 3}, {"seq": 4, "t": "x"}]
    assert traced_seconds(records) == pytest.approx(41.0)
    assert traced_seconds([{"seq": 1}]) == 0.0


@pytest.mark.parametrize("sql, expected", [
    ("SET SESSION lock_wait_timeout = 86400", True), ("SET innodb_lock_wait_timeout=50", True),
    ("set @@session.max_statement_time = 0", True),
    ("SET STATEMENT lock_wait_timeout=5 FOR ALTER TABLE t1 ADD KEY (a)", False),
    ("SELECT @@lock_wait_timeout", False), ("SET SESSION sql_mode = ''", False),
])
def test_statements_that_reset_the_replay_caps(sql, expected):
    assert resets_caps(sql) is expected


def _case(statements, failing_seq):
    return ReduceInput("/f", "crash", "crash", Signature("crash", ("signal 11", "frames: f")),
                       "signal 11 in f", "single", ((),), tuple(statements),
                       {"details": {"in_flight": [{"seq": failing_seq}]}})


def _multi_connection_trace():
    # the crash needs t1's rows and the session setting of connection 2; connection 3's
    # open transaction holds t1's rows (a lock wait in a multi-connection replay)
    return [_s(1, "CREATE TABLE t1 (a INT)", 1), _s(2, "CREATE TABLE t2 (b INT)", 3),
            _s(3, "BEGIN", 3), _s(4, "INSERT INTO t1 VALUES (1)", 3),
            _s(5, "INSERT INTO t2 VALUES (2)", 3), _s(6, "SET SESSION join_cache_level = 8", 2),
            _s(7, "SET SESSION join_cache_level = 0", 3), _s(8, "SELECT b FROM t2", 1),
            _s(9, "SELECT a FROM t1 JOIN t1 AS x", 2)]


def _fails_serially(cand, opts):
    """Only a one-connection candidate with the insert, connection 2's setting and the
    query fails (as a serial replay of a trace with lock waits would)."""
    seqs = {s.seq for s in cand}
    return len({s.conn for s in cand}) == 1 and {4, 6, 9} <= seqs and 7 not in seqs


def test_reducer_start_takes_the_serialized_trace(tmp_path):
    case = _case(_multi_connection_trace(), 9)
    reducer = Reducer(case, _fails_serially, str(tmp_path), lambda: 0, skip=("options",))
    assert reducer.start()                          # related fails, serialized reproduces
    assert {s.conn for s in reducer.statements} == {2}
    assert 3 not in {s.seq for s in reducer.statements}       # BEGIN dropped
    assert "one-connection" in reducer.done and "related" in reducer.skip
    result = reducer.run()
    assert [s.seq for s in result.statements] == [4, 6, 9]


def test_one_connection_pass_tries_the_serialized_trace_then_the_plain_one(tmp_path):
    case = _case(_multi_connection_trace(), 9)
    reducer = Reducer(case, _fails_serially, str(tmp_path), lambda: 0,
                      skip=("related", "options"))
    result = reducer.run()                          # no start(): the pass itself serializes
    assert [s.seq for s in result.statements] == [4, 6, 9]
    assert {s.conn for s in result.statements} == {2}
    plain = Reducer(case, lambda cand, opts: len({s.conn for s in cand}) == 1 and
                    {3, 9} <= {s.seq for s in cand}, str(tmp_path / "p"), lambda: 0,
                    skip=("related", "options"))
    (tmp_path / "p").mkdir()
    assert [s.seq for s in plain.run().statements] == [3, 9]   # needs BEGIN: the plain merge


def test_culprits_are_the_in_flight_statement_the_crash_report_names():
    stmts = [_s(1, "CREATE TABLE t1 (a INT)", 5), _s(2, "SELECT a FROM t1", 6),
             _s(3, "INSERT INTO t1 VALUES (1)", 7), _s(4, "UPDATE t1 SET a = 2", 8)]
    details = {"in_flight": [{"seq": 2}, {"seq": 3}, {"seq": 4}], "query": "SELECT a FROM t1"}
    case = ReduceInput("/f", "crash", "crash", Signature("crash", ("x",)), "t", "single", ((),),
                       tuple(stmts), {"details": details})
    assert [s.seq for s in case.failing] == [2, 3, 4]
    assert [s.seq for s in case.culprits] == [2]
    truncated = {**details, "query": "SELECT a FR"}           # a report's cut query
    assert [s.seq for s in ReduceInput(**{**case.__dict__, "finding": {"details": truncated}}
                                       ).culprits] == [2]
    unnamed = {**details, "query": "SELECT 42"}                # none named: all of them
    assert [s.seq for s in ReduceInput(**{**case.__dict__, "finding": {"details": unnamed}}
                                       ).culprits] == [2, 3, 4]


def test_one_culprit_when_two_connections_ran_the_named_query():
    stmts = [_s(1, "CREATE TABLE t1 (a INT)", 5), _s(2, "SELECT f(a) FROM t1", 6),
             _s(3, "SELECT f(a) FROM t1", 7)]   # two threads in the crashing UDF at once
    case = ReduceInput("/f", "crash", "crash", Signature("crash", ("x",)), "t", "single", ((),),
                       tuple(stmts), {"details": {"in_flight": [{"seq": 2}, {"seq": 3}],
                                                  "query": "SELECT f(a) FROM t1"}})
    assert [s.seq for s in case.culprits] == [2]
    unnamed = ReduceInput(**{**case.__dict__, "finding": {"details": {   # a report cut short
        "in_flight": [{"seq": 2}, {"seq": 3}], "query": ""}}})
    assert [s.seq for s in unnamed.culprits] == [2]


def test_other_in_flight_statements_are_not_pinned(tmp_path):
    stmts = [_s(1, "CREATE TABLE t1 (a INT)", 5), _s(2, "INSERT INTO t1 VALUES (1)", 5),
             _s(3, "SELECT a FROM t1", 6), _s(4, "UPDATE t1 SET a = 2", 7)]
    case = ReduceInput("/f", "crash", "crash", Signature("crash", ("x",)), "t", "single", ((),),
                       tuple(stmts), {"details": {"in_flight": [{"seq": 3}, {"seq": 4}],
                                                  "query": "SELECT a FROM t1"}})
    reducer = Reducer(case, lambda cand, opts: {1, 3} <= {s.seq for s in cand}, str(tmp_path),
                      lambda: 0, skip=("options",))
    assert [s.seq for s in reducer.run().statements] == [1, 3]
    assert {s.conn for s in reducer.statements} == {6}         # serialized on the culprit's


def test_replay_connections_decode_nothing_and_still_escape():
    import pymysql
    from lib.reduce.replay import raw_conversions
    conv = raw_conversions()
    assert not [k for k in conv if isinstance(k, int)]     # no decoder: rows stay bytes
    # PyMySQL's own SET AUTOCOMMIT when a corpus left the server's autocommit off
    assert pymysql.converters.escape_item(True, "utf8mb4", mapping=conv) == "1"
    assert pymysql.converters.escape_item("a'b", "utf8mb4", mapping=conv) == "'a\\'b'"


def test_a_read_timeout_is_a_stuck_statement_not_a_lost_server():
    import pymysql
    from lib.reduce.replay import STUCK, error_code
    assert error_code(pymysql.err.OperationalError(
        2013, "Lost connection to MySQL server during query (timed out)")) == STUCK
    assert error_code(pymysql.err.OperationalError(
        2013, "Lost connection to MySQL server during query")) == 2013
    assert error_code(pymysql.err.ProgrammingError(1146, "Table 'test.t' doesn't exist")) == 1146
    assert error_code(pymysql.err.InterfaceError()) == 2013


def test_a_partitioned_table_makes_the_case_ask_for_partitioning():
    from lib.reduce.mtrcase import case_text
    stmts = [_s(1, "CREATE TABLE t1 (a INT) ENGINE=MyISAM PARTITION BY KEY (a) PARTITIONS 4"),
             _s(2, "SELECT * FROM t1")]
    case = _case(stmts, 2)
    assert "--source include/have_partition.inc" in case_text(case, stmts, {}).splitlines()
    plain = [_s(1, "CREATE TABLE t1 (a INT)"), _s(2, "SELECT * FROM t1 WHERE a = 'PARTITION BY'")]
    assert "--source include/have_partition.inc" not in case_text(_case(plain, 2), plain, {})


def test_a_case_with_non_ascii_text_speaks_utf8mb4_on_every_connection():
    from lib.reduce.mtrcase import case_text
    one = [_s(1, "CREATE TABLE t1 (a VARCHAR(9))"), _s(2, "SELECT * FROM t1 WHERE a = 'ä'")]
    lines = case_text(_case(one, 2), one, {}).splitlines()
    assert lines.index("SET NAMES utf8mb4;") < lines.index("CREATE TABLE t1 (a VARCHAR(9));")
    two = [_s(1, "CREATE TABLE t1 (a VARCHAR(9))", 5), _s(2, "SELECT 'ä'", 6)]
    lines = case_text(_case(two, 2), two, {}).splitlines()
    assert lines.count("SET NAMES utf8mb4;") == 2
    assert lines[lines.index("SELECT 'ä';") - 1] == "connection con2;"
    plain = [_s(1, "SELECT 1")]
    assert "SET NAMES utf8mb4;" not in case_text(_case(plain, 1), plain, {}).splitlines()


def test_a_reply_pymysql_cannot_decode_is_a_malformed_packet():
    from lib.reduce.replay import MALFORMED, error_code
    bad = UnicodeDecodeError("utf-8", b"\x82", 0, 1, "invalid start byte")
    assert error_code(bad) == MALFORMED


def test_the_copy_of_the_culprit_the_replay_crashed_at_is_pinned(tmp_path):
    # two threads ran the crashing query; the trace's first copy (seq 3) had read the
    # table after a later-started INSERT (seq 4) committed: replayed in order only the
    # second copy (seq 5) crashes, and the first must be free to go
    from lib.reduce.check import Outcome
    from lib.reduce.replay import Replayed
    stmts = [_s(1, "CREATE TABLE t1 (a INT)", 5), _s(2, "INSERT INTO t1 VALUES (1), (2)", 5),
             _s(3, "SELECT f(COUNT(*)) FROM t1", 6), _s(4, "INSERT INTO t1 VALUES (3)", 5),
             _s(5, "SELECT f(COUNT(*)) FROM t1", 5)]
    case = ReduceInput("/f", "crash", "crash", Signature("crash", ("x",)), "t", "single", ((),),
                       tuple(stmts), {"details": {"in_flight": [{"seq": 3}, {"seq": 5}],
                                                  "query": ""}})
    assert [s.seq for s in case.culprits] == [3]
    seen = {}

    def fails(cand, opts):
        seqs = [s.seq for s in cand]
        crashes = {1, 2, 4, 5} <= set(seqs)
        if crashes:
            seen["last"] = Outcome(replayed=Replayed(lost=5), statements=tuple(cand),
                                   options=tuple(opts))
        return crashes
    reducer = Reducer(case, fails, str(tmp_path), lambda: 0, skip=("options",),
                      last=lambda: seen.get("last"))
    assert [s.seq for s in reducer.run().statements] == [1, 2, 4, 5]
    unaware = Reducer(case, fails, str(tmp_path / "u"), lambda: 0, skip=("options",))
    (tmp_path / "u").mkdir()
    assert 3 in [s.seq for s in unaware.run().statements]      # before: the first copy stayed
