"""Sweeps in the history store: the sweeps' results database folded in.

The tables are the ones the sweeps' results database had (``kewpie_sweeps``: one row
per sweep with its spec and context as JSON; ``kewpie_runs``: one row per timed
sysbench run), plus ``kewpie_sweeps.run_id``, the history run that measured it.  So a
``results.sqlite`` of before opens as a store (it is upgraded in place), and
:func:`import_legacy` copies one into another store once.

This module knows rows, not sysbench: lib/sysbench/results.py writes a ``SweepResult``
into them and into their details tables (all declared in schema.py) and reads it back,
and finds baselines with :meth:`SweepStore.find`; this module reads them
for the page and copies old files.  A run row's ``result`` is the full JSON of the
run (what the typed columns hold and more), so new measurements (percentiles,
monitors, histograms) can be stored there without a schema change; a new typed
column is a schema version (lib/history/migrations.py).
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import create_engine, inspect, select
from sqlalchemy.engine import Engine

from ..platform.secrets import redact
from .errors import HistoryError
from .schema import meta, sweep_runs, sweeps

RUN_FIELDS = ("basedir", "version", "value", "threads", "rep", "tps", "qps", "lat_avg",
              "lat_pct", "errors", "reconnects")


@dataclass
class StoredSweep:
    """A sweep as stored: its spec and context, and one dict per timed run (the typed
    columns plus ``result``, the run's full JSON)."""

    id: int
    name: str
    label: str
    context_key: str
    created: str
    spec: dict[str, Any]
    context: dict[str, Any]
    run_id: int | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)


def _loads(text: str | None) -> Any:
    try:
        return json.loads(text or "null")
    except ValueError:
        return None


class SweepStore:
    """Saves, finds and loads sweeps in a store's engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, name: str, label: str, context_key: str, spec: dict[str, Any],
             context: dict[str, Any], runs: list[dict[str, Any]], run_id: int | None = None,
             created: str = "") -> int:
        """Store a sweep and its runs (dicts with RUN_FIELDS and ``result``; the spec's and
        context's secrets as ``***``); its id."""
        with self.engine.begin() as conn:
            key = conn.execute(sweeps.insert().values(
                name=name, label=label, context_key=context_key,
                created=created or time.strftime("%Y-%m-%dT%H:%M:%S"),
                spec=json.dumps(redact(spec), default=str),
                context=json.dumps(redact(context), default=str), run_id=run_id)).inserted_primary_key
            assert key is not None
            sweep_id = int(key[0])
            if runs:
                conn.execute(sweep_runs.insert(), [
                    {"sweep_id": sweep_id, **{k: run.get(k) for k in RUN_FIELDS},
                     "value": str(run.get("value")),
                     "result": json.dumps(run.get("result", {}), default=str)} for run in runs])
        return sweep_id

    def find(self, baseline: str, context_key: str, exclude_id: int | None = None) -> int | None:
        """The newest sweep labelled baseline, or with 'last' the newest other sweep with
        the same context key."""
        column = sweeps.c.context_key if baseline == "last" else sweeps.c.label
        wanted = context_key if baseline == "last" else baseline
        with self.engine.connect() as conn:
            found = conn.execute(select(sweeps.c.id).where(
                column == wanted, sweeps.c.id != (exclude_id or -1))
                .order_by(sweeps.c.id.desc()).limit(1)).scalar()
        return int(found) if found is not None else None

    def load(self, sweep_id: int) -> StoredSweep:
        """A stored sweep with its runs in the order they were measured."""
        with self.engine.connect() as conn:
            row = conn.execute(select(sweeps).where(sweeps.c.id == sweep_id)).first()
            if row is None:
                raise HistoryError(f"no sweep #{sweep_id} in the history store")
            sweep = self._sweep(row)
            for run in conn.execute(select(sweep_runs).where(sweep_runs.c.sweep_id == sweep_id)
                                    .order_by(sweep_runs.c.id)).mappings():
                data = {k: run[k] for k in RUN_FIELDS}
                data["result"] = _loads(run["result"]) or {}
                sweep.runs.append(data)
        return sweep

    def recent(self, limit: int = 20) -> list[StoredSweep]:
        """The newest sweeps (with their runs), newest first."""
        with self.engine.connect() as conn:
            ids = conn.execute(select(sweeps.c.id).order_by(sweeps.c.id.desc())
                               .limit(limit)).scalars().all()
        return [self.load(int(i)) for i in ids]

    @staticmethod
    def _sweep(row: Any) -> StoredSweep:
        return StoredSweep(int(row.id), row.name or "", row.label or "", row.context_key or "",
                           row.created or "", _loads(row.spec) or {}, _loads(row.context) or {},
                           row.run_id)


def import_legacy(engine: Engine, path: str) -> int:
    """Copy the sweeps of an old results database file (``workdir/results.sqlite``) into
    the store, once (the store remembers the file); returns how many were copied."""
    key = "legacy:" + hashlib.sha1(os.path.realpath(path).encode()).hexdigest()[:20]
    with engine.connect() as conn:
        if conn.execute(select(meta.c.value).where(meta.c.name == key)).first() is not None:
            return 0
    source = create_engine(f"sqlite:///{path}")
    copied = 0
    try:
        with source.connect() as old:
            if not inspect(old).has_table("kewpie_sweeps"):
                return 0
            store = SweepStore(engine)
            for row in old.exec_driver_sql("SELECT id, name, label, context_key, spec, context, "
                                           "created FROM kewpie_sweeps ORDER BY id").all():
                runs = [{**dict(zip(RUN_FIELDS, r[:-1])), "result": _loads(r[-1]) or {}}
                        for r in old.exec_driver_sql(
                            f"SELECT {', '.join(RUN_FIELDS)}, result FROM kewpie_runs "
                            f"WHERE sweep_id = ? ORDER BY id", (row[0],)).all()]
                store.save(row[1] or "", row[2] or "", row[3] or "", _loads(row[4]) or {},
                           _loads(row[5]) or {}, runs, created=row[6] or "")
                copied += 1
    finally:
        source.dispose()
    with engine.begin() as conn:
        conn.execute(meta.insert().values(name=key, value=str(copied)))
    return copied
