"""What the history answers: the search (the cross-reference), a test's timeline, flaky
and unstable tests, the slowest tests and their trend, runs, and durations for
scheduling.  Every function takes an open connection and returns plain rows.

Definitions (docs/history.md): over a window of runs, a test's *failure rate* is the
share of its results whose first attempt failed (``fail``, ``timeout`` or ``flaky``);
its *pass-after-retry rate* is the share of those failures that passed on a retry
(``flaky``).  A test is *flaky* in the window when it both failed and passed there.
Skipped results count in neither.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Sequence

from sqlalchemy import ColumnElement, Select, and_, case, func, select, true
from sqlalchemy.engine import Connection, Row

from ..platform.secrets import redact
from .patterns import check, has_wildcards, literal_prefix, matches, prefix_range
from .records import FAILING, utcnow
from .schema import results, runs

DEFAULT_LIMIT = 50
MAX_LIMIT = 1000
DEFAULT_WINDOW_RUNS = 50
RANGE_ROWS = 5000  # a test prefix with more results than this is searched newest first
STATUS_CHOICES = ("failing", "all", "fail", "timeout", "flaky", "pass", "skipped")


@dataclass
class SearchFilter:
    """The search form: patterns (``*``, ``?``), a status choice and a date range."""

    test: str = ""
    failure: str = ""
    branch: str = ""
    tree: str = ""
    platform: str = ""
    signature: str = ""
    status: str = "failing"
    since: datetime | None = None
    until: datetime | None = None
    limit: int = DEFAULT_LIMIT
    offset: int = 0

    def __post_init__(self) -> None:
        for name in ("test", "failure", "branch", "tree", "platform", "signature"):
            setattr(self, name, check(getattr(self, name), name))
        if self.status not in STATUS_CHOICES:
            self.status = "failing"
        self.limit = max(1, min(int(self.limit), MAX_LIMIT))
        self.offset = max(0, int(self.offset))

    @property
    def empty(self) -> bool:
        """True when nothing but the status and the range was asked."""
        return not any((self.test, self.failure, self.branch, self.tree, self.platform,
                        self.signature))


@dataclass
class ResultRow:
    """A result with its run's fields, as the search and timelines list them."""

    id: int
    run_id: int
    test: str
    combination: str
    status: str
    duration_ms: int
    attempts: int
    finished_at: datetime
    failure: str
    signature: str
    evidence: str
    branch: str
    tree_version: str
    platform: str
    job: str
    build: int | None
    build_url: str
    host: str
    mode: str


RESULT_COLUMNS = (results.c.id, results.c.run_id, results.c.test, results.c.combination,
                  results.c.status, results.c.duration_ms, results.c.attempts,
                  results.c.finished_at, results.c.failure, results.c.signature,
                  results.c.evidence, runs.c.branch, runs.c.tree_version, runs.c.platform,
                  runs.c.job, runs.c.build, runs.c.build_url, runs.c.host, runs.c.mode)


def _results_first() -> Select[Any]:
    """Results joined to their runs, read results first: a server's optimizer would
    otherwise start from the (small) runs table and sort every result of every run
    (MariaDB's STRAIGHT_JOIN keeps the order written; SQLite's planner needs no help)."""
    return (select(*RESULT_COLUMNS).select_from(results.join(runs, runs.c.id == results.c.run_id))
            .prefix_with("STRAIGHT_JOIN", dialect="mysql"))


def _result_row(row: Row[Any]) -> ResultRow:
    return ResultRow(*row)


def _status_condition(status: str) -> ColumnElement[bool] | None:
    if status == "failing":
        return results.c.failing == 1
    if status == "all":
        return None
    return results.c.status == status


def _narrow(conn: Connection, pattern: str) -> bool:
    """Whether a test pattern's prefix names few enough results to read them all and sort
    them (else the search walks results newest first until a page is found)."""
    prefix = literal_prefix(pattern)
    if not prefix or not has_wildcards(pattern):
        return True
    rows = select(results.c.id).where(prefix_range(results.c.test, prefix)).limit(RANGE_ROWS + 1)
    return int(conn.execute(select(func.count()).select_from(rows.subquery())).scalar_one()) \
        <= RANGE_ROWS


def search(conn: Connection, f: SearchFilter) -> list[ResultRow]:
    """The cross-reference: results matching f, newest first (f.limit from f.offset)."""
    conditions: list[ColumnElement[bool]] = []
    status = _status_condition(f.status)
    if status is not None:
        conditions.append(status)
    if f.test:
        conditions.append(matches(results.c.test, f.test, use_range=_narrow(conn, f.test)))
    if f.failure:
        conditions.append(matches(results.c.failure, f.failure, anywhere=True))
    if f.signature:
        conditions.append(matches(results.c.signature, f.signature))
    if f.branch:
        conditions.append(matches(runs.c.branch, f.branch))
    if f.tree:
        conditions.append(matches(runs.c.tree_version, f.tree))
    if f.platform:
        conditions.append(matches(runs.c.platform, f.platform))
    if f.since is not None:
        conditions.append(results.c.finished_at >= f.since)
    if f.until is not None:
        conditions.append(results.c.finished_at < f.until)
    query = (_results_first().where(and_(*conditions) if conditions else true())
             .order_by(results.c.finished_at.desc(), results.c.id.desc())
             .limit(f.limit).offset(f.offset))
    return [_result_row(r) for r in conn.execute(query)]


def timeline(conn: Connection, test: str, limit: int = 60, combination: str | None = None
             ) -> list[ResultRow]:
    """A test's last results, newest first (all its combinations unless one is given)."""
    condition = results.c.test == test
    if combination is not None:
        condition = and_(condition, results.c.combination == combination)
    query = (_results_first().where(condition)
             .order_by(results.c.finished_at.desc(), results.c.id.desc())
             .limit(max(1, min(limit, MAX_LIMIT))))
    return [_result_row(r) for r in conn.execute(query)]


@dataclass
class Window:
    """Which runs a statistic looks at: the last ``runs`` runs, or the last ``days`` days
    (days wins when both are given), optionally of one branch or job."""

    runs: int = DEFAULT_WINDOW_RUNS
    days: float = 0.0
    branch: str = ""
    job: str = ""

    def describe(self) -> str:
        """The window in words."""
        scope = "".join(f", {k} {v}" for k, v in (("branch", self.branch), ("job", self.job)) if v)
        span = f"the last {self.days:g} day(s)" if self.days else f"the last {self.runs} run(s)"
        return span + scope


def _run_conditions(w: Window) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if w.branch:
        conditions.append(matches(runs.c.branch, check(w.branch, "branch")))
    if w.job:
        conditions.append(matches(runs.c.job, check(w.job, "job")))
    return conditions


def window_condition(conn: Connection, w: Window) -> ColumnElement[bool]:
    """The condition on results of the window's runs."""
    conditions = _run_conditions(w)
    if w.days:
        since = utcnow() - timedelta(days=w.days)
        if not conditions:
            return results.c.finished_at >= since
        conditions.append(runs.c.started_at >= since)
        ids = conn.execute(select(runs.c.id).where(and_(*conditions))).scalars().all()
    else:
        query = select(runs.c.id).order_by(runs.c.started_at.desc(), runs.c.id.desc())
        if conditions:
            query = query.where(and_(*conditions))
        ids = conn.execute(query.limit(max(1, w.runs))).scalars().all()
    return results.c.run_id.in_(list(ids))


@dataclass
class FlakyRow:
    """A test's record over a window: counts, rates, its last failure."""

    test: str
    combination: str
    results: int
    passed: int
    failed: int
    flaky: int
    last_failure_at: datetime | None = None
    last_failure: str = ""
    last_failure_run: int | None = None

    @property
    def failing(self) -> int:
        """Results whose first attempt failed."""
        return self.failed + self.flaky

    @property
    def failure_rate(self) -> float:
        """failing / results."""
        return self.failing / self.results if self.results else 0.0

    @property
    def retry_pass_rate(self) -> float:
        """flaky / failing: how often a retry saved it."""
        return self.flaky / self.failing if self.failing else 0.0


def test_records(conn: Connection, w: Window, only_failing: bool = True,
                 tests: Sequence[str] = ()) -> list[FlakyRow]:
    """Each test's counts over the window (only tests that failed at least once unless
    only_failing is off; only the given tests when named), worst first."""
    failing = func.sum(results.c.failing)
    query = (select(results.c.test, results.c.combination, func.count(),
                    func.sum(case((results.c.status == "pass", 1), else_=0)),
                    func.sum(case((results.c.status.in_(("fail", "timeout")), 1), else_=0)),
                    func.sum(case((results.c.status == "flaky", 1), else_=0)),
                    func.max(case((results.c.failing == 1, results.c.finished_at), else_=None)))
             .where(and_(window_condition(conn, w), results.c.status != "skipped",
                         results.c.test.in_(list(tests)) if tests else true()))
             .group_by(results.c.test, results.c.combination))
    if only_failing:
        query = query.having(failing > 0)
    rows = [FlakyRow(test, comb, int(n), int(p or 0), int(fl or 0), int(fk or 0), last)
            for test, comb, n, p, fl, fk, last in conn.execute(query)]
    rows.sort(key=lambda r: (-r.failure_rate, -r.failing, r.test, r.combination))
    return rows


def add_last_failures(conn: Connection, rows: list[FlakyRow]) -> None:
    """Fill each row's last failure text and run."""
    for row in rows:
        found = conn.execute(
            select(results.c.failure, results.c.run_id)
            .where(and_(results.c.test == row.test, results.c.combination == row.combination,
                        results.c.failing == 1))
            .order_by(results.c.finished_at.desc(), results.c.id.desc()).limit(1)).first()
        if found is not None:
            row.last_failure, row.last_failure_run = found[0], int(found[1])


def flaky(conn: Connection, w: Window, limit: int = 100) -> list[FlakyRow]:
    """Tests that both failed and passed in the window, worst failure rate first."""
    rows = [r for r in test_records(conn, w) if r.passed + r.flaky > 0][:limit]
    add_last_failures(conn, rows)
    return rows


def unstable(conn: Connection, w: Window, min_rate: float) -> list[FlakyRow]:
    """Tests whose failure rate in the window is at least min_rate."""
    rows = [r for r in test_records(conn, w) if r.failure_rate >= min_rate]
    add_last_failures(conn, rows)
    return rows


@dataclass
class SlowRow:
    """A test's durations over the window: typical, last, and the trend (the median of
    its newer half against its older half)."""

    test: str
    combination: str
    results: int
    median_ms: float
    last_ms: int
    max_ms: int
    trend: float | None = None  # +0.25: a quarter slower than before
    points: list[tuple[datetime, int]] = field(default_factory=list)


def slowest(conn: Connection, w: Window, limit: int = 20) -> list[SlowRow]:
    """The slowest tests by median duration (passed or flaky results), with trends."""
    ok = results.c.status.in_(("pass", "flaky"))
    top = conn.execute(
        select(results.c.test, results.c.combination, func.avg(results.c.duration_ms))
        .where(and_(window_condition(conn, w), ok))
        .group_by(results.c.test, results.c.combination)
        .order_by(func.avg(results.c.duration_ms).desc()).limit(max(1, limit) * 2)).all()
    rows = []
    condition = window_condition(conn, w)
    for test, comb, _avg in top:
        points = [(at, int(ms)) for at, ms in conn.execute(
            select(results.c.finished_at, results.c.duration_ms)
            .where(and_(condition, ok, results.c.test == test, results.c.combination == comb))
            .order_by(results.c.finished_at, results.c.id))]
        values = [ms for _, ms in points]
        half = len(values) // 2
        trend = None
        if half >= 1:
            older, newer = statistics.median(values[:half]), statistics.median(values[-half:])
            trend = (newer - older) / older if older else None
        rows.append(SlowRow(test, comb, len(values), statistics.median(values), values[-1],
                            max(values), trend, points))
    rows.sort(key=lambda r: (-r.median_ms, r.test))
    return rows[:limit]


@dataclass
class RunRow:
    """A run with its counts."""

    id: int
    uuid: str
    started_at: datetime
    ended_at: datetime | None
    host: str
    platform: str
    mode: str
    selection: str
    shard: str
    tree_version: str
    tree_path: str
    branch: str
    revision: str
    job: str
    build: int | None
    build_url: str
    labels: dict[str, str]
    options: dict[str, Any]
    exit_code: int | None
    kewpie_version: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Results stored for the run."""
        return sum(self.counts.values())

    @property
    def failing(self) -> int:
        """Results whose first attempt failed."""
        return sum(n for status, n in self.counts.items() if status in FAILING)


RUN_COLUMNS = (runs.c.id, runs.c.uuid, runs.c.started_at, runs.c.ended_at, runs.c.host,
               runs.c.platform, runs.c.mode, runs.c.selection, runs.c.shard,
               runs.c.tree_version, runs.c.tree_path, runs.c.branch, runs.c.revision,
               runs.c.job, runs.c.build, runs.c.build_url, runs.c.labels, runs.c.options,
               runs.c.exit_code, runs.c.kewpie_version)


def _json(text: str, empty: Any) -> Any:
    try:
        value = json.loads(text or "")
    except ValueError:
        return empty
    return value if isinstance(value, type(empty)) else empty


def _run_rows(conn: Connection, query: Any) -> list[RunRow]:
    """Runs as RunRows: labels and options read, with their secrets as ``***`` whatever
    wrote them (the page, its static copy and ``kewpie history run`` show them)."""
    out = []
    for row in conn.execute(query):
        values = list(row)
        values[16] = redact(_json(values[16], {}))
        values[17] = redact(_json(values[17], {}))
        out.append(RunRow(*values))
    if out:
        counts = conn.execute(
            select(results.c.run_id, results.c.status, func.count())
            .where(results.c.run_id.in_([r.id for r in out]))
            .group_by(results.c.run_id, results.c.status))
        by_id = {r.id: r for r in out}
        for run_id, status, n in counts:
            by_id[int(run_id)].counts[status] = int(n)
    return out


def recent_runs(conn: Connection, limit: int = 30, branch: str = "", job: str = "") -> list[RunRow]:
    """The newest runs, with their counts."""
    conditions = _run_conditions(Window(branch=branch, job=job))
    query = select(*RUN_COLUMNS).order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(limit)
    if conditions:
        query = query.where(and_(*conditions))
    return _run_rows(conn, query)


def run_detail(conn: Connection, run_id: int) -> tuple[RunRow | None, list[ResultRow]]:
    """A run and its results in the order they finished."""
    found = _run_rows(conn, select(*RUN_COLUMNS).where(runs.c.id == run_id))
    if not found:
        return None, []
    query = (select(*RESULT_COLUMNS).select_from(results.join(runs, runs.c.id == results.c.run_id))
             .where(results.c.run_id == run_id).order_by(results.c.finished_at, results.c.id))
    return found[0], [_result_row(r) for r in conn.execute(query)]


def durations(conn: Connection, run_condition: ColumnElement[bool], max_result_id: int | None,
              last_runs: int = 20) -> dict[tuple[str, str], float]:
    """(test, combination) -> mean duration (ms) of passed or flaky results in the last
    last_runs runs matching run_condition (ended ones), only results up to
    max_result_id when given: the weights of --shard and longest-first scheduling."""
    ids = conn.execute(select(runs.c.id).where(and_(run_condition, runs.c.ended_at.is_not(None)))
                       .order_by(runs.c.started_at.desc(), runs.c.id.desc())
                       .limit(last_runs)).scalars().all()
    if not ids:
        return {}
    conditions: list[ColumnElement[bool]] = [results.c.run_id.in_(list(ids)),
                                             results.c.status.in_(("pass", "flaky"))]
    if max_result_id is not None:
        conditions.append(results.c.id <= max_result_id)
    query = (select(results.c.test, results.c.combination,
                    func.sum(results.c.duration_ms), func.sum(results.c.attempts))
             .where(and_(*conditions)).group_by(results.c.test, results.c.combination))
    return {(t, c): float(total) / max(1, int(attempts or 1))
            for t, c, total, attempts in conn.execute(query)}


def sightings(conn: Connection, signature: str, limit: int = 50) -> list[ResultRow]:
    """Other results with the same finding signature, newest first."""
    return search(conn, SearchFilter(signature=signature.replace("*", "").replace("?", ""),
                                     status="all", limit=limit))


def any_results(conn: Connection) -> bool:
    """True once the store holds a result."""
    return conn.execute(select(results.c.id).limit(1)).first() is not None
