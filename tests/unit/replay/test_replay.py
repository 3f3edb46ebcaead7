"""The replay's pure parts: a corpus read (reproducers, their bug and options, the files
that cannot be used, bad input), the bugs x trees matrix (present / changed / absent),
the known-bugs file of the crashes (read back by kewpie), the history's text, the
restore's statements, the attribution quality against a known-bugs list, and which
queued job a free bot takes.

Covers: lib/replay/corpus.py, lib/replay/matrix.py, lib/replay/report.py,
lib/replay/restore.py, lib/replay/attribution.py, lib/replay/schedule.py,
lib/replay/execute.py (ReplayResult),
lib/history/replays.py (the failure text read back)
"""
import os

import pytest

from lib.history.replays import bug_name, parse_failure
from lib.hunt.kbstrings import load_strings
from lib.hunt.knownbugs import KnownBugs
from lib.replay.attribution import OTHER, OWN, SHARED, UNATTRIBUTED, attribute
from lib.replay.corpus import MYSQLTEST, SQL, ReplayError, discover, looks_like_sql
from lib.replay.execute import ReplayResult
from lib.replay.matrix import ABSENT, CHANGED, PRESENT, Matrix
from lib.platform.safewrite import OutputDir
from lib.replay.report import history_text, known_bugs_file, match_text, table
from lib.replay.restore import State, undo_statements


def _write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as fh:
        fh.write(text)
    return path


# ------------------------------------------------------------------ corpus
def test_corpus_reproducers_bugs_options_and_skips(tmp_path):
    root = str(tmp_path / "c")
    _write(f"{root}/MDEV-2.sql", "# mysqld options required for replay: --log-bin\n"
                                 "CREATE TABLE t (a INT);\n\n"
                                 "# mysqld options required for replay:  --log-bin --sql_mode=\n"
                                 "SELECT 1;\n")
    _write(f"{root}/MDEV-1.sql", "select 1;\n")
    _write(f"{root}/MDEV-3.sql", "# mysqld options required for replay: --innodb-log-buffer-size=1\n")
    _write(f"{root}/bin.sql", b"\x00abc", "wb")
    _write(f"{root}/notes.sql", "hello world\n")
    _write(f"{root}/MDEV-4.slq", "SELECT 1;\n")
    _write(f"{root}/f/reduce/mtr/kw_reduce/reduced.test", "--disable_query_log\nSELECT 1;\n")
    _write(f"{root}/f/reduce/mtr/kw_reduce/reduced.opt", "--sql-mode=\n")
    corpus = discover([root])
    names = {r.name: r for r in corpus.reproducers}
    assert sorted(names) == ["MDEV-1", "MDEV-2", "MDEV-3", "f"]
    assert [o.as_arg() for o in names["MDEV-2"].options] == ["--log-bin", "--sql-mode="]
    assert names["MDEV-2"].bug == "MDEV-2" and names["MDEV-2"].kind == SQL
    assert names["MDEV-3"].options                         # options alone: a start's bug
    assert names["f"].kind == MYSQLTEST and names["f"].bug == ""
    assert [o.as_arg() for o in names["f"].options] == ["--sql-mode="]
    reasons = {os.path.basename(s.path): s.reason for s in corpus.skipped}
    assert reasons == {"bin.sql": "not SQL: it holds NUL bytes (a binary file)",
                       "notes.sql": "not SQL: no line begins with a statement"}
    assert [os.path.basename(p) for p in corpus.ignored] == ["MDEV-4.slq"]


def test_corpus_bad_input(tmp_path):
    (tmp_path / "empty").mkdir()
    bad = _write(str(tmp_path / "x.sql"), "nothing\n")
    for paths, words in (([], "needs the corpus"), ([str(tmp_path / "empty")], "no reproducer"),
                         ([str(tmp_path / "none")], "no such file"),
                         ([bad], "not SQL"), ([_write(str(tmp_path / "a.txt"), "SELECT 1;")],
                                              "neither .sql nor .test")):
        with pytest.raises(ReplayError, match=words):
            discover(paths)


def test_looks_like_sql():
    assert looks_like_sql("-- a comment\n  (SELECT 1) UNION (SELECT 2);", SQL)
    assert not looks_like_sql("let $a= 1;\n", SQL)
    assert looks_like_sql("--let $a= 1\n", MYSQLTEST)


# ------------------------------------------------------------------ matrix and reports
def _result(name, tree, outcome, sig="", uid="", bug=None, known=None):
    return ReplayResult(name, bug if bug is not None else name, f"/c/{name}.sql", tree,
                        f"/t/{tree}", outcome, 1.0, "s0 crashed: signal 11 in f",
                        {"id": sig, "text": f"crash | signal 11 | frames: {sig}"} if sig else None,
                        {"text": uid} if uid else None, known)


KNOWN = {"tag": "known", "bug": {"id": "MDEV-1", "quality": "similar: 2/4 frames in order"},
         "match": {"quality": "similar", "bug_ids": ["MDEV-1"], "detail": "similar: 2/4",
                   "lines": [{"unique_id": "SIGSEGV|f|g"}]}}


def test_matrix_states_and_present_only():
    results = [_result("MDEV-1", "10.11.19", "crash", "aaa", "SIGSEGV|f", known=KNOWN),
               _result("MDEV-1", "10.11.18", "crash", "bbb", "SIGSEGV|g"),
               _result("MDEV-2", "10.11.19", "none"), _result("MDEV-2", "10.11.18", "crash", "ccc"),
               _result("MDEV-3", "10.11.19", "timeout"), _result("MDEV-3", "10.11.18", "none")]
    matrix = Matrix(results, ["10.11.19", "10.11.18"])
    rows = {r.name: r for r in matrix.rows}
    assert (rows["MDEV-1"].state("10.11.19"), rows["MDEV-1"].state("10.11.18")) == (PRESENT, CHANGED)
    assert (rows["MDEV-2"].state("10.11.19"), rows["MDEV-2"].state("10.11.18")) == (ABSENT, PRESENT)
    assert rows["MDEV-3"].state("10.11.19") == "timeout"
    assert [r.name for r in matrix.present_only("10.11.18", "10.11.19")] == ["MDEV-2"]
    assert matrix.counts()["10.11.18"]["crash"] == 2
    assert rows["MDEV-1"].attributed() == "MDEV-1"


def test_known_bugs_file_reads_back(tmp_path):
    results = [_result("MDEV-1", "10.11.19", "crash", "0123456789ab", "SIGSEGV|f|g", known=KNOWN),
               _result("MDEV-5", "10.11.19", "crash", "fedcba987654", "SIGABRT|x|y"),
               _result("MDEV-6", "10.11.19", "crash", "fedcba987654", "SIGABRT|x|y"),
               _result("MDEV-7", "10.11.19", "none")]
    matrix = Matrix(results, ["10.11.19"])
    with OutputDir.create(str(tmp_path / "out"), "the test's output") as out:
        path = known_bugs_file(out, "kb.txt", matrix, "kewpie.py --mode=replay x")
    entries = KnownBugs.load([path]).entries
    pairs = {(e.bug_id, e.match) for e in entries}
    assert ("MDEV-1", "sig:0123456789ab") in pairs and ("MDEV-1", "uid:SIGSEGV|f|g") in pairs
    # one signature of two bugs' reproducers names neither
    assert ("unattributed", "sig:fedcba987654") in pairs
    lines = table(matrix, type("C", (), {"skipped": [], "ignored": []})())
    assert any("MDEV-1" in ln and "crash 0123456789ab" in ln and "MDEV-1 (similar" in ln
               for ln in lines)


def test_history_text_reads_back():
    result = _result("MDEV-1", "10.11.19", "crash", "0123456789ab", "SIGSEGV|f|g", known=KNOWN)
    text = history_text(result)
    parsed = parse_failure(text)
    assert parsed == {"outcome": "crash", "unique_id": "SIGSEGV|f|g",
                      "known": "MDEV-1 (similar: 2/4 frames in order)"}
    assert match_text(result) == "MDEV-1 (similar: 2/4 frames in order)"
    assert bug_name("replay.MDEV-1") == "MDEV-1"
    assert ReplayResult.from_json(result.to_json()) == result


# ------------------------------------------------------------------ restore
class _Conn:
    @staticmethod
    def escape(value):
        return "'" + value.replace("'", "\\'") + "'"


def test_undo_statements():
    before = State(frozenset({"mysql", "test", "sys"}), frozenset({("root", "localhost")}),
                   frozenset(), {"event_scheduler": "OFF", "max_connections": "151",
                                 "gtid_binlog_pos": "0-1-1", "sql_mode": "STRICT"})
    now = State(frozenset({"mysql", "test", "sys", "db1"}),
                frozenset({("root", "localhost"), ("u", "%"), ("r1", "")}),
                frozenset({"srv"}), {"event_scheduler": "ON", "max_connections": "10",
                                     "gtid_binlog_pos": "0-1-9", "sql_mode": ""},
                frozenset({"SERVER_AUDIT"}))
    assert undo_statements(before, now, _Conn()) == [
        "DROP DATABASE IF EXISTS `db1`", "DROP ROLE IF EXISTS `r1`",
        "DROP USER IF EXISTS 'u'@'%'", "DROP SERVER IF EXISTS `srv`",
        "UNINSTALL PLUGIN IF EXISTS `SERVER_AUDIT`",
        "SET GLOBAL event_scheduler = 'OFF'", "SET GLOBAL max_connections = 151",
        "SET GLOBAL sql_mode = 'STRICT'"]
    assert undo_statements(before, before, _Conn()) == []


# ------------------------------------------------------------------ attribution
def test_attribution_own_other_unattributed(tmp_path):
    text = ("SIGSEGV|f|g|h|i ## MDEV-1\nSIGSEGV|p|q|r|s ## MDEV-2\nSIGSEGV|x|y|z|w ## MDEV-3\n")
    entries = load_strings("kb.strings", text.splitlines())
    other = {"tag": "known", "bug": {"id": "MDEV-9"},
             "match": {"quality": "exact", "bug_ids": ["MDEV-9"], "detail": "exact UniqueID",
                       "lines": [{"unique_id": "SIGSEGV|k"}]}}
    results = [_result("MDEV-1", "10.11.19", "crash", "a", "SIGSEGV|f", known=KNOWN),
               _result("MDEV-2", "10.11.19", "crash", "b", "SIGSEGV|k", known=other),
               _result("MDEV-3", "10.11.19", "crash", "c", "SIGSEGV|m"),
               _result("MDEV-4", "10.11.19", "crash", "d", "SIGSEGV|n"),
               _result("MDEV-1", "10.11.18", "crash", "a", "SIGSEGV|f")]
    quality = attribute(results, "10.11.19", entries)
    assert (quality.crashes, quality.listed, quality.shared) == (4, 3, 0)
    assert [(a.name, a.verdict) for a in quality.rows] == [
        ("MDEV-1", OWN), ("MDEV-2", OTHER), ("MDEV-3", UNATTRIBUTED)]
    assert quality.rows[2].listed == "SIGSEGV|x|y|z|w"
    assert round(quality.own_share, 2) == 0.33
    # one crash of three bugs' reproducers is none's own
    alike = [_result(b, "10.11.19", "crash", "same", "SIGABRT|x") for b in
             ("MDEV-1", "MDEV-2", "MDEV-3")]
    quality = attribute(alike, "10.11.19", entries)
    assert quality.shared == 3 and quality.judged == 0 and quality.own_share == 0.0
    assert {a.verdict for a in quality.rows} == {SHARED}
    assert quality.shared_named_other == []
    # a shared crash named for another bug is still told
    alike[0].known = other
    quality = attribute(alike, "10.11.19", entries)
    assert [(a.name, a.named) for a in quality.shared_named_other] == [("MDEV-1", ("MDEV-9",))]
    assert quality.to_json()["shared_named_other"] == 1


def test_reproducers_of_one_name_in_two_folders(tmp_path):
    a = _write(str(tmp_path / "a" / "MDEV-1.sql"), "SELECT 1;\n")
    b = _write(str(tmp_path / "b" / "MDEV-1.sql"), "SELECT 2;\n")
    names = sorted(r.name for r in discover([a, b]).reproducers)
    assert names == ["a.MDEV-1", "b.MDEV-1"]


# ------------------------------------------------------------------ scheduling
def test_a_free_bot_takes_a_job_its_server_serves():
    from lib.replay.schedule import next_job
    groups = {0: "a", 1: "a", 2: "a", 3: "b", 4: "b", 5: "c"}
    # its own group first, wherever it is queued
    assert next_job([3, 4, 1, 5], groups, "a", {"b"}) == 2
    # else a group no other busy bot is on
    assert next_job([0, 1, 3, 5], groups, "d", {"a"}) == 2
    assert next_job([0, 1, 3, 5], groups, None, {"a", "b"}) == 3
    # else the queue's head
    assert next_job([0, 1], groups, None, {"a"}) == 0
    assert next_job([4], groups, "a", {"b"}) == 0
