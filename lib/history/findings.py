"""The hunts' findings in the store (schema version 4): searched, one signature's
sightings, a run's findings, and the claim that keeps a fleet from reducing one
signature twice.

A finding's row (``history_findings``) is its signature across every run and machine:
first and last seen, how many times (``count``: the finding folders hunts wrote), its
newest tag (new, known, known-fixed) and bug, and its reduction: ``running`` (by whom,
since when), ``done`` (the reduced case and the report), or ``failed``.
:func:`claim_reduction` takes the reduction for one owner in one statement (an
``UPDATE ... WHERE`` the store serializes: SQLite's write lock, InnoDB's row lock), so
that two workers that found the same bug reduce it once; a claim left ``running``
longer than ``STALE_HOURS`` (a reducer that was killed) may be taken over.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select, true
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from ..platform.secrets import redact_text
from .patterns import check, matches
from .records import FindingRecord, utcnow
from .schema import findings, runs, sightings
from .writes import committed

STALE_HOURS = 6.0
MAX_LIMIT = 1000
REDUCTION_STATES = ("running", "done", "failed", "no-repro")  # no-repro: not from its trace


@dataclass
class FindingFilter:
    """The findings' search: patterns (``*``, ``?``) over the signature (its id, text or
    UniqueID), kind, bug, code tree and machine, and a time range (last seen since,
    first seen until)."""

    signature: str = ""
    kind: str = ""
    bug: str = ""
    tree: str = ""
    machine: str = ""
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 50

    def __post_init__(self) -> None:
        for name in ("signature", "kind", "bug", "tree", "machine"):
            setattr(self, name, check(getattr(self, name), name))
        self.limit = max(1, min(int(self.limit), MAX_LIMIT))


@dataclass
class FindingRow:
    """One signature across the fleet, with where it was seen."""

    id: int
    signature: str
    signature_text: str
    unique_id: str
    kind: str
    oracle: str
    title: str
    tag: str
    bug_id: str
    first_seen: datetime
    last_seen: datetime
    count: int
    reduction: str
    reduction_owner: str
    reduction_at: datetime | None
    reduced_case: str
    report: str
    machines: list[str] = field(default_factory=list)
    trees: list[str] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)


@dataclass
class SightingRow:
    """One finding folder: its run, trial, seed, machine, tree and where it is."""

    id: int
    run_id: int
    bot: str
    trial: int
    seed: int
    machine: str
    tree: str
    tag: str
    bug_id: str
    folder: str
    summary: str
    found_at: datetime
    signature: str = ""
    kind: str = ""
    title: str = ""
    branch: str = ""
    job: str = ""
    build: int | None = None


FINDING_COLUMNS = (findings.c.id, findings.c.signature, findings.c.signature_text,
                   findings.c.unique_id, findings.c.kind, findings.c.oracle, findings.c.title,
                   findings.c.tag, findings.c.bug_id, findings.c.first_seen,
                   findings.c.last_seen, findings.c.count, findings.c.reduction,
                   findings.c.reduction_owner, findings.c.reduction_at,
                   findings.c.reduced_case, findings.c.report)
SIGHTING_COLUMNS = (sightings.c.id, sightings.c.run_id, sightings.c.bot, sightings.c.trial,
                    sightings.c.seed, sightings.c.machine, sightings.c.tree, sightings.c.tag,
                    sightings.c.bug_id, sightings.c.folder, sightings.c.summary,
                    sightings.c.found_at, findings.c.signature, findings.c.kind,
                    findings.c.title, runs.c.branch, runs.c.job, runs.c.build)


def _seen_in(column: Any, pattern: str) -> ColumnElement[bool]:
    """Findings with a sighting whose column matches pattern."""
    return findings.c.id.in_(select(sightings.c.finding_id).where(matches(column, pattern)))


def _conditions(f: FindingFilter) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if f.signature:
        conditions.append(or_(matches(findings.c.signature, f.signature),
                              matches(findings.c.unique_id, f.signature),
                              matches(findings.c.signature_text, f.signature)))
    if f.kind:
        conditions.append(matches(findings.c.kind, f.kind))
    if f.bug:
        conditions.append(matches(findings.c.bug_id, f.bug))
    if f.tree:
        conditions.append(_seen_in(sightings.c.tree, f.tree))
    if f.machine:
        conditions.append(_seen_in(sightings.c.machine, f.machine))
    if f.since is not None:
        conditions.append(findings.c.last_seen >= f.since)
    if f.until is not None:
        conditions.append(findings.c.first_seen < f.until)
    return conditions


def _where_seen(conn: Connection, rows: list[FindingRow]) -> None:
    """Fill each row's machines, trees and runs (sorted) from its sightings."""
    by_id = {r.id: r for r in rows}
    if not by_id:
        return
    seen = conn.execute(select(sightings.c.finding_id, sightings.c.machine, sightings.c.tree,
                               sightings.c.run_id).distinct()
                        .where(sightings.c.finding_id.in_(list(by_id))))
    for finding_id, machine, tree, run_id in seen:
        row = by_id[int(finding_id)]
        for values, value in ((row.machines, machine), (row.trees, tree), (row.runs, run_id)):
            if value not in values and value not in ("", None):
                values.append(value)
    for row in rows:
        row.machines.sort()
        row.trees.sort()
        row.runs.sort()


def search_findings(conn: Connection, f: FindingFilter) -> list[FindingRow]:
    """Findings matching f, the last seen first, each with where it was seen."""
    conditions = _conditions(f)
    query = (select(*FINDING_COLUMNS).where(and_(*conditions) if conditions else true())
             .order_by(findings.c.last_seen.desc(), findings.c.id.desc()).limit(f.limit))
    rows = [FindingRow(*r) for r in conn.execute(query)]
    _where_seen(conn, rows)
    return rows


def _sightings(conn: Connection, condition: ColumnElement[bool]) -> list[SightingRow]:
    query = (select(*SIGHTING_COLUMNS)
             .select_from(sightings.join(findings, findings.c.id == sightings.c.finding_id)
                          .join(runs, runs.c.id == sightings.c.run_id))
             .where(condition).order_by(sightings.c.found_at, sightings.c.id))
    return [SightingRow(*r) for r in conn.execute(query)]


def finding_detail(conn: Connection, signature: str) -> tuple[FindingRow | None,
                                                              list[SightingRow]]:
    """A signature's row and its sightings, oldest first (its timeline)."""
    found = conn.execute(select(*FINDING_COLUMNS).where(findings.c.signature == signature)).first()
    if found is None:
        return None, []
    row = FindingRow(*found)
    _where_seen(conn, [row])
    return row, _sightings(conn, sightings.c.finding_id == row.id)


def run_findings(conn: Connection, run_id: int) -> list[SightingRow]:
    """The findings a run's hunt wrote, in the order found."""
    return _sightings(conn, sightings.c.run_id == run_id)


# ---------------------------------------------------------------- reductions
@dataclass(frozen=True)
class Claim:
    """The answer to a claim: ours, or whose the reduction is (its state, owner, since
    when, its case)."""

    ours: bool
    state: str = ""
    owner: str = ""
    since: datetime | None = None
    reduced_case: str = ""


def _row_of(record: FindingRecord, owner: str, now: datetime) -> dict[str, Any]:
    return {"signature": record.signature[:64], "signature_text": record.signature_text,
            "unique_id": record.unique_id[:1000], "kind": record.kind[:20],
            "oracle": record.oracle[:40], "title": redact_text(record.title)[:255],
            "tag": record.tag[:20], "bug_id": record.bug_id[:64], "first_seen": now,
            "last_seen": now, "count": 0, "reduction": "running",
            "reduction_owner": owner[:255], "reduction_at": now}


def claim_reduction(conn: Connection, record: FindingRecord, owner: str,
                    again: bool = False) -> Claim:
    """Take the reduction of record's signature for owner (in the caller's transaction:
    commit it to publish the claim).  Free: never reduced, failed, not reproduced from
    its trace (more tries may), or running for more than STALE_HOURS; again: whatever
    its state."""
    now = utcnow()
    free: ColumnElement[bool] = or_(
        findings.c.reduction.in_(("", "failed", "no-repro")),
        and_(findings.c.reduction == "running",
             findings.c.reduction_at < now - timedelta(hours=STALE_HOURS)))
    where = and_(findings.c.signature == record.signature[:64], true() if again else free)
    taken = conn.execute(findings.update().where(where).values(
        reduction="running", reduction_owner=owner[:255], reduction_at=now))
    if taken.rowcount == 1:
        return Claim(True, "running", owner, now)
    state = conn.execute(committed(select(findings.c.reduction, findings.c.reduction_owner,
                                          findings.c.reduction_at, findings.c.reduced_case)
                                   .where(findings.c.signature == record.signature[:64]))).first()
    if state is None:
        try:
            with conn.begin_nested():
                conn.execute(findings.insert().values(_row_of(record, owner, now)))
            return Claim(True, "running", owner, now)
        except IntegrityError:  # made by another worker meanwhile: ask again
            return claim_reduction(conn, record, owner, again)
    return Claim(False, str(state[0]), str(state[1]), state[2], str(state[3]))


def finish_reduction(conn: Connection, signature: str, owner: str, state: str,
                     reduced_case: str = "", report: str = "") -> bool:
    """Record the end of owner's reduction (done with its case and report, or failed);
    False when the claim is no longer owner's."""
    if state not in REDUCTION_STATES:
        raise ValueError(f"reduction state {state!r}")
    done = conn.execute(findings.update().where(and_(
        findings.c.signature == signature[:64], findings.c.reduction_owner == owner[:255]))
        .values(reduction=state, reduction_at=utcnow(), reduced_case=redact_text(reduced_case),
                report=redact_text(report)))
    return bool(done.rowcount == 1)
