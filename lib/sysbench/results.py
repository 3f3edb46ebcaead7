"""The results database: SQLite in the workdir by default, or a MySQL-family server.

Runs give it the results history's store (``engine``: lib/history/, docs/history.md),
where ``kewpie_sweeps`` and ``kewpie_runs`` are part of the history's schema; a path or
a DSN opens a database of its own, as before.
"""
from __future__ import annotations

import json
import sqlite3
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import pymysql

from ..errors import UsageError
from ..platform.secrets import redact, redact_text
from .monitor import as_rows, from_rows
from .parse import SysbenchResult
from .sweep import CheckRecord, RunRecord, SweepResult, SweepSpec

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

RUN_COLUMNS = ("basedir", "version", "value", "threads", "rep", "tps", "qps", "lat_avg",
               "lat_pct", "errors", "reconnects", "result")


class ResultsDB:
    """Stores sweeps and their runs; finds baselines."""

    def __init__(self, sqlite_path: str | None = None, dsn: str | None = None,
                 engine: "Engine | None" = None) -> None:
        """engine: the results history's store (its tables made by its schema)."""
        self.conn: Any
        if engine is not None:  # a DB-API connection of the history's store
            self.conn = engine.raw_connection()
            if engine.dialect.name == "sqlite":
                self.mark, key = "?", "INTEGER PRIMARY KEY AUTOINCREMENT"
            else:
                self.mark, key = "%s", "BIGINT PRIMARY KEY AUTO_INCREMENT"
        elif dsn:
            url = urlparse(dsn)
            if url.scheme not in ("mysql", "mariadb"):
                raise UsageError(f"--results-db-dsn {redact_text(dsn)}: expected "
                                 f"mysql://user:pass@host:port/db")
            self.conn = pymysql.connect(host=url.hostname or "127.0.0.1", port=url.port or 3306,
                                             user=unquote(url.username or "root"),
                                             password=unquote(url.password or ""),
                                             database=url.path.lstrip("/") or None, autocommit=True)
            self.mark, key = "%s", "INTEGER PRIMARY KEY AUTO_INCREMENT"
        else:
            self.conn = sqlite3.connect(sqlite_path or ":memory:")
            self.mark, key = "?", "INTEGER PRIMARY KEY AUTOINCREMENT"
        cur = self.conn.cursor()
        cur.execute(f"CREATE TABLE IF NOT EXISTS kewpie_sweeps (id {key}, name VARCHAR(200), "
                    "label VARCHAR(200), context_key VARCHAR(64), created VARCHAR(32), "
                    "spec TEXT, context TEXT)")
        cur.execute(f"CREATE TABLE IF NOT EXISTS kewpie_runs (id {key}, sweep_id INTEGER, "
                    "basedir TEXT, version VARCHAR(100), value VARCHAR(100), threads INTEGER, "
                    "rep INTEGER, tps DOUBLE PRECISION, qps DOUBLE PRECISION, "
                    "lat_avg DOUBLE PRECISION, lat_pct DOUBLE PRECISION, errors INTEGER, "
                    "reconnects INTEGER, result TEXT)")
        self._create_details(cur, key)
        self.conn.commit()

    def _sql(self, text: str) -> str:
        return text.replace("?", self.mark)

    def save(self, sweep: SweepResult, label: str, run_id: int | None = None) -> int:
        """Store a sweep and its runs (run_id: the history's run that measured it; the
        spec's and context's secrets, such as a server option's password, as ``***``);
        return its id."""
        cur = self.conn.cursor()
        cur.execute(self._sql("INSERT INTO kewpie_sweeps (name, label, context_key, created, spec, "
                              "context) VALUES (?, ?, ?, ?, ?, ?)"),
                    (sweep.spec.name, label, sweep.context.get("key", ""),
                     time.strftime("%Y-%m-%dT%H:%M:%S"), json.dumps(redact(sweep.spec.to_dict())),
                     json.dumps(redact(sweep.context))))
        sweep_id = cur.lastrowid
        if run_id is not None:
            cur.execute(self._sql("UPDATE kewpie_sweeps SET run_id = ? WHERE id = ?"),
                        (run_id, sweep_id))
        for run in sweep.runs:
            r = run.result
            stored = r.to_dict()
            stored.pop("histogram", None)  # in kewpie_run_histograms
            cur.execute(self._sql(f"INSERT INTO kewpie_runs (sweep_id, {', '.join(RUN_COLUMNS)}) "
                                  f"VALUES (?, {', '.join('?' * len(RUN_COLUMNS))})"),
                        (sweep_id, run.basedir, run.version, str(run.value), run.threads, run.repeat,
                         r.tps, r.qps, r.latency_avg_ms, r.latency_pct_ms, r.errors, r.reconnects,
                         json.dumps(stored)))
            self._save_details(cur, int(cur.lastrowid), run)
        self._save_checks(cur, int(sweep_id), sweep.checks)
        self.conn.commit()
        return int(sweep_id)

    def find(self, baseline: str, context_key: str, exclude_id: int | None = None) -> int | None:
        """The id of the baseline: the newest sweep labelled baseline, or with
        baseline == 'last', the newest other sweep with the same context."""
        cur = self.conn.cursor()
        if baseline == "last":
            cur.execute(self._sql("SELECT id FROM kewpie_sweeps WHERE context_key = ? AND id <> ? "
                                  "ORDER BY id DESC LIMIT 1"), (context_key, exclude_id or -1))
        else:
            cur.execute(self._sql("SELECT id FROM kewpie_sweeps WHERE label = ? AND id <> ? "
                                  "ORDER BY id DESC LIMIT 1"), (baseline, exclude_id or -1))
        row = cur.fetchone()
        return int(row[0]) if row else None

    def load(self, sweep_id: int) -> SweepResult:
        """A stored sweep with its runs."""
        cur = self.conn.cursor()
        cur.execute(self._sql("SELECT spec, context FROM kewpie_sweeps WHERE id = ?"), (sweep_id,))
        spec_text, context_text = cur.fetchone()
        sweep = SweepResult(SweepSpec(**json.loads(spec_text)), json.loads(context_text))
        cur.execute(self._sql(f"SELECT id, {', '.join(RUN_COLUMNS)} FROM kewpie_runs "
                              "WHERE sweep_id = ? ORDER BY id"), (sweep_id,))
        for run_id, basedir, version, value, threads, rep, *_rest, result in cur.fetchall():
            result_obj = SysbenchResult.from_dict(json.loads(result))
            run = RunRecord(basedir, version, value, threads, rep, result_obj)
            self._load_details(int(run_id), run)
            sweep.runs.append(run)
        sweep.checks = self.load_checks(sweep_id)
        return sweep

    # ------------------------------------------------------------------ details
    # Issue 35's tables: additive, keyed by kewpie_runs.id / kewpie_sweeps.id; the
    # sweeps and runs tables above are unchanged.
    def _create_details(self, cur: Any, key: str) -> None:
        """Create the details tables when missing: each run's cell, latency percentiles
        and TPC-C-like figures (``kewpie_run_details``), sysbench's latency histogram
        (``kewpie_run_histograms``), the resource monitors' seconds
        (``kewpie_run_samples``), the TPC-C-like transactions (``kewpie_run_txns``) and
        the sweep's consistency checks (``kewpie_sweep_checks``)."""
        cur.execute("CREATE TABLE IF NOT EXISTS kewpie_run_details (run_id INTEGER PRIMARY KEY, "
                    "cell TEXT, lat_p50 DOUBLE PRECISION, lat_p95 DOUBLE PRECISION, "
                    "lat_p99 DOUBLE PRECISION, lat_max DOUBLE PRECISION, "
                    "tpmc_like DOUBLE PRECISION, planned_reconnects INTEGER, log TEXT)")
        cur.execute(f"CREATE TABLE IF NOT EXISTS kewpie_run_histograms (id {key}, "
                    "run_id INTEGER, value_ms DOUBLE PRECISION, events INTEGER)")
        cur.execute(f"CREATE TABLE IF NOT EXISTS kewpie_run_samples (id {key}, run_id INTEGER, "
                    "t DOUBLE PRECISION, source VARCHAR(64), metric VARCHAR(64), "
                    "value DOUBLE PRECISION)")
        cur.execute(f"CREATE TABLE IF NOT EXISTS kewpie_run_txns (id {key}, run_id INTEGER, "
                    "txn VARCHAR(32), events INTEGER, rollbacks INTEGER, retries INTEGER, "
                    "mix_pct DOUBLE PRECISION, avg_ms DOUBLE PRECISION, "
                    "p50_ms DOUBLE PRECISION, p95_ms DOUBLE PRECISION, "
                    "p99_ms DOUBLE PRECISION, max_ms DOUBLE PRECISION)")
        cur.execute(f"CREATE TABLE IF NOT EXISTS kewpie_sweep_checks (id {key}, sweep_id INTEGER, "
                    "version VARCHAR(100), data_set VARCHAR(100), passed INTEGER, output TEXT)")

    def _save_details(self, cur: Any, run_id: int, run: RunRecord) -> None:
        """One run's cell, percentiles, histogram, samples and transactions."""
        r = run.result
        pct = r.percentiles()
        cur.execute(self._sql("INSERT INTO kewpie_run_details (run_id, cell, lat_p50, lat_p95, "
                              "lat_p99, lat_max, tpmc_like, planned_reconnects, log) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                    (run_id, json.dumps(run.cell), pct["p50"], pct["p95"], pct["p99"], pct["max"],
                     r.tpcc.tpmc_like if r.tpcc else None, r.planned_reconnects, run.log))
        if r.histogram:
            cur.executemany(self._sql("INSERT INTO kewpie_run_histograms (run_id, value_ms, "
                                      "events) VALUES (?, ?, ?)"),
                            [(run_id, value, count) for value, count in r.histogram])
        if run.samples:
            cur.executemany(self._sql("INSERT INTO kewpie_run_samples (run_id, t, source, "
                                      "metric, value) VALUES (?, ?, ?, ?, ?)"),
                            [(run_id, *row) for row in as_rows(run.samples)])
        if r.tpcc:
            cur.executemany(self._sql(
                "INSERT INTO kewpie_run_txns (run_id, txn, events, rollbacks, retries, mix_pct, "
                "avg_ms, p50_ms, p95_ms, p99_ms, max_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                [(run_id, t.name, t.count, t.rollbacks, t.retries, t.mix_pct, t.avg_ms, t.p50_ms,
                  t.p95_ms, t.p99_ms, t.max_ms) for t in r.tpcc.txns])

    def _save_checks(self, cur: Any, sweep_id: int, checks: list[CheckRecord]) -> None:
        """The sweep's TPC-C-like consistency checks."""
        for check in checks:
            cur.execute(self._sql("INSERT INTO kewpie_sweep_checks (sweep_id, version, data_set, "
                                  "passed, output) VALUES (?, ?, ?, ?, ?)"),
                        (sweep_id, check.version, check.data_set,
                         None if check.passed is None else int(check.passed), check.output))

    def _load_details(self, run_id: int, run: RunRecord) -> None:
        """Fill a loaded run's cell, histogram and samples from the details tables."""
        cur = self.conn.cursor()
        cur.execute(self._sql("SELECT cell, log FROM kewpie_run_details WHERE run_id = ?"),
                    (run_id,))
        row = cur.fetchone()
        if row:
            run.cell = json.loads(row[0]) if row[0] else {}
            run.log = row[1] or ""
        cur.execute(self._sql("SELECT value_ms, events FROM kewpie_run_histograms "
                              "WHERE run_id = ? ORDER BY id"), (run_id,))
        run.result.histogram = [(float(v), int(c)) for v, c in cur.fetchall()]
        run.samples = self.load_samples(run_id)

    def load_samples(self, run_id: int) -> list[Any]:
        """A run's monitor samples."""
        cur = self.conn.cursor()
        cur.execute(self._sql("SELECT t, source, metric, value FROM kewpie_run_samples "
                              "WHERE run_id = ? ORDER BY id"), (run_id,))
        return from_rows(list(cur.fetchall()))

    def load_checks(self, sweep_id: int) -> list[CheckRecord]:
        """A sweep's consistency checks."""
        cur = self.conn.cursor()
        cur.execute(self._sql("SELECT version, data_set, passed, output FROM kewpie_sweep_checks "
                              "WHERE sweep_id = ? ORDER BY id"), (sweep_id,))
        return [CheckRecord(v, d, None if p is None else bool(p), o)
                for v, d, p, o in cur.fetchall()]

