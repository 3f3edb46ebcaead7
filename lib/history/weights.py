"""Tests' durations from the history, for ``--shard`` and longest-first scheduling.

Shards of one build must weigh tests alike.  With a build key (a CI job and build),
the first shard to read records the store's newest result id and the time under that
key (``history_shard_cuts``), and every shard of the build reads the job's earlier
builds that had ended by then, results up to that id; without one, runs that ended before a given time (the caller
passes the start of today) are read.
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, select, true
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from .queries import durations
from .records import join_name, utcnow
from .schema import results, runs, shard_cuts
from .store import open_engine
from .target import StoreTarget
from .writes import committed

LAST_RUNS = 20


def _cut(conn: Connection, key: str, create: bool) -> tuple[int, datetime] | None:
    """(newest result id, time) the build's shards read up to (recorded by the first)."""
    query = select(shard_cuts.c.max_result_id, shard_cuts.c.created_at).where(
        shard_cuts.c.build_key == key[:255])
    found = conn.execute(query).first()
    if found is not None or not create:
        return (int(found[0]), found[1]) if found is not None else None
    newest = int(conn.execute(select(func.coalesce(func.max(results.c.id), 0))).scalar_one())
    now = utcnow()
    try:
        with conn.begin_nested():
            conn.execute(shard_cuts.insert().values(build_key=key[:255], max_result_id=newest,
                                                    created_at=now))
    except IntegrityError:  # another shard of the build was first: take its cut
        row = conn.execute(committed(query)).one()
        return int(row[0]), row[1]
    return newest, now


def read_durations(target: StoreTarget, cut_key: str = "", job: str = "",
                   before_build: int | None = None, ended_before: datetime | None = None,
                   create_cut: bool = False) -> dict[str, float]:
    """Test name (as native and mtr rows name it) -> mean duration in ms of its passing
    attempts in the last runs ({} when the store does not exist yet); HistoryError
    when it cannot be read."""
    if not target.exists():
        return {}
    engine = open_engine(target, writer=bool(cut_key and create_cut))
    try:
        with engine.begin() as conn:
            condition: ColumnElement[bool] = true()
            max_id = None
            if cut_key:
                cut = _cut(conn, cut_key, create_cut)
                if cut is None:
                    return {}
                max_id = cut[0]
                condition = and_(runs.c.job == job, runs.c.ended_at <= cut[1],
                                 runs.c.build < before_build if before_build is not None
                                 else true())
            elif ended_before is not None:
                condition = runs.c.ended_at < ended_before
            found = durations(conn, condition, max_id, LAST_RUNS)
    finally:
        engine.dispose()
    return _named(found)


def _named(found: dict[tuple[str, str], float]) -> dict[str, float]:
    """Durations by the names native and mtr rows give a test (with its combination)."""
    out: dict[str, float] = {}
    for (test, combination), ms in found.items():
        out[join_name(test, combination, "native")] = ms
        out[join_name(test, combination, "mtr")] = ms
    return out


def store_durations(engine: Engine, job: str = "") -> dict[str, float]:
    """The durations of the last runs that ended (of one CI job when given), by test
    name: ``kewpie history timings``, a --timings-file every shard of a build reads."""
    with engine.connect() as conn:
        return _named(durations(conn, runs.c.job == job if job else true(), None, LAST_RUNS))
