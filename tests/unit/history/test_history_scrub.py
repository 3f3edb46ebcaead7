"""Schema version 2 scrubs the passwords older kewpies stored: a SQLite store written at
version 1 with a DSN's password and a secret server option in a run's options, labels
and texts, a result's failure and a sweep's spec and context opens at version 3 (the
scrub is its step to version 2; version 3 declares the sweeps' details tables) with each
secret as ``***``, everything else as it was, and no copy of the password left in the
file or its log; a store read through the queries shows none even unscrubbed.

Covers: lib/history/migrations.py, lib/history/schema.py, lib/history/queries.py,
lib/history/commands.py (history run)
"""
from __future__ import annotations

import glob
import io
import json
import logging
import sqlite3

from lib.history.commands import Defaults, build_parser, run_command
from lib.history.migrations import current_version, scrubbed
from lib.history.records import RunInfo, new_run_uuid
from lib.history.schema import SCHEMA_VERSION
from lib.history.store import open_engine
from lib.history.target import StoreTarget
from lib.history.writer import HistoryWriter

PW = "Wm4-s3cr3t"
OLD_OPTIONS = {"history_dsn": f"mysql://hist:{PW}@127.0.0.1:3306/kewpie_history",
               "results_db_dsn": f"mysql://hist:{PW}@127.0.0.1:3306/kewpie_history",
               "mysqld_options": [f"--wsrep-sst-auth=sst:{PW}", "--max-connections=99"],
               "repeat": 3, "suites": ["main"]}


def _store_at_version_1(path: str) -> None:
    """A store as kewpie wrote it before version 2: its rows hold the password."""
    writer = HistoryWriter(StoreTarget(sqlite_path=path), RunInfo(new_run_uuid(), mode="native"),
                           path + ".spool", logging.getLogger("t"), background=False)
    writer.record_result("main.plain", "pass", 5)
    writer.close(0)
    with sqlite3.connect(path) as db:  # the old way: straight into the tables
        db.execute("UPDATE history_meta SET value = '1' WHERE name = 'schema_version'")
        db.execute("INSERT INTO history_runs (uuid, started_at, host, platform, kewpie_version, "
                   "mode, selection, shard, options, tree_version, tree_path, trees, branch, "
                   "revision, job, build_url, labels) VALUES ('old-run', '2026-11-01 10:00:00', "
                   "'agent1', 'debian', '', 'native', '--suite=main', '', ?, '10.11.19', '/usr', "
                   "'[]', 'main', '', 'nightly', ?, ?)",
                   (json.dumps(OLD_OPTIONS), f"https://ci:{PW}@jenkins/job/nightly/7/",
                    json.dumps({"node": "a1", "dsn": f"mysql://x:{PW}@h/d"})))
        run_id = db.execute("SELECT id FROM history_runs WHERE uuid = 'old-run'").fetchone()[0]
        db.execute("INSERT INTO history_results (run_id, bot, seq, test, combination, status, "
                   "failing, duration_ms, attempts, finished_at, failure, signature, evidence) "
                   "VALUES (?, 'bot0', 1, 'main.old', '', 'fail', 1, 10, 1, "
                   "'2026-11-01 10:01:00', ?, '', '/wd/failed/main.old')",
                   (run_id, f"AssertionError: mysqld --wsrep_sst_auth=sst:{PW} died",))
        db.execute("INSERT INTO kewpie_sweeps (name, label, context_key, created, spec, context) "
                   "VALUES ('ro', 'x', 'k', '2026-11-01', ?, ?)",
                   (json.dumps({"server_options": [f"--wsrep-sst-auth=a:{PW}"], "threads": [1]}),
                    json.dumps({"options": [f"--wsrep-sst-auth=a:{PW}"], "versions": ["10.11"]})))


def _bytes_hold(path: str, text: str) -> list[str]:
    return [p for p in glob.glob(path + "*") if text.encode() in open(p, "rb").read()]


def test_a_version_1_store_is_scrubbed_on_open(tmp_path):
    path = str(tmp_path / "h.sqlite")
    _store_at_version_1(path)
    assert _bytes_hold(path, PW)  # the planted rows are there, as before the fix
    engine = open_engine(StoreTarget(sqlite_path=path), writer=True)
    with engine.connect() as conn:
        assert current_version(conn) == SCHEMA_VERSION == 3
    engine.dispose()
    with sqlite3.connect(path) as db:
        options, build_url, labels = db.execute(
            "SELECT options, build_url, labels FROM history_runs WHERE uuid = 'old-run'").fetchone()
        failure = db.execute("SELECT failure FROM history_results WHERE test = 'main.old'"
                             ).fetchone()[0]
        spec, context = db.execute("SELECT spec, context FROM kewpie_sweeps").fetchone()
        plain = db.execute("SELECT options FROM history_runs WHERE uuid <> 'old-run'").fetchone()[0]
    assert json.loads(options) == {
        **OLD_OPTIONS, "history_dsn": "mysql://hist:***@127.0.0.1:3306/kewpie_history",
        "results_db_dsn": "mysql://hist:***@127.0.0.1:3306/kewpie_history",
        "mysqld_options": ["--wsrep-sst-auth=***", "--max-connections=99"]}
    assert build_url == "https://ci:***@jenkins/job/nightly/7/"
    assert json.loads(labels) == {"node": "a1", "dsn": "mysql://x:***@h/d"}
    assert failure == "AssertionError: mysqld --wsrep_sst_auth=*** died"
    assert json.loads(spec)["server_options"] == ["--wsrep-sst-auth=***"]
    assert json.loads(context) == {"options": ["--wsrep-sst-auth=***"], "versions": ["10.11"]}
    assert plain == "{}"  # rows without a secret are not rewritten
    assert _bytes_hold(path, PW) == []  # nor is a copy left in the file's free pages or log


def test_history_run_and_the_page_show_no_secret_whatever_the_rows_hold(tmp_path):
    path = str(tmp_path / "h.sqlite")
    _store_at_version_1(path)
    open_engine(StoreTarget(sqlite_path=path)).dispose()  # scrubbed
    with sqlite3.connect(path) as db:  # a row written unscrubbed after all (another tool)
        db.execute("UPDATE history_runs SET options = ? WHERE uuid = 'old-run'",
                   (json.dumps(OLD_OPTIONS),))
    out = io.StringIO()
    args = build_parser().parse_args(["run", "2", f"--history={path}"])
    assert run_command(args, Defaults(workdir=str(tmp_path)), out) == 0
    text = out.getvalue()
    assert PW not in text and "history_dsn=mysql://hist:***@127.0.0.1:3306/kewpie_history" in text
    from lib.history.web import create_app
    engine = open_engine(StoreTarget(sqlite_path=path))
    page = create_app(engine).test_client().get("/run/2").get_data(as_text=True)
    engine.dispose()
    assert PW not in page and "--wsrep-sst-auth=***" in page


def test_scrubbed_keeps_json_and_text_apart():
    assert scrubbed('{"a": 1}', True) == '{"a": 1}'
    assert scrubbed(json.dumps({"password": "x"}), True) == '{"password": "***"}'
    assert scrubbed("not json --password=x", True) == "not json --password=***"
    assert scrubbed("--password=x", False) == "--password=***"
