"""Pure logic of --mode=reduce: ddmin and its group form, the passes' cuts (multi-row
INSERT rows, clauses, literals, truncation, one connection), the finding folder read (bad
input), the saved smallest case, the mysql-test case text.

Covers: lib/reduce/ddmin.py, lib/reduce/passes.py, lib/reduce/case.py, lib/reduce/reducer.py, lib/reduce/mtrcase.py
"""
import json
import os

import pytest

from lib.hunt.signature import Signature
from lib.reduce import passes
from lib.reduce.case import ReduceError, ReduceInput, Statement, read_input
from lib.reduce.ddmin import ddmin, ddmin_groups
from lib.reduce.mtrcase import DONE_LINE, case_text, loaded_libraries, write_case
from lib.reduce.reducer import Reducer, load_smallest, save_smallest


def _needs(*wanted):
    calls = []

    def fails(candidate):
        calls.append(list(candidate))
        return set(wanted) <= set(candidate)
    return fails, calls


def test_ddmin_finds_the_needed_items_in_order():
    fails, calls = _needs(3, 17, 18, 90)
    assert ddmin(list(range(100)), fails) == [3, 17, 18, 90]
    assert all(c == sorted(c) for c in calls)  # order kept in every candidate


def test_ddmin_is_one_minimal_and_asks_each_candidate_once():
    fails, calls = _needs(5)
    assert ddmin(list(range(64)), fails) == [5]
    assert len(calls) == len({tuple(c) for c in calls})


def test_ddmin_of_one_item_and_of_an_all_needed_list():
    fails, _ = _needs("a")
    assert ddmin(["a"], fails) == ["a"]
    fails, _ = _needs(1, 2, 3)
    assert ddmin([1, 2, 3], fails) == [1, 2, 3]


def test_ddmin_tells_every_smaller_failing_candidate():
    fails, _ = _needs(2, 7)
    seen = []
    ddmin(list(range(10)), fails, seen.append)
    assert seen and [len(s) for s in seen] == sorted((len(s) for s in seen), reverse=True)
    assert seen[-1] == [2, 7]


def test_ddmin_groups_drops_whole_groups():
    items = [(i % 3, i) for i in range(30)]  # three groups
    fails = lambda cand: any(g == 1 for g, _ in cand)  # noqa: E731
    kept = ddmin_groups(items, lambda it: it[0], fails)
    assert kept == [it for it in items if it[0] == 1]


def _s(seq, sql, conn=1, error=0):
    return Statement(seq, conn, sql, error)


def test_truncate_drops_what_came_after_the_failing_statement():
    stmts = [_s(i, f"SELECT {i}") for i in range(1, 6)]
    assert [s.seq for s in passes.truncate(stmts, [stmts[2]])] == [1, 2, 3]
    assert passes.truncate(stmts, []) == stmts


def test_one_connection_keeps_send_order():
    stmts = [_s(1, "a", 5), _s(2, "b", 7), _s(3, "c", 5)]
    merged = passes.one_connection(stmts)
    assert [(s.seq, s.conn) for s in merged] == [(1, 5), (2, 5), (3, 5)]


def test_insert_rows_split_and_join():
    sql = "INSERT INTO t (a, b) VALUES (1, 'x,(y)'), (2, NULL) ,(3, 'it''s') ON DUPLICATE KEY UPDATE a = 1"
    head, rows, tail = passes.insert_rows(sql)
    assert head == "INSERT INTO t (a, b) VALUES "
    assert rows == ["(1, 'x,(y)')", "(2, NULL)", "(3, 'it''s')"]
    assert tail == "ON DUPLICATE KEY UPDATE a = 1"
    assert passes.join_insert(head, rows[1:2], tail) == \
        "INSERT INTO t (a, b) VALUES (2, NULL) ON DUPLICATE KEY UPDATE a = 1"
    assert passes.insert_rows("SELECT 1") is None
    assert passes.insert_rows("INSERT INTO t SELECT * FROM u") is None


def test_rows_pass_keeps_the_needed_row():
    stmts = [_s(1, "INSERT INTO t VALUES (1), (2), (3), (4)"), _s(2, "SELECT f(x) FROM t")]
    fails = lambda cand: "(3)" in cand[0].sql  # noqa: E731
    out = passes.by_rows(stmts, fails)
    assert out[0].sql == "INSERT INTO t VALUES (3)" and out[1] == stmts[1]


def test_clause_and_literal_cuts():
    assert passes.clause_cuts("SELECT a FROM t WHERE a > 3 ORDER BY a LIMIT 2") == [
        "SELECT a FROM t WHERE a > 3 ORDER BY a", "SELECT a FROM t WHERE a > 3",
        "SELECT a FROM t"]
    assert passes.clause_cuts("SELECT a FROM t WHERE a IN (SELECT b FROM u)") == []
    assert passes.literal_cuts("INSERT INTO t VALUES (12345, 'abc', 7)") == [
        "INSERT INTO t VALUES (1, 'abc', 7)", "INSERT INTO t VALUES (12345, '', 7)"]


def test_edits_pass_applies_cuts_while_the_failure_stays():
    stmts = [_s(1, "SELECT a FROM t WHERE a > 3 ORDER BY a")]
    out = passes.by_edits(stmts, lambda cand: "FROM t" in cand[0].sql, passes.clause_cuts)
    assert out[0].sql == "SELECT a FROM t"


def _finding(tmp_path, **over):
    folder = tmp_path / "t0001-1-crash-abc"
    folder.mkdir()
    data = {"format": "kewpie-hunt-finding/1", "kind": "crash", "oracle": "crash",
            "signature": {"id": "x", "kind": "crash", "parts": ["signal 11", "frames: f"]},
            "title": "signal 11 in f", "topology": {"kind": "single", "servers": [{"options": []}]},
            "trial": {"options": ["--join-cache-level=4"]},
            "reproduce": ["./kewpie.py", "--mysqld=--plugin-dir=/p"],
            "details": {"in_flight": [{"seq": 2}]}}
    data.update(over)
    (folder / "finding.json").write_text(json.dumps(data))
    (folder / "trace.jsonl").write_text(
        '{"seq": 2, "server": "s0", "conn": 8, "sql": "SELECT f(1)", "result": "error", "error": 2013}\n'
        '{"seq": 1, "server": "s0", "conn": 7, "sql": "CREATE TABLE t (a INT)", "result": "ok"}\n')
    return folder


def test_read_input_of_a_finding(tmp_path):
    case = read_input(str(_finding(tmp_path)))
    assert [s.seq for s in case.statements] == [1, 2]
    assert case.server_options == (("--plugin-dir=/p", "--join-cache-level=4"),)
    assert [s.seq for s in case.failing] == [2]
    assert case.signature.text == "crash | signal 11 | frames: f"


@pytest.mark.parametrize("make, words", [
    (lambda p: str(p / "nowhere"), "no such folder"),
    (lambda p: str(p), "not a finding folder"),
    (lambda p: str(_finding(p, format="other/1")), "not a finding folder"),
    (lambda p: str(_finding(p, kind="hang", oracle="hang")), "cannot be reduced yet"),
    (lambda p: str(_finding(p, topology={"kind": "galera", "servers": []})), "galera"),
])
def test_read_input_refuses_bad_input(tmp_path, make, words):
    with pytest.raises(ReduceError, match=words):
        read_input(make(tmp_path))


def _case(statements, folder="/f"):
    return ReduceInput(folder, "crash", "crash", Signature("crash", ("signal 11", "frames: f")),
                       "signal 11 in f", "single", (("--a=1",),), tuple(statements))


def test_smallest_case_saved_and_resumed(tmp_path):
    stmts = [_s(i, f"INSERT INTO t VALUES ({i})") for i in range(1, 9)]
    case = _case(stmts)
    need = {3, 6}
    reducer = Reducer(case, lambda cand, opts: need <= {s.seq for s in cand}, str(tmp_path),
                      lambda: 0, skip=("options",))
    result = reducer.run()
    assert [s.seq for s in result.statements] == [3, 6]
    saved = load_smallest(str(tmp_path), case)
    assert [s["seq"] for s in saved["statements"]] == [3, 6]
    assert "statements" in saved["passes_done"]
    other = ReduceInput(**{**case.__dict__, "signature": Signature("crash", ("other",))})
    assert load_smallest(str(tmp_path), other) is None
    again = Reducer(case, lambda cand, opts: True, str(tmp_path), lambda: 0)
    again.resume(saved)
    assert [s.seq for s in again.statements] == [3, 6]


def test_interrupted_reduction_keeps_the_smallest_case(tmp_path):
    stmts = [_s(i, f"SELECT {i}") for i in range(1, 33)]
    case = _case(stmts)
    asked = []

    def fails(cand, opts):
        asked.append(1)
        if len(asked) > 6:
            raise KeyboardInterrupt
        return 20 in {s.seq for s in cand}
    with pytest.raises(KeyboardInterrupt):
        Reducer(case, fails, str(tmp_path), lambda: len(asked)).run()
    saved = load_smallest(str(tmp_path), case)
    assert saved and 20 in [s["seq"] for s in saved["statements"]]
    assert len(saved["statements"]) < 32


def test_options_pass_keeps_the_needed_option(tmp_path):
    case = ReduceInput("/f", "crash", "crash", Signature("crash", ("x",)), "t", "single",
                       (("--a=1", "--b=2", "--c=3"),), (_s(1, "SELECT 1"),))
    reducer = Reducer(case, lambda cand, opts: "--b=2" in opts[0], str(tmp_path), lambda: 0)
    assert reducer.run().options == (("--b=2",),)


def test_test_text_of_a_crash_on_two_connections(tmp_path):
    stmts = [_s(1, "CREATE FUNCTION kw_planted RETURNS INTEGER SONAME 'kw_planted.so'", 7),
             _s(2, "INSERT INTO t VALUES (1)", 8), _s(3, "SELECT kw_planted(1)", 7)]
    text = case_text(_case(stmts), stmts, {2: 1062, 3: 2013})
    lines = text.splitlines()
    assert "connect (con1,localhost,root,,test);" in lines
    assert lines[lines.index("connection con2;") + 1] == "--error 0,1062"
    crash = lines.index("SELECT kw_planted(1);")
    assert lines[crash - 1] == "connection con1;"  # a crash left to crash: no --error
    assert "DROP FUNCTION IF EXISTS kw_planted;" in lines
    assert lines[-1] == f"--echo {DONE_LINE}"
    written = write_case(str(tmp_path), "reduced", text, ["--a=1"])
    assert open(written.result).read() == DONE_LINE + "\n"
    assert open(written.opt).read() == "--a=1\n"
    assert written.suitepath == str(tmp_path / "mtr")


def test_a_case_carries_its_plugins_and_names_them_relative_to_itself(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    for name in ("kw_planted.so", "ha_x.so", "unused.so"):
        (plugins / name).write_bytes(b"\x7fELF")
    (plugins / "auth_pam_tool_dir").mkdir()   # a folder: left out
    text = "CREATE FUNCTION kw_planted RETURNS INTEGER SONAME 'kw_planted.so';\n"
    options = [f"--plugin-dir={plugins}", "--plugin-load-add=x=ha_x.so", "--a=1"]
    written = write_case(str(tmp_path / "out"), "reduced", text, options,
                         readme="how to run it\n")
    suite = tmp_path / "out" / "mtr" / "kw_reduce"
    assert open(written.opt).read() == (
        "--plugin-dir=$MTR_SUITE_DIR/plugin --plugin-load-add=x=ha_x.so --a=1\n")
    assert sorted(os.listdir(suite / "plugin")) == ["ha_x.so", "kw_planted.so"]
    assert (suite / "README.txt").read_text() == "how to run it\n"
    assert loaded_libraries("INSTALL SONAME 'ha_rocksdb'", ["--loose-plugin-load=a.so;b=c"]) \
        == {"ha_rocksdb.so", "a.so", "c.so"}


def test_verbs_and_merged_inserts():
    assert passes.verb("  /* x */ select 1") == "SELECT"
    stmts = [_s(1, "INSERT INTO t (v) VALUES (4)"), _s(2, "INSERT INTO t (v) VALUES (5)"),
             _s(3, "INSERT INTO u (v) VALUES (6)"), _s(4, "INSERT INTO u (v) VALUES (7)", conn=2)]
    merged = passes.merged_inserts(stmts)
    assert [s.sql for s in merged] == ["INSERT INTO t (v) VALUES (4), (5)",
                                       "INSERT INTO u (v) VALUES (6)",
                                       "INSERT INTO u (v) VALUES (7)"]


def test_inserts_merged_across_statements_that_do_not_name_their_table():
    # the planted pquery case kept INSERT (1), (2); CREATE FUNCTION; INSERT (3): 5
    # statements where 4 do (test_hunt_pquery's failure under load, session 8)
    stmts = [_s(1, "CREATE TABLE kw_armed (v INT)"),
             _s(2, "INSERT INTO kw_armed (v) VALUES (1), (2)"),
             _s(3, "CREATE FUNCTION kw_planted RETURNS INTEGER SONAME 'kw_planted.so'"),
             _s(4, "INSERT INTO kw_armed (v) VALUES (3)"),
             _s(5, "SELECT kw_planted(COUNT(*)) FROM kw_armed")]
    assert len(passes.merged_inserts(stmts)) == 5       # not consecutive
    wide = passes.merged_inserts(stmts, across=True)
    assert [s.sql for s in wide][1:3] == ["INSERT INTO kw_armed (v) VALUES (1), (2), (3)",
                                          stmts[2].sql]
    assert len(wide) == 4
    # a statement between that names the table (any case, quoted or not) keeps them apart
    for between in ("DELETE FROM kw_armed", "TRUNCATE `KW_ARMED`", "SELECT * FROM test.kw_armed"):
        kept = stmts[:2] + [_s(3, between)] + stmts[3:]
        assert len(passes.merged_inserts(kept, across=True)) == 5, between
    # a name that only contains the table's is no mention of it
    other = stmts[:2] + [_s(3, "CREATE TABLE kw_armed2 (v INT)")] + stmts[3:]
    assert len(passes.merged_inserts(other, across=True)) == 4
    # the pass: the wide merge first; the consecutive one when the wide one does not fail
    tried = []

    def fails(candidate):
        tried.append(len(candidate))
        return False

    assert passes.by_merging(stmts, fails) == stmts and tried == [4]
    assert len(passes.by_merging(stmts, lambda c: True)) == 4


def test_names_and_the_related_statements():
    assert passes.names("SELECT kw_planted(COUNT(*)) FROM `kw_armed` WHERE b = 'x y'") == \
        {"kw_planted", "kw_armed", "b"}
    stmts = [_s(1, "CREATE TABLE kw_noise (a INT)"), _s(2, "CREATE TABLE kw_armed (v INT)"),
             _s(3, "INSERT INTO kw_armed (v) VALUES (4)"), _s(4, "SELECT a FROM kw_noise"),
             _s(5, "SELECT kw_planted(COUNT(*)) FROM kw_armed")]
    assert [s.seq for s in passes.related(stmts, [stmts[-1]])] == [2, 3, 5]
    assert passes.objects("SELECT id, CONCAT('v=', v / 3) FROM kw_diff WHERE id = 2") == {"kw_diff"}
    assert passes.objects("CREATE FUNCTION IF NOT EXISTS kw_planted RETURNS INTEGER "
                          "SONAME 'kw_planted.so'") == {"kw_planted"}
    assert passes.objects("INSERT INTO kw_armed (v) VALUES (4)") == {"kw_armed"}
