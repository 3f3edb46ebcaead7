"""The store's writes: a run (once per uuid), its results (once per run, bot and seq), its end.

What a run or result says goes in with its secrets as ``***`` (lib/platform/secrets.py):
its options were redacted where they were taken, but a spool written by an older
kewpie, or a failure's text, may still hold one."""
from __future__ import annotations

import json
from datetime import datetime
from types import MappingProxyType
from typing import Any, Iterable

from sqlalchemy import and_, select, tuple_
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from ..platform.secrets import redact, redact_text
from .records import ResultRecord, RunInfo
from .schema import results, runs

RUN_TEXT_LIMITS = MappingProxyType({
    "host": 255, "platform": 100, "kewpie_version": 40, "mode": 20, "shard": 20,
    "tree_version": 100, "branch": 255, "revision": 64, "job": 255})


def run_row(run: RunInfo) -> dict[str, Any]:
    """The history_runs row of a run (its secrets as ``***``)."""
    row: dict[str, Any] = {
        "uuid": run.uuid, "started_at": run.started_at, "host": run.host,
        "platform": run.platform, "kewpie_version": run.kewpie_version, "mode": run.mode,
        "selection": redact_text(run.selection), "shard": run.shard,
        "options": json.dumps(redact(run.options), sort_keys=True, default=str),
        "tree_version": run.tree_version, "tree_path": run.tree_path,
        "trees": json.dumps(run.trees), "branch": run.branch, "revision": run.revision,
        "job": run.job, "build": run.build, "build_url": redact_text(run.build_url),
        "labels": json.dumps(redact(run.labels), sort_keys=True)}
    for key, limit in RUN_TEXT_LIMITS.items():
        row[key] = str(row[key] or "")[:limit]
    return row


def result_row(run_id: int, record: ResultRecord) -> dict[str, Any]:
    """The history_results row of a result (its texts' secrets as ``***``)."""
    return {"run_id": run_id, "bot": record.bot[:20], "seq": record.seq,
            "test": record.test[:255], "combination": record.combination[:255],
            "status": record.status, "failing": 1 if record.failing else 0,
            "duration_ms": max(0, int(record.duration_ms)),
            "attempts": max(1, min(int(record.attempts), 32767)),
            "finished_at": record.finished_at, "failure": redact_text(record.failure),
            "signature": record.signature, "evidence": redact_text(record.evidence)}


def insert_run(conn: Connection, run: RunInfo) -> int:
    """The run's id, inserting it unless a row with its uuid is there (a spool sent
    again, or another pytest-xdist worker of the session)."""
    found = conn.execute(select(runs.c.id).where(runs.c.uuid == run.uuid)).scalar()
    if found is not None:
        return int(found)
    try:
        with conn.begin_nested():
            key = conn.execute(runs.insert().values(run_row(run))).inserted_primary_key
            assert key is not None
            return int(key[0])
    except IntegrityError:  # inserted by another process meanwhile (server stores)
        return int(conn.execute(select(runs.c.id).where(runs.c.uuid == run.uuid)).scalar_one())


def insert_results(conn: Connection, run_id: int, records: Iterable[ResultRecord],
                   skip_stored: bool = False) -> int:
    """Insert results of the run; with skip_stored, those already there (by bot and seq)
    are left out.  Returns how many were inserted."""
    rows = [result_row(run_id, r) for r in records]
    if skip_stored and rows:
        keys = [(row["bot"], row["seq"]) for row in rows]
        stored = set(conn.execute(select(results.c.bot, results.c.seq).where(and_(
            results.c.run_id == run_id, tuple_(results.c.bot, results.c.seq).in_(keys)))).all())
        rows = [row for row in rows if (row["bot"], row["seq"]) not in stored]
    if rows:
        conn.execute(results.insert(), rows)
    return len(rows)


def end_run(conn: Connection, run_id: int, ended_at: datetime, exit_code: int | None) -> None:
    """Record the run's end (the latest end wins: the workers of one session end apart)."""
    values: dict[str, Any] = {"ended_at": ended_at}
    if exit_code is not None:
        values["exit_code"] = exit_code
    conn.execute(runs.update().where(and_(runs.c.id == run_id, (runs.c.ended_at.is_(None))
                                          | (runs.c.ended_at < ended_at))).values(values))
