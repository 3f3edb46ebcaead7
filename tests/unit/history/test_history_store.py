"""The results history's logic over real SQLite files: records and their helpers,
patterns and dates, schema versions (an old sweeps database upgraded in place, the
sweeps' details tables of version 3),
writers (concurrent, spooled and sent again once), the queries' definitions and the
shard weights' cut.

Covers: lib/history/records.py, lib/history/patterns.py, lib/history/migrations.py,
lib/history/store.py, lib/history/writer.py, lib/history/spool.py, lib/history/writes.py,
lib/history/queries.py, lib/history/weights.py, lib/history/sweeps.py, lib/history/target.py,
lib/history/dsn.py, lib/history/schema.py, lib/sysbench/results.py, lib/run/recording.py
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import threading
from datetime import datetime, timedelta

import pytest

from lib.history.dsn import check_dsn, redact
from lib.history.errors import HistoryError, HistoryUsageError
from lib.history.migrations import current_version
from lib.history.patterns import literal_prefix, parse_when, to_like
from lib.history.queries import (SearchFilter, Window, flaky, search, slowest, timeline,
                                 unstable)
from lib.history.records import (ResultRecord, RunInfo, ci_context, evidence_link, first_lines,
                                 headline, join_name, new_run_uuid, parse_label, split_name,
                                 utcnow)
from lib.history.schema import SCHEMA_VERSION
from lib.history.spool import Spool, spool_dir
from lib.history.store import open_engine
from lib.history.target import StoreTarget
from lib.history.weights import read_durations
from lib.history.writer import HistoryWriter

LOG = logging.getLogger("test-history")


def _writer(target: StoreTarget, tmp_path, **run: object) -> HistoryWriter:
    info = RunInfo(new_run_uuid(), **run)  # type: ignore[arg-type]
    return HistoryWriter(target, info, spool_dir(str(tmp_path), target), LOG, background=False)


# ---------------------------------------------------------------- records
def test_names_split_from_their_combination_and_back():
    assert split_name("rpl.semi 'row'") == ("rpl.semi", "row")
    assert split_name("main.alter,innodb,debug") == ("main.alter", "innodb,debug")
    assert split_name("test_x.test_a[1,2]") == ("test_x.test_a[1,2]", "")
    assert split_name("main.plain") == ("main.plain", "")
    assert join_name("rpl.semi", "row") == "rpl.semi 'row'"
    assert join_name("main.alter", "innodb", "mtr") == "main.alter,innodb"


def test_failure_is_kept_short_and_its_headline_found():
    text = "t.T.test_x:\nTraceback (most recent call last):\n  File \"x\", line 1\n" \
           "AssertionError: timeout waiting\n" + "\n".join(f"log {i}" for i in range(100))
    kept = first_lines(text)
    assert kept.count("\n") == 11 and kept.startswith("t.T.test_x:")
    assert headline(text) == "AssertionError: timeout waiting"
    assert headline("servers could not start: port busy") == "servers could not start: port busy"
    assert len(first_lines("x" * 5000)) == 2000
    with pytest.raises(HistoryUsageError):
        ResultRecord("t", "broken")


def test_ci_context_from_jenkins_and_labels():
    env = {"JOB_NAME": "kewpie-nightly", "BUILD_NUMBER": "41", "GIT_BRANCH": "origin/10.11",
           "GIT_COMMIT": "abc123", "BUILD_URL": "https://ci/job/k/41/", "NODE_NAME": "agent-7"}
    ci = ci_context(env, {"platform": "debian-12", "flavor": "asan"})
    assert (ci["job"], ci["build"], ci["branch"], ci["revision"]) == ("kewpie-nightly", 41, "10.11",
                                                                      "abc123")
    assert ci["platform"] == "debian-12" and ci["labels"] == {"flavor": "asan", "node": "agent-7"}
    assert ci_context(env, {"branch": "main", "build": "x"})["branch"] == "main"
    assert ci_context({}, {})["build"] is None and ci_context({}, {})["platform"]
    assert parse_label(" k = v ") == ("k", "v")
    for bad in ("novalue", "=v", "bad key=v"):
        with pytest.raises(HistoryUsageError):
            parse_label(bad)


def test_evidence_in_a_jenkins_workspace_links_to_its_artifact(tmp_path):
    failed = tmp_path / "wd" / "failed" / "main.x"
    failed.mkdir(parents=True)
    env = {"WORKSPACE": str(tmp_path), "BUILD_URL": "https://ci/job/k/7/"}
    assert evidence_link(str(failed), env) == "https://ci/job/k/7/artifact/wd/failed/main.x"
    assert evidence_link("/elsewhere/x", env) == "/elsewhere/x"
    assert evidence_link(str(failed), {}) == str(failed)


def test_patterns_dates_and_dsns():
    assert to_like("*time_out%*") == "%time\\_out\\%%" and to_like("a?b") == "a_b"
    assert literal_prefix("main.foo*bar") == "main.foo" and literal_prefix("*x") == ""
    assert parse_when("") is None
    assert parse_when("2026-11-01") == datetime(2026, 11, 1)
    assert abs((utcnow() - parse_when("12h")) - timedelta(hours=12)) < timedelta(seconds=5)
    with pytest.raises(HistoryUsageError):
        parse_when("yesterday")
    assert check_dsn("mysql://u:p@h:3306/db")
    for bad in ("mysql://h/", "postgres://h/db", "mysql://h:notaport/db"):
        with pytest.raises(HistoryUsageError):
            check_dsn(bad)
    assert redact("mysql://u:secret@h/db") == "mysql://u:***@h/db"


# ---------------------------------------------------------------- store and schema
OLD_SWEEPS = [
    "CREATE TABLE kewpie_sweeps (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(200), "
    "label VARCHAR(200), context_key VARCHAR(64), created VARCHAR(32), spec TEXT, context TEXT)",
    "CREATE TABLE kewpie_runs (id INTEGER PRIMARY KEY AUTOINCREMENT, sweep_id INTEGER, "
    "basedir TEXT, version VARCHAR(100), value VARCHAR(100), threads INTEGER, rep INTEGER, "
    "tps DOUBLE PRECISION, qps DOUBLE PRECISION, lat_avg DOUBLE PRECISION, "
    "lat_pct DOUBLE PRECISION, errors INTEGER, reconnects INTEGER, result TEXT)",
]
SPEC = {"name": "ro", "workload": "oltp_read_only", "threads": [1, 2], "duration": 3.0,
        "warmup": 0.0, "repeats": 1, "tables": 1, "table_size": 100, "variable": None,
        "values": [None], "basedirs": [], "server_options": []}
RESULT = {"tps": 1000.5, "qps": 20000.0, "transactions": 3001, "queries": 60000, "errors": 0,
          "reconnects": 0, "latency_min_ms": 0.5, "latency_avg_ms": 1.0, "latency_max_ms": 9.0,
          "latency_pct_ms": 2.0, "percentile": 95, "total_time_s": 3.0, "intervals": []}


def _old_results_db(path: str) -> None:
    """A sweeps results database as kewpie wrote it before the history."""
    with sqlite3.connect(path) as db:
        for ddl in OLD_SWEEPS:
            db.execute(ddl)
        db.execute("INSERT INTO kewpie_sweeps (name, label, context_key, created, spec, context) "
                   "VALUES ('ro', 'relaxed', 'k1', '2026-01-01T00:00:00', ?, '{}')",
                   (json.dumps(SPEC),))
        db.execute("INSERT INTO kewpie_runs (sweep_id, basedir, version, value, threads, rep, tps,"
                   " qps, lat_avg, lat_pct, errors, reconnects, result) VALUES (1, '', '10.11.19',"
                   " 'None', 1, 1, 1000.5, 20000, 1, 2, 0, 0, ?)", (json.dumps(RESULT),))


def test_an_old_sweeps_database_opens_as_a_store_and_keeps_its_sweeps(tmp_path):
    from lib.sysbench.results import ResultsDB
    path = str(tmp_path / "results.sqlite")
    _old_results_db(path)
    engine = open_engine(StoreTarget(sqlite_path=path), writer=True)
    with engine.connect() as conn:
        assert current_version(conn) == SCHEMA_VERSION
    db = ResultsDB(engine=engine)
    assert db.find("relaxed", "k1") == 1
    loaded = db.load(1)
    assert loaded.runs[0].result.tps == 1000.5 and loaded.spec.workload == "oltp_read_only"
    columns = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(kewpie_sweeps)")]
    assert "run_id" in columns
    # and copied into another store once
    from lib.history.sweeps import import_legacy
    other = open_engine(StoreTarget(sqlite_path=str(tmp_path / "h.sqlite")), writer=True,
                        create=True)
    assert import_legacy(other, path) == 1 and import_legacy(other, path) == 0
    assert ResultsDB(engine=other).load(1).runs[0].result.tps == 1000.5
    engine.dispose()
    other.dispose()


# The details tables as the sweeps' own SQL made them in a store of version 1 or 2.
V1_DETAILS = [
    "CREATE TABLE kewpie_run_details (run_id INTEGER PRIMARY KEY, cell TEXT, "
    "lat_p50 DOUBLE PRECISION, lat_p95 DOUBLE PRECISION, lat_p99 DOUBLE PRECISION, "
    "lat_max DOUBLE PRECISION, tpmc_like DOUBLE PRECISION, planned_reconnects INTEGER, log TEXT)",
    "CREATE TABLE kewpie_run_histograms (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER, "
    "value_ms DOUBLE PRECISION, events INTEGER)",
    "CREATE TABLE kewpie_run_samples (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER, "
    "t DOUBLE PRECISION, source VARCHAR(64), metric VARCHAR(64), value DOUBLE PRECISION)",
    "CREATE TABLE kewpie_run_txns (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER, "
    "txn VARCHAR(32), events INTEGER, rollbacks INTEGER, retries INTEGER, "
    "mix_pct DOUBLE PRECISION, avg_ms DOUBLE PRECISION, p50_ms DOUBLE PRECISION, "
    "p95_ms DOUBLE PRECISION, p99_ms DOUBLE PRECISION, max_ms DOUBLE PRECISION)",
    "CREATE TABLE kewpie_sweep_checks (id INTEGER PRIMARY KEY AUTOINCREMENT, sweep_id INTEGER, "
    "version VARCHAR(100), data_set VARCHAR(100), passed INTEGER, output TEXT)",
]
DETAIL_TABLES = ("kewpie_run_details", "kewpie_run_histograms", "kewpie_run_samples",
                 "kewpie_run_txns", "kewpie_sweep_checks")


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("sweeps_had_written", [False, True])
def test_an_older_store_gains_the_sweeps_details_tables(tmp_path, sweeps_had_written,
                                                         version):
    """Version 3 declares the sweeps' details tables: a store of version 1 (before the
    secrets' scrub, version 2) or 2 gets them, or keeps those (and their rows) the
    sweeps' own SQL had made, with the indexes."""
    path = str(tmp_path / "h.sqlite")
    open_engine(StoreTarget(sqlite_path=path), writer=True, create=True).dispose()
    with sqlite3.connect(path) as db:  # back to the older version
        for table in DETAIL_TABLES:
            db.execute(f"DROP TABLE {table}")
        db.execute(f"UPDATE history_meta SET value = '{version}' WHERE name = 'schema_version'")
        if sweeps_had_written:
            for ddl in V1_DETAILS:
                db.execute(ddl)
            db.execute("INSERT INTO kewpie_sweep_checks (sweep_id, version, data_set, passed, "
                       "output) VALUES (1, '10.11', 'tpcc_like', 1, 'kept')")
    engine = open_engine(StoreTarget(sqlite_path=path), writer=True)
    with engine.connect() as conn:
        assert current_version(conn) == SCHEMA_VERSION == 3
    engine.dispose()
    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        kept = db.execute("SELECT output FROM kewpie_sweep_checks").fetchall()
    assert set(DETAIL_TABLES) <= tables
    assert "ix_kewpie_run_samples_run" in indexes and "ix_kewpie_sweep_checks_sweep" in indexes
    assert kept == ([("kept",)] if sweeps_had_written else [])


def test_a_store_newer_than_this_kewpie_is_refused_and_a_missing_one_named(tmp_path):
    path = str(tmp_path / "h.sqlite")
    open_engine(StoreTarget(sqlite_path=path), writer=True, create=True).dispose()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE history_meta SET value = '99' WHERE name = 'schema_version'")
    with pytest.raises(HistoryError, match="newer than this kewpie"):
        open_engine(StoreTarget(sqlite_path=path))
    with pytest.raises(HistoryError, match="no history store at"):
        open_engine(StoreTarget(sqlite_path=str(tmp_path / "none.sqlite")))


def test_the_switch_to_wal_mode_waits_for_a_busy_file():
    from lib.history.store import _wal_mode

    class Cursor:
        """Busy twice (another first writer holds the new file), then in WAL mode."""

        def __init__(self, error: str = "database is locked") -> None:
            self.tries, self.error = 0, error

        def execute(self, sql: str) -> None:
            assert sql == "PRAGMA journal_mode=WAL"
            self.tries += 1
            if self.tries < 3:
                raise sqlite3.OperationalError(self.error)

        def fetchall(self) -> list:
            return [("wal",)]

    cursor = Cursor()
    _wal_mode(cursor)
    assert cursor.tries == 3
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _wal_mode(Cursor("disk I/O error"))  # any other error at once


# ---------------------------------------------------------------- writers
def test_concurrent_writers_lose_nothing(tmp_path):
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    errors: list[BaseException] = []

    def agent(n: int) -> None:
        try:
            writer = _writer(target, tmp_path / f"a{n}", mode="native")
            for i in range(150):
                writer.record_result(f"suite.t{i}", "pass", i, bot=f"bot{n}")
            writer.close(0)
            assert not writer.warned and writer.sent == 150
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    db = sqlite3.connect(target.sqlite_path)
    assert db.execute("SELECT COUNT(*), COUNT(DISTINCT run_id) FROM history_results").fetchone() \
        == (450, 3)


def test_background_writer_stores_every_result_and_the_end(tmp_path):
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    writer = HistoryWriter(target, RunInfo(new_run_uuid()), str(tmp_path / "spool"), LOG)
    for i in range(1200):  # more than one batch
        writer.record_result(f"s.t{i}", "pass", i)
    writer.close(exit_code=0)
    db = sqlite3.connect(target.sqlite_path)
    assert db.execute("SELECT COUNT(*), MIN(seq), MAX(seq) FROM history_results").fetchone() == \
        (1200, 1, 1200)
    assert db.execute("SELECT exit_code FROM history_runs").fetchone() == (0,)


def test_a_down_store_spools_and_the_next_run_sends_each_result_once(tmp_path, caplog):
    broken = tmp_path / "not-a-dir"
    broken.write_text("a file where the store's folder should be")
    down = StoreTarget(sqlite_path=str(broken / "h.sqlite"))
    writer = _writer(down, tmp_path, mode="native")
    with caplog.at_level(logging.WARNING, logger=LOG.name):
        for i in range(3):
            writer.record_result(f"s.t{i}", "fail" if i == 1 else "pass", 10)
        writer.close(exit_code=1)
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    assert writer.spooled == 3 and "unreachable" in caplog.records[0].getMessage()

    # the store comes back (here: the spool of a store that is up), sent twice: once stored
    up = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    directory = spool_dir(str(tmp_path), up)
    spool = Spool(directory, writer.run)
    for i in range(3):
        spool.add(ResultRecord(f"s.t{i}", "pass", seq=i + 1))
    spool.end(utcnow(), 1)
    shutil.copy(spool.path, spool.path + ".copy")
    later = _writer(up, tmp_path, mode="native")
    later.record_result("s.next", "pass")
    later.close(0)
    os.rename(spool.path + ".copy", spool.path)  # as if a killed sender left it
    again = _writer(up, tmp_path, mode="native")
    again.record_result("s.next", "pass")
    again.close(0)
    db = sqlite3.connect(up.sqlite_path)
    assert db.execute("SELECT COUNT(*) FROM history_results WHERE run_id = "
                      "(SELECT id FROM history_runs WHERE uuid = ?)", (writer.run.uuid,)
                      ).fetchone() == (3,)
    assert db.execute("SELECT exit_code FROM history_runs WHERE uuid = ?",
                      (writer.run.uuid,)).fetchone() == (1,)
    assert os.listdir(directory) == []


# ---------------------------------------------------------------- queries
def _filled(tmp_path) -> tuple[StoreTarget, datetime]:
    """Ten runs: a flake (fails on even runs), one saved by a retry, a slowing test, a
    test that always fails, skips."""
    target = StoreTarget(sqlite_path=str(tmp_path / "q.sqlite"))
    start = utcnow() - timedelta(days=10)
    for n in range(10):
        at = start + timedelta(days=n)
        writer = _writer(target, tmp_path, started_at=at, mode="native",
                         branch="main" if n < 5 else "10.11", tree_version="10.11.19",
                         platform="debian-12-x86_64", job="nightly", build=n + 1)
        writer.record_result("main.flake", "fail" if n % 2 == 0 else "pass", 100,
                             failure="AssertionError: lock wait timeout" if n % 2 == 0 else "",
                             finished_at=at)
        writer.record_result("main.retried", "flaky" if n == 3 else "pass", 50, attempts=2 if n == 3 else 1,
                             failure="first attempt: deadlock" if n == 3 else "", finished_at=at)
        writer.record_result("main.slower", "pass", 1000 + 100 * n, finished_at=at)
        writer.record_result("main.broken", "fail", 10, failure="Error: never works",
                             finished_at=at)
        writer.record_result("main.skip", "skipped", 0, finished_at=at)
        writer.close(0)
    return target, start


def test_search_filters_and_orders_newest_first(tmp_path):
    target, start = _filled(tmp_path)
    engine = open_engine(target)
    with engine.connect() as conn:
        found = search(conn, SearchFilter(failure="*lock wait*"))
        assert [r.test for r in found] == ["main.flake"] * 5
        assert [r.finished_at for r in found] == sorted((r.finished_at for r in found), reverse=True)
        assert len(search(conn, SearchFilter(failure="timeout", branch="10.11"))) == 2
        assert len(search(conn, SearchFilter(test="main.fl*", status="all"))) == 10
        assert len(search(conn, SearchFilter(test="*a?e*", status="pass"))) == 5  # flake
        assert search(conn, SearchFilter(status="flaky"))[0].attempts == 2
        window = SearchFilter(failure="*", since=start + timedelta(days=7, hours=1),
                              until=start + timedelta(days=9, hours=1))
        assert {r.finished_at for r in search(conn, window)} == {start + timedelta(days=8),
                                                                  start + timedelta(days=9)}
        assert len(search(conn, SearchFilter(tree="10.11.1*", platform="debian*", limit=3))) == 3
        assert search(conn, SearchFilter(failure="*nowhere*")) == []
        assert [r.status for r in timeline(conn, "main.flake", limit=3)] == ["pass", "fail", "pass"]
    engine.dispose()


def test_flaky_unstable_and_slowest_definitions(tmp_path):
    target, _ = _filled(tmp_path)
    engine = open_engine(target)
    with engine.connect() as conn:
        rows = {r.test: r for r in flaky(conn, Window(runs=10))}
        assert set(rows) == {"main.flake", "main.retried"}  # main.broken never passed
        flake, retried = rows["main.flake"], rows["main.retried"]
        assert (flake.results, flake.failed, flake.passed, flake.failure_rate) == (10, 5, 5, 0.5)
        assert (retried.flaky, retried.failure_rate, retried.retry_pass_rate) == (1, 0.1, 1.0)
        assert "lock wait timeout" in flake.last_failure
        last4 = {r.test: r for r in flaky(conn, Window(runs=4))}
        assert last4["main.flake"].results == 4
        assert {r.test for r in flaky(conn, Window(runs=10, branch="10.11"))} == {"main.flake"}
        assert [r.test for r in unstable(conn, Window(runs=10), 0.5)] == ["main.broken",
                                                                          "main.flake"]
        slow = slowest(conn, Window(runs=10), 2)
        assert slow[0].test == "main.slower" and slow[0].last_ms == 1900
        assert slow[0].trend is not None and slow[0].trend > 0.3
    engine.dispose()


def test_shard_weights_are_the_same_for_every_shard_of_a_build(tmp_path):
    target, _ = _filled(tmp_path)
    first = read_durations(target, cut_key="nightly#11#2", job="nightly", before_build=11,
                           create_cut=True)
    assert first["main.slower"] == pytest.approx(1450.0)
    later = _writer(target, tmp_path, mode="native", job="nightly", build=10)  # ends meanwhile
    later.record_result("main.slower", "pass", 99999)
    later.close(0)
    second = read_durations(target, cut_key="nightly#11#2", job="nightly", before_build=11,
                            create_cut=True)
    assert second == first
    fresh = read_durations(target, cut_key="nightly#12#2", job="nightly", before_build=12,
                           create_cut=True)
    assert fresh["main.slower"] != first["main.slower"]
    assert read_durations(StoreTarget(sqlite_path=str(tmp_path / "none.sqlite"))) == {}
