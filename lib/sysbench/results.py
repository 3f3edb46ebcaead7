"""A sweep in the results history's store (lib/history/, docs/history.md): written,
found as a baseline and read back.

The tables are the store's, declared once in lib/history/schema.py (``kewpie_sweeps``,
``kewpie_runs`` and the details tables) and made by its schema versions; this module
turns a :class:`SweepResult` into their rows and back, through SQLAlchemy Core on the
store's engine (SQLite or a MariaDB/MySQL server alike).
"""
from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..platform.secrets import redact
from ..history.schema import (run_details, run_histograms, run_samples, run_txns,
                              sweep_checks, sweep_runs, sweeps)
from ..history.sweeps import SweepStore
from .monitor import as_rows, from_rows
from .parse import SysbenchResult
from .sweep import CheckRecord, RunRecord, SweepResult, SweepSpec

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

RUN_COLUMNS = ("basedir", "version", "value", "threads", "rep", "tps", "qps", "lat_avg",
               "lat_pct", "errors", "reconnects", "result")
SAMPLE_COLUMNS = ("t", "source", "metric", "value")


def _run_row(sweep_id: int, run: RunRecord) -> dict[str, Any]:
    """A run's ``kewpie_runs`` row (its histogram goes to ``kewpie_run_histograms``)."""
    r = run.result
    stored = r.to_dict()
    stored.pop("histogram", None)
    return {"sweep_id": sweep_id, "basedir": run.basedir, "version": run.version,
            "value": str(run.value), "threads": run.threads, "rep": run.repeat, "tps": r.tps,
            "qps": r.qps, "lat_avg": r.latency_avg_ms, "lat_pct": r.latency_pct_ms,
            "errors": r.errors, "reconnects": r.reconnects, "result": json.dumps(stored)}


class ResultsDB:
    """Stores sweeps and their runs in the store's engine; finds baselines."""

    def __init__(self, engine: "Engine") -> None:
        """engine: the results history's store, its schema current (open_engine)."""
        self.engine = engine

    def save(self, sweep: SweepResult, label: str, run_id: int | None = None) -> int:
        """Store a sweep, its runs and their details in one transaction (run_id: the
        history's run that measured it; the spec's and context's secrets, such as a server
        option's password, as ``***``); return the sweep's id."""
        with self.engine.begin() as conn:
            key = conn.execute(sweeps.insert().values(
                name=sweep.spec.name, label=label, context_key=sweep.context.get("key", ""),
                created=time.strftime("%Y-%m-%dT%H:%M:%S"),
                spec=json.dumps(redact(sweep.spec.to_dict())),
                context=json.dumps(redact(sweep.context)),
                run_id=run_id)).inserted_primary_key
            assert key is not None
            sweep_id = int(key[0])
            for run in sweep.runs:
                row = conn.execute(sweep_runs.insert().values(**_run_row(sweep_id, run)))
                assert row.inserted_primary_key is not None
                self._save_details(conn, int(row.inserted_primary_key[0]), run)
            if sweep.checks:
                conn.execute(sweep_checks.insert(), [
                    {"sweep_id": sweep_id, "version": c.version, "data_set": c.data_set,
                     "passed": None if c.passed is None else int(c.passed), "output": c.output}
                    for c in sweep.checks])
        return sweep_id

    def find(self, baseline: str, context_key: str, exclude_id: int | None = None) -> int | None:
        """The id of the baseline: the newest sweep labelled baseline, or with
        baseline == 'last', the newest other sweep with the same context."""
        return SweepStore(self.engine).find(baseline, context_key, exclude_id)

    def load(self, sweep_id: int) -> SweepResult:
        """A stored sweep with its runs and their details."""
        with self.engine.connect() as conn:
            spec_text, context_text = conn.execute(
                select(sweeps.c.spec, sweeps.c.context).where(sweeps.c.id == sweep_id)).one()
            sweep = SweepResult(SweepSpec(**json.loads(spec_text)), json.loads(context_text))
            columns = [sweep_runs.c[name] for name in ("id",) + RUN_COLUMNS]
            for run_id, basedir, version, value, threads, rep, *_rest, result in conn.execute(
                    select(*columns).where(sweep_runs.c.sweep_id == sweep_id)
                    .order_by(sweep_runs.c.id)).all():
                run = RunRecord(basedir, version, value, threads, rep,
                                SysbenchResult.from_dict(json.loads(result)))
                self._load_details(conn, int(run_id), run)
                sweep.runs.append(run)
            sweep.checks = self._checks(conn, sweep_id)
        return sweep

    @staticmethod
    def _save_details(conn: "Connection", run_id: int, run: RunRecord) -> None:
        """One run's cell, percentiles, histogram, samples and transactions."""
        r = run.result
        pct = r.percentiles()
        conn.execute(run_details.insert().values(
            run_id=run_id, cell=json.dumps(run.cell), lat_p50=pct["p50"], lat_p95=pct["p95"],
            lat_p99=pct["p99"], lat_max=pct["max"], tpmc_like=r.tpcc.tpmc_like if r.tpcc else None,
            planned_reconnects=r.planned_reconnects, log=run.log))
        if r.histogram:
            conn.execute(run_histograms.insert(), [
                {"run_id": run_id, "value_ms": value, "events": count}
                for value, count in r.histogram])
        if run.samples:
            conn.execute(run_samples.insert(), [
                {"run_id": run_id, **dict(zip(SAMPLE_COLUMNS, row))}
                for row in as_rows(run.samples)])
        if r.tpcc:
            conn.execute(run_txns.insert(), [
                {"run_id": run_id, "txn": t.name, "events": t.count, "rollbacks": t.rollbacks,
                 "retries": t.retries, "mix_pct": t.mix_pct, "avg_ms": t.avg_ms,
                 "p50_ms": t.p50_ms, "p95_ms": t.p95_ms, "p99_ms": t.p99_ms, "max_ms": t.max_ms}
                for t in r.tpcc.txns])

    @staticmethod
    def _load_details(conn: "Connection", run_id: int, run: RunRecord) -> None:
        """Fill a loaded run's cell, log, histogram and samples from the details tables."""
        row = conn.execute(select(run_details.c.cell, run_details.c.log)
                           .where(run_details.c.run_id == run_id)).first()
        if row:
            run.cell = json.loads(row[0]) if row[0] else {}
            run.log = row[1] or ""
        run.result.histogram = [(float(v), int(c)) for v, c in conn.execute(
            select(run_histograms.c.value_ms, run_histograms.c.events)
            .where(run_histograms.c.run_id == run_id).order_by(run_histograms.c.id)).all()]
        columns = [run_samples.c[name] for name in SAMPLE_COLUMNS]
        run.samples = from_rows([tuple(r) for r in conn.execute(
            select(*columns).where(run_samples.c.run_id == run_id)
            .order_by(run_samples.c.id)).all()])

    @staticmethod
    def _checks(conn: "Connection", sweep_id: int) -> list[CheckRecord]:
        """A sweep's consistency checks."""
        return [CheckRecord(v, d, None if p is None else bool(p), o)
                for v, d, p, o in conn.execute(
                    select(sweep_checks.c.version, sweep_checks.c.data_set,
                           sweep_checks.c.passed, sweep_checks.c.output)
                    .where(sweep_checks.c.sweep_id == sweep_id)
                    .order_by(sweep_checks.c.id)).all()]
