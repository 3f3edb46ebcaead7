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
from .parse import Interval, SysbenchResult
from .sweep import RunRecord, SweepResult, SweepSpec

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
                raise UsageError(f"--results-db-dsn {dsn}: expected mysql://user:pass@host:port/db")
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
        self.conn.commit()

    def _sql(self, text: str) -> str:
        return text.replace("?", self.mark)

    def save(self, sweep: SweepResult, label: str, run_id: int | None = None) -> int:
        """Store a sweep and its runs (run_id: the history's run that measured it); return
        its id."""
        cur = self.conn.cursor()
        cur.execute(self._sql("INSERT INTO kewpie_sweeps (name, label, context_key, created, spec, "
                              "context) VALUES (?, ?, ?, ?, ?, ?)"),
                    (sweep.spec.name, label, sweep.context.get("key", ""),
                     time.strftime("%Y-%m-%dT%H:%M:%S"), json.dumps(sweep.spec.to_dict()),
                     json.dumps(sweep.context)))
        sweep_id = cur.lastrowid
        if run_id is not None:
            cur.execute(self._sql("UPDATE kewpie_sweeps SET run_id = ? WHERE id = ?"),
                        (run_id, sweep_id))
        for run in sweep.runs:
            r = run.result
            cur.execute(self._sql(f"INSERT INTO kewpie_runs (sweep_id, {', '.join(RUN_COLUMNS)}) "
                                  f"VALUES (?, {', '.join('?' * len(RUN_COLUMNS))})"),
                        (sweep_id, run.basedir, run.version, str(run.value), run.threads, run.repeat,
                         r.tps, r.qps, r.latency_avg_ms, r.latency_pct_ms, r.errors, r.reconnects,
                         json.dumps(r.to_dict())))
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
        cur.execute(self._sql(f"SELECT {', '.join(RUN_COLUMNS)} FROM kewpie_runs WHERE sweep_id = ? "
                              "ORDER BY id"), (sweep_id,))
        for basedir, version, value, threads, rep, *_rest, result in cur.fetchall():
            raw = json.loads(result)
            raw["intervals"] = [Interval(**i) for i in raw.get("intervals", [])]
            sweep.runs.append(RunRecord(basedir, version, value, threads, rep, SysbenchResult(**raw)))
        return sweep

