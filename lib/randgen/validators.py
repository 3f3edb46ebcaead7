"""Validators: judge each statement of a run, as the Perl tool's ``--validators`` do.

- **ResultsetComparator** runs every statement on the run's server and on
  each comparison server (``--dsn2``/``--dsn3``, or ``compare=[server]`` in a
  test), and reports a difference in errors, affected rows or rows (compared
  as sorted multisets, non-zero numbers to 4 decimals, as randgen's
  Comparator).  A SELECT difference is recorded and the run goes on; a DML
  difference means the servers diverged: it is recorded and the run stops.
- **Transformer** re-runs a SELECT rewritten by each of ``--transformers``
  (default: all of :data:`~lib.randgen.transformers.TRANSFORMERS`, RQG's
  transformers for MariaDB 10.11: ``Distinct``, ``ExecuteAsDerived``,
  ``ExecuteAsView``, ``ExecuteAsCTE``, ``ExecuteAsPreparedOnce``/``Twice``,
  ``ExecuteAsSPTwice``, ``ExecuteAsUnion``, ``DisableOptimizations``,
  ``DisableChosenPlan``... see :mod:`lib.randgen.transformers`) on the same
  connection and reports rows that do not stand in the transformer's relation
  to the original's (the same rows, its distinct rows, its count, none...).
  A rewrite that fails is not applicable (randgen: STATUS_WONT_HANDLE); its
  cleanup statements run whatever happened.  Queries whose result is not
  deterministic (RAND(), NOW(), user variables, LIMIT without ORDER BY...)
  are skipped.

Each difference is a :class:`Difference`: validator, query, and per server
(or per transformation) the outcome: error, or rows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

import pymysql
import pymysql.cursors

from .cmdline import known_names
from .transformers import (TRANSFORMERS, TransformPlan, describe_relation, relation_holds,
                           transform)
from ..servers.sql import error_code

# randgen's names that mean the same here
VALIDATOR_ALIASES: Mapping[str, str] = MappingProxyType({"resultsetcomparator": "ResultsetComparator",
                     "resultsetcomparatorsimplify": "ResultsetComparator",
                     "resultsetcomparator3": "ResultsetComparator",
                     "transformer": "Transformer", "transformer2": "Transformer",
                     "transformerlight": "Transformer", "transformernocomparator": "Transformer",
                     "none": ""})
MAX_ROWS_SHOWN = 20
# errors that depend on timing, not on the server's answer to the query
TIMING_ERRORS = frozenset({1205, 1213, 1317, 1028, 3024, 1969, 1180, 1181})
# a result the driver could not decode (not valid in the connection's character set):
# not compared
UNDECODABLE = -2
_SELECT_RE = re.compile(r"^[\s(]*SELECT\b", re.I)
_READONLY_RE = re.compile(r"^[\s/*!0-9(]*(EXPLAIN|SELECT|SHOW|DESC|DESCRIBE|ANALYZE|CHECK|"
                          r"CHECKSUM|ALTER|LOAD\s+INDEX|CACHE\s+INDEX)\b", re.I)
_SKIP_COMPARE_RE = re.compile(r"^\s*(EXPLAIN|ANALYZE)\b|\b(CONNECTION_ID|PROCESSLIST|"
                              r"INFORMATION_SCHEMA|PERFORMANCE_SCHEMA|SHOW\s+.*STATUS)\b",
                              re.I | re.S)
_NONDETERMINISTIC_RE = re.compile(
    r"\b(RAND|UUID|UUID_SHORT|NOW|SYSDATE|CURRENT_TIMESTAMP|CURTIME|CURDATE|UNIX_TIMESTAMP|"
    r"CONNECTION_ID|LAST_INSERT_ID|FOUND_ROWS|ROW_COUNT|SLEEP|BENCHMARK|GET_LOCK|"
    r"RELEASE_LOCK|IS_USED_LOCK|IS_FREE_LOCK|NEXTVAL|NEXT\s+VALUE|ROWNUM)\b|@|"
    r"\bINTO\b|\bFOR\s+UPDATE\b|\bLOCK\s+IN\b|\bPROCEDURE\b|GROUP_CONCAT|SQL_CALC_FOUND_ROWS",
    re.I)
_LIMIT_RE = re.compile(r"\bLIMIT\b", re.I)
_ORDER_RE = re.compile(r"\bORDER\s+BY\b", re.I)


@dataclass
class Outcome:
    """What one server (or one transformation) answered: an error, or rows / affected rows."""

    label: str
    error: int = 0
    message: str = ""
    rows: list[tuple[Any, ...]] | None = None
    affected: int = 0

    def describe(self) -> dict[str, Any]:
        """JSON-friendly: label, error or rows (the first MAX_ROWS_SHOWN)."""
        if self.error:
            return {"label": self.label, "error": self.error, "message": self.message}
        if self.rows is None:
            return {"label": self.label, "affected_rows": self.affected}
        return {"label": self.label, "row_count": len(self.rows),
                "rows": [[_text(v) for v in r] for r in sorted(self.rows, key=_row_key)[:MAX_ROWS_SHOWN]]}


@dataclass
class Difference:
    """A validator's finding: the query and what each side answered."""

    validator: str
    kind: str                  # error, length, content
    query: str
    outcomes: list[Outcome] = field(default_factory=list)
    thread: int = 0

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"validator": self.validator, "kind": self.kind, "query": self.query,
                "thread": self.thread, "outcomes": [o.describe() for o in self.outcomes]}

    def summary(self) -> str:
        """One paragraph: the query and each side's answer."""
        lines = [f"{self.validator}: {self.kind} mismatch for: {self.query[:500]}"]
        for o in self.outcomes:
            d = o.describe()
            if "error" in d:
                lines.append(f"  {o.label}: error {o.error} ({o.message[:200]})")
            elif "rows" in d:
                shown = "; ".join(", ".join(r) for r in d["rows"][:5])
                lines.append(f"  {o.label}: {d['row_count']} row(s): {shown[:400]}")
            else:
                lines.append(f"  {o.label}: {o.affected} affected row(s)")
        return "\n".join(lines)


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _norm(value: Any) -> str:
    """randgen's Comparator: NULL, non-zero numbers to 4 decimals, everything else as text."""
    if value is None:
        return "NULL"
    text = _text(value)
    try:
        number = float(text)
    except ValueError:
        return text
    return f"{number:.4f}" if number != 0 else text


def _row_key(row: Sequence[Any]) -> str:
    return "\x01".join(_norm(v) for v in row)


def same_rows(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    """True when two result sets hold the same rows, in any order."""
    return len(a) == len(b) and sorted(map(_row_key, a)) == sorted(map(_row_key, b))


def run_statement(cur: pymysql.cursors.Cursor, sql: str, label: str) -> Outcome:
    """Execute sql on a cursor and capture its outcome (never raises for SQL errors)."""
    try:
        cur.execute(sql)
        rows = list(cur.fetchall()) if cur.description else None
        affected = cur.rowcount if rows is None else 0
        while cur.nextset():
            if cur.description:
                cur.fetchall()
        return Outcome(label, rows=rows, affected=max(0, affected or 0))
    except pymysql.MySQLError as exc:
        code = error_code(exc)
        return Outcome(label, error=code, message=str(exc.args[1]) if len(exc.args) > 1 else str(exc))
    except UnicodeDecodeError as exc:
        # PyMySQL stops reading the result at a value it cannot decode; the rest is
        # still on the socket: reopen the connection (its session starts afresh)
        reopened = _reopen(cur.connection)
        return Outcome(label, error=UNDECODABLE,
                       message=f"a value the driver cannot decode ({exc.reason}); "
                               + ("the connection was reopened" if reopened else
                                  "the connection could not be reopened"))


def _reopen(conn: pymysql.connections.Connection) -> bool:
    """Close and reopen a connection left out of step; False when it cannot reconnect."""
    try:
        conn.close()
    except Exception:  # noqa: BLE001 - out of step: any error is expected
        pass
    try:
        conn.connect()
    except pymysql.MySQLError:
        return False
    return True


def compare_outcomes(first: Outcome, other: Outcome) -> str:
    """'' when equal, else the kind of mismatch: error, length or content."""
    if bool(first.error) != bool(other.error):
        return "error"
    if first.error:
        return ""
    if first.rows is None or other.rows is None:
        if (first.rows is None) != (other.rows is None) or first.affected != other.affected:
            return "length"
        return ""
    if len(first.rows) != len(other.rows):
        return "length"
    return "" if same_rows(first.rows, other.rows) else "content"


def is_read_only(sql: str) -> bool:
    """True for statements that do not change data (a difference there does not stop the run)."""
    return bool(_READONLY_RE.match(sql))


def comparable(sql: str) -> bool:
    """False for statements whose results differ between servers by nature (EXPLAIN, ids...)."""
    return not _SKIP_COMPARE_RE.search(sql)


def transformable(sql: str) -> bool:
    """True for a deterministic single SELECT a transformer can rewrite."""
    if not _SELECT_RE.match(sql) or _NONDETERMINISTIC_RE.search(sql):
        return False
    if _LIMIT_RE.search(sql) and not _ORDER_RE.search(sql):
        return False
    return ";" not in sql.strip().rstrip(";")


class Validators:
    """The validators of one run thread: its comparison connections and transformers."""

    def __init__(self, names: Sequence[str], transformers: Sequence[str],
                 compare_cursors: Sequence[tuple[str, pymysql.cursors.Cursor]], thread: int,
                 record: Callable[[Difference, bool], None]) -> None:
        self.compare = "ResultsetComparator" in names
        self.transform = "Transformer" in names
        self.transformers = list(transformers) or list(TRANSFORMERS)
        self.cursors = list(compare_cursors)
        self.thread = thread
        self.record = record
        self.optimizer_switch: str | None = None
        self.checked: dict[str, int] = {}   # transformer -> rewrites run and compared
        self.refused: dict[str, int] = {}   # transformer -> rewrites the server refused

    def transform_note(self) -> str:
        """One line of what the transformers did (empty when none ran)."""
        if not self.checked and not self.refused:
            return ""
        return (f"thread {self.thread}: Transformer compared {sum(self.checked.values())} "
                f"rewrites ({sum(self.refused.values())} refused by the server); by "
                f"transformer: " + ", ".join(f"{n} {self.checked.get(n, 0)}"
                                             for n in sorted(set(self.checked) | set(self.refused))))

    def check(self, cur: pymysql.cursors.Cursor, sql: str, first: Outcome) -> bool:
        """Validate one statement the thread ran; False when the run must stop."""
        go_on = True
        if self.compare and self.cursors:
            go_on = self._compare(sql, first)
        if self.transform and first.rows is not None and not first.error and transformable(sql):
            self._transform(cur, sql, first)
        return go_on

    def _compare(self, sql: str, first: Outcome) -> bool:
        others = [run_statement(c, sql, label) for label, c in self.cursors]
        if not comparable(sql) or first.error in TIMING_ERRORS or \
                any(o.error in TIMING_ERRORS or o.error in (1064, UNDECODABLE) for o in others) or \
                first.error in (1064, UNDECODABLE):
            return True
        for other in others:
            kind = compare_outcomes(first, other)
            if kind:
                read_only = is_read_only(sql)
                self.record(Difference("ResultsetComparator", kind, sql, [first, *others],
                                       self.thread), not read_only)
                return read_only
        return True

    def _transform(self, cur: pymysql.cursors.Cursor, sql: str, first: Outcome) -> None:
        assert first.rows is not None
        for name in self.transformers:
            if name == "ExecuteAsSelectItem" and (len(first.rows) != 1 or len(first.rows[0]) != 1):
                continue  # a scalar subquery of a one-value result only
            plan = transform(name, sql, self.thread, self._switch(cur),
                             self._explain(cur, sql) if name == "DisableChosenPlan" else "")
            if plan is not None:
                self._run_plan(cur, name, sql, first, plan)

    def _run_plan(self, cur: pymysql.cursors.Cursor, name: str, sql: str, first: Outcome,
                  plan: TransformPlan) -> None:
        """Run a transformer's statements, check its relations, clean up."""
        assert first.rows is not None
        try:
            outcomes = []
            for i, statement in enumerate(plan.statements):
                outcome = run_statement(cur, statement, f"{name} #{i + 1}")
                outcomes.append(outcome)
                if outcome.error:
                    self.refused[name] = self.refused.get(name, 0) + 1
                    return  # the rewrite is not valid for this query (randgen: STATUS_WONT_HANDLE)
            self.checked[name] = self.checked.get(name, 0) + 1
            for index, relation in plan.checks:
                got = outcomes[index]
                rows = got.rows if got.rows is not None else []
                if not relation_holds(relation, first.rows, rows, _norm):
                    expected = Outcome(f"original (expected: {describe_relation(relation)})",
                                       rows=list(first.rows))
                    self.record(Difference(f"Transformer/{name}", "content", sql,
                                           [expected, Outcome(f"{name}: {plan.statements[index]}"[:300],
                                                              rows=list(rows))],
                                           self.thread), False)
                    return
        finally:
            for statement in plan.cleanup:
                run_statement(cur, statement, f"{name} cleanup")

    def _switch(self, cur: pymysql.cursors.Cursor) -> str:
        """The session's optimizer_switch (read once)."""
        if self.optimizer_switch is None:
            got = run_statement(cur, "SELECT @@SESSION.optimizer_switch", "optimizer_switch")
            self.optimizer_switch = str(got.rows[0][0]) if got.rows else ""
        return self.optimizer_switch

    @staticmethod
    def _explain(cur: pymysql.cursors.Cursor, sql: str) -> str:
        """EXPLAIN EXTENDED's rows of sql, as text ('' when it fails)."""
        got = run_statement(cur, f"EXPLAIN EXTENDED {sql}", "explain")
        return " ".join(_text(v) for row in got.rows or [] for v in row) if not got.error else ""


def normalise_names(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """(known validator names, unknown ones) from ``--validators`` values."""
    return known_names(names, VALIDATOR_ALIASES)
