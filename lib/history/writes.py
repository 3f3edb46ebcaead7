"""The store's writes: a run (once per uuid), its results (once per run, bot and seq), its
end, and a hunt's findings (a sighting once per run, bot and seq; its signature's row
made by the first and counted by each).

Writers race on a server store (a fleet's workers, pytest-xdist's workers, a build's
shards): a row another writer inserted meanwhile is read back with :func:`committed`,
a locking read -- InnoDB's REPEATABLE READ shows a plain SELECT the snapshot this
transaction took at its first read, without the row that made our INSERT fail; and a
signature's row is locked (its count updated) before its sighting is inserted, so two
writers counting one signature queue on the row instead of deadlocking (the
sighting's foreign key takes a shared lock that the update could not upgrade).

What a run or result says goes in with its secrets as ``***`` (lib/platform/secrets.py):
its options were redacted where they were taken, but a spool written by an older
kewpie, or a failure's text, may still hold one."""
from __future__ import annotations

import json
from datetime import datetime
from types import MappingProxyType
from typing import Any, Iterable

from sqlalchemy import Select, and_, case, select, tuple_
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from ..platform.secrets import redact, redact_text
from .records import FindingRecord, ResultRecord, RunInfo
from .schema import findings, results, runs, sightings

RUN_TEXT_LIMITS = MappingProxyType({
    "host": 255, "platform": 100, "kewpie_version": 40, "mode": 20, "shard": 20,
    "tree_version": 100, "branch": 255, "revision": 64, "job": 255})


def committed(query: Select[Any]) -> Select[Any]:
    """query as a locking read (``LOCK IN SHARE MODE`` on a server, as it is on SQLite,
    whose writers take turns): it sees the rows other transactions committed after this
    one's snapshot, as reading back a row whose INSERT failed on its key must."""
    return query.with_for_update(read=True)


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
        return int(conn.execute(committed(select(runs.c.id).where(runs.c.uuid == run.uuid)))
                   .scalar_one())


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


def _finding_id(conn: Connection, record: FindingRecord) -> int:
    """The id of the finding's signature row, made when this is its first sighting
    (another writer making it meanwhile is fine: its row is used)."""
    where = findings.c.signature == record.signature[:64]
    found = conn.execute(select(findings.c.id).where(where)).scalar()
    if found is not None:
        return int(found)
    row = {"signature": record.signature[:64], "signature_text": record.signature_text,
           "unique_id": record.unique_id[:1000], "kind": record.kind[:20],
           "oracle": record.oracle[:40], "title": redact_text(record.title)[:255],
           "tag": record.tag[:20], "bug_id": record.bug_id[:64],
           "first_seen": record.found_at, "last_seen": record.found_at, "count": 0}
    try:
        with conn.begin_nested():
            key = conn.execute(findings.insert().values(row)).inserted_primary_key
            assert key is not None
            return int(key[0])
    except IntegrityError:  # made by another writer meanwhile (a fleet's other worker)
        return int(conn.execute(committed(select(findings.c.id).where(where))).scalar_one())


def sighting_row(run_id: int, finding_id: int, record: FindingRecord) -> dict[str, Any]:
    """The history_sightings row of a finding (its texts' secrets as ``***``)."""
    return {"finding_id": finding_id, "run_id": run_id, "bot": record.bot[:20],
            "seq": record.seq, "trial": record.trial, "seed": record.seed,
            "machine": record.machine[:255], "tree": record.tree[:100],
            "tag": record.tag[:20], "bug_id": record.bug_id[:64],
            "folder": redact_text(record.folder), "summary": redact_text(record.summary),
            "found_at": record.found_at}


def insert_findings(conn: Connection, run_id: int, records: Iterable[FindingRecord],
                    skip_stored: bool = False) -> int:
    """Insert the run's sightings, each counted on its signature's row (first and last
    seen, count, the newest tag); with skip_stored, those already there (by bot and
    seq) are left out.  Returns how many were inserted."""
    inserted = 0
    for record in records:
        if skip_stored and conn.execute(select(sightings.c.id).where(and_(
                sightings.c.run_id == run_id, sightings.c.bot == record.bot[:20],
                sightings.c.seq == record.seq))).first() is not None:
            continue
        finding_id = _finding_id(conn, record)
        at = record.found_at
        newer = findings.c.last_seen <= at
        conn.execute(findings.update().where(findings.c.id == finding_id).values(
            count=findings.c.count + 1,
            first_seen=case((findings.c.first_seen > at, at), else_=findings.c.first_seen),
            last_seen=case((newer, at), else_=findings.c.last_seen),
            tag=case((newer, record.tag[:20]), else_=findings.c.tag),
            bug_id=case((newer, record.bug_id[:64]), else_=findings.c.bug_id)))
        # after the update: the row is ours (see the module docstring)
        conn.execute(sightings.insert().values(sighting_row(run_id, finding_id, record)))
        inserted += 1
    return inserted
