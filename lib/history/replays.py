"""The replayed bugs in the history: each bug's status per code tree and per run, and the
search over them by bug id, signature and UniqueID.

``--mode=replay`` records one result per reproducer and tree (lib/modes/replay/run.py):
test ``replay.<reproducer>`` (``replay.MDEV-12345``), the tree's version as its
combination, status ``fail`` when it reproduced (``pass`` when not, ``timeout``,
``skipped``), kewpie's signature id, and a failure text whose lines say the outcome,
``UniqueID: ...``, ``signature ID: TEXT`` and ``known: BUG (quality)``.  Nothing
else is stored for them: these functions read those rows back.

- :func:`find_bugs`: the replayed bugs whose name, signature id or UniqueID (or any
  text of their failure) matches the query, each with its latest state per tree;
- :func:`bug_history`: one bug's runs (newest first) by tree, its signatures and
  UniqueIDs, what the known-bugs files named it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.engine import Connection

from .patterns import ESCAPE, check, to_like
from .schema import results, runs

PREFIX = "replay."
STATES = MappingProxyType({"fail": "present", "pass": "absent", "timeout": "timeout",
                           "skipped": "skipped"})
MAX_ROWS = 5000


@dataclass
class BugCell:
    """A bug on one tree in one run."""

    status: str               # the history's status (fail, pass, timeout, skipped)
    signature: str
    unique_id: str
    known: str
    outcome: str              # crash, hang, errorlog ('' when it did not reproduce)
    run_id: int
    finished_at: datetime
    evidence: str

    @property
    def state(self) -> str:
        """present, absent, timeout or skipped."""
        return STATES.get(self.status, self.status)


@dataclass
class BugRun:
    """A run that replayed the bug: its cells by tree."""

    run_id: int
    finished_at: datetime
    host: str
    cells: dict[str, BugCell] = field(default_factory=dict)


@dataclass
class BugHistory:
    """One bug across runs and trees."""

    name: str                                   # MDEV-12345
    trees: list[str]
    latest: dict[str, BugCell]
    runs: list[BugRun]
    signatures: list[str]
    unique_ids: list[str]
    known: list[str]


def bug_name(test: str) -> str:
    """``MDEV-12345`` of ``replay.MDEV-12345``."""
    return test[len(PREFIX):] if test.startswith(PREFIX) else test


def parse_failure(text: str) -> dict[str, str]:
    """The outcome, UniqueID and known-bug lines of a replay result's failure text."""
    out = {"outcome": "", "unique_id": "", "known": ""}
    for line in text.splitlines():
        if line.startswith("UniqueID: "):
            out["unique_id"] = line[len("UniqueID: "):].strip()
        elif line.startswith("known: "):
            out["known"] = line[len("known: "):].strip()
        elif not out["outcome"] and ":" in line:
            head = line.split(":", 1)[0].strip()
            if head in ("crash", "hang", "errorlog"):
                out["outcome"] = head
    return out


def _cell(row: Any) -> BugCell:
    parsed = parse_failure(row.failure or "")
    return BugCell(row.status, row.signature or "", parsed["unique_id"], parsed["known"],
                   parsed["outcome"], int(row.run_id), row.finished_at, row.evidence or "")


def _rows(conn: Connection, condition: Any, limit: int = MAX_ROWS) -> list[Any]:
    query = (select(results.c.test, results.c.combination, results.c.status, results.c.signature,
                    results.c.failure, results.c.run_id, results.c.finished_at,
                    results.c.evidence, runs.c.host)
             .select_from(results.join(runs, runs.c.id == results.c.run_id))
             .where(condition)
             .order_by(results.c.finished_at.desc(), results.c.id.desc()).limit(limit))
    return list(conn.execute(query))


def find_bugs(conn: Connection, query: str = "", limit: int = 200) -> list[BugHistory]:
    """The replayed bugs matching query (see the module docstring), the bugs that
    reproduced somewhere first; every replayed bug (up to limit) when query is ''."""
    query = check(query, "query")
    condition: ColumnElement[bool] = results.c.test.like(to_like(PREFIX) + "%", escape=ESCAPE)
    if query:
        anywhere = f"%{to_like(query)}%"
        condition = and_(condition, or_(results.c.test.like(anywhere, escape=ESCAPE),
                                        results.c.signature == query,
                                        results.c.failure.like(anywhere, escape=ESCAPE)))
    names = list(conn.execute(select(results.c.test).where(condition).distinct()
                              .order_by(results.c.test).limit(limit)).scalars())
    if not names:
        return []
    grouped: dict[str, list[Any]] = {}
    for row in _rows(conn, results.c.test.in_(names), MAX_ROWS * 4):
        grouped.setdefault(str(row.test), []).append(row)
    bugs = [_history(test, rows) for test, rows in grouped.items()]
    bugs.sort(key=lambda b: (not any(c.state == "present" for c in b.latest.values()), b.name))
    return bugs


def bug_history(conn: Connection, name: str) -> BugHistory | None:
    """One replayed bug (``MDEV-12345`` or ``replay.MDEV-12345``); None when never replayed."""
    test = name if name.startswith(PREFIX) else PREFIX + name
    rows = _rows(conn, results.c.test == test)
    return _history(test, rows) if rows else None


def _history(test: str, rows: list[Any]) -> BugHistory:
    """A bug's history from its rows, newest first."""
    trees: list[str] = []
    latest: dict[str, BugCell] = {}
    by_run: dict[int, BugRun] = {}
    signatures: list[str] = []
    unique_ids: list[str] = []
    known: list[str] = []
    for row in rows:
        tree = str(row.combination or "-")
        cell = _cell(row)
        if tree not in trees:
            trees.append(tree)
        latest.setdefault(tree, cell)
        run = by_run.setdefault(cell.run_id, BugRun(cell.run_id, cell.finished_at,
                                                    str(row.host or "")))
        run.cells.setdefault(tree, cell)
        for value, seen in ((cell.signature, signatures), (cell.unique_id, unique_ids),
                            (cell.known, known)):
            if value and value not in seen and cell.state == "present":
                seen.append(value)
    trees.sort()
    return BugHistory(bug_name(test), trees, latest,
                      sorted(by_run.values(), key=lambda r: r.finished_at, reverse=True),
                      signatures, unique_ids, known)
