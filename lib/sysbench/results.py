"""Sweeps and their baselines in the results history (lib/history/sweeps.py).

The sweeps' results database is one with the test results' history: the same store
(``WORKDIR/history.sqlite``, ``--history PATH`` or ``--history-dsn``), reached
through SQLAlchemy; an old ``results.sqlite`` opens as a store (upgraded in place) or
is copied into one (``import_legacy``).  This module turns a :class:`SweepResult`
into the store's rows and back.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine

from ..history.store import open_engine
from ..history.target import StoreTarget
from ..history.sweeps import SweepStore
from .parse import Interval, SysbenchResult
from .sweep import RunRecord, SweepResult, SweepSpec


def _run_row(run: RunRecord) -> dict[str, Any]:
    r = run.result
    return {"basedir": run.basedir, "version": run.version, "value": run.value,
            "threads": run.threads, "rep": run.repeat, "tps": r.tps, "qps": r.qps,
            "lat_avg": r.latency_avg_ms, "lat_pct": r.latency_pct_ms, "errors": r.errors,
            "reconnects": r.reconnects, "result": r.to_dict()}


class ResultsDB:
    """Stores sweeps and their runs; finds baselines."""

    def __init__(self, sqlite_path: str | None = None, dsn: str | None = None,
                 engine: Engine | None = None) -> None:
        """The store of engine, else of dsn (a server) or sqlite_path (created when
        missing); HistoryError when it cannot be reached, HistoryUsageError for a
        malformed DSN."""
        if engine is None:
            target = StoreTarget.choose(sqlite_path or "", dsn or "", ".")
            engine = open_engine(target, writer=True, create=True)
        self.store = SweepStore(engine)

    def save(self, sweep: SweepResult, label: str, run_id: int | None = None) -> int:
        """Store a sweep and its runs (run_id: the history run that measured it); its id."""
        return self.store.save(sweep.spec.name, label, str(sweep.context.get("key", "")),
                               sweep.spec.to_dict(), sweep.context,
                               [_run_row(run) for run in sweep.runs], run_id=run_id)

    def find(self, baseline: str, context_key: str, exclude_id: int | None = None) -> int | None:
        """The id of the baseline: the newest sweep labelled baseline, or with
        baseline == 'last', the newest other sweep with the same context."""
        return self.store.find(baseline, context_key, exclude_id)

    def load(self, sweep_id: int) -> SweepResult:
        """A stored sweep with its runs."""
        stored = self.store.load(sweep_id)
        sweep = SweepResult(SweepSpec(**stored.spec), stored.context)
        for run in stored.runs:
            raw = dict(run["result"])
            raw["intervals"] = [Interval(**i) for i in raw.get("intervals", [])]
            sweep.runs.append(RunRecord(run["basedir"], run["version"], run["value"],
                                        run["threads"], run["rep"], SysbenchResult(**raw)))
        return sweep
