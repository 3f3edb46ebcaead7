"""A failure a person can act on: one result whole -- its full failure text, its run's
revision, CI job and build, the worker (machine) -- and "where else": the runs,
branches, code trees and machines where the same test failed with the same text, first
and last seen (the page's ``/result/N``, lib/history/web.py)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import and_, func, select
from sqlalchemy.engine import Connection

from .queries import ResultRow, RunRow, result_rows, run_row
from .schema import results, runs

SHOWN = 20


@dataclass
class WhereElse:
    """Where the same test failed with the same text."""

    results: int = 0
    runs: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    branches: list[str] = field(default_factory=list)
    trees: list[str] = field(default_factory=list)
    machines: list[str] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)
    rows: list[ResultRow] = field(default_factory=list)  # the newest SHOWN of them


def machine(host: str, labels: str) -> str:
    """A run's machine: its CI agent or worker (label ``node``), else its host."""
    try:
        node = json.loads(labels or "{}").get("node", "")
    except (ValueError, AttributeError):
        node = ""
    return str(node or host)


def where_else(conn: Connection, test: str, failure: str) -> WhereElse:
    """Every failing result of test whose failure text is failure."""
    same = and_(results.c.test == test, results.c.failing == 1, results.c.failure == failure)
    joined = results.join(runs, runs.c.id == results.c.run_id)
    count, run_count, first, last = conn.execute(
        select(func.count(), func.count(results.c.run_id.distinct()),
               func.min(results.c.finished_at), func.max(results.c.finished_at))
        .select_from(results).where(same)).one()
    found = WhereElse(int(count), int(run_count), first, last)
    places = conn.execute(select(runs.c.branch, runs.c.tree_version, runs.c.host, runs.c.labels,
                                 runs.c.job).distinct().select_from(joined).where(same))
    for branch, tree, host, labels, job in places:
        for values, value in ((found.branches, branch), (found.trees, tree),
                              (found.machines, machine(host, labels)), (found.jobs, job)):
            if value and value not in values:
                values.append(value)
    for values in (found.branches, found.trees, found.machines, found.jobs):
        values.sort()
    found.rows = result_rows(conn, same, SHOWN)
    return found


def result_detail(conn: Connection, result_id: int) -> tuple[ResultRow, RunRow, WhereElse] | None:
    """A result, its run, and where else its test failed so (None: no such result)."""
    rows = result_rows(conn, results.c.id == result_id, 1)
    if not rows:
        return None
    row = rows[0]
    run = run_row(conn, row.run_id)
    assert run is not None
    found = where_else(conn, row.test, row.failure) if row.failure and row.status != "pass" \
        else WhereElse()
    return row, run, found
