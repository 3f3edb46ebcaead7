"""Validators: judge each statement of a run, as the Perl tool's ``--validators`` do.

- **ResultsetComparator** runs every statement on the run's server and on
  each comparison server (``--dsn2``/``--dsn3``, or ``compare=[server]`` in a
  test), and reports a difference in errors, affected rows or rows (compared
  as sorted multisets, non-zero numbers to 4 decimals, as randgen's
  Comparator).  A SELECT difference is recorded and the run goes on; a DML
  difference means the servers diverged: it is recorded and the run stops.
- **Transformer** re-runs a SELECT rewritten by each of ``--transformers``
  (default: all of :data:`TRANSFORMERS`) on the same connection and reports a
  different result set: ``Distinct`` (``SELECT DISTINCT``, compared with the
  original's distinct rows), ``ExecuteAsDerived`` (``SELECT * FROM (q)``),
  ``ExecuteAsView`` (a view over q), ``ExecuteAsPreparedOnce`` (``PREPARE`` +
  ``EXECUTE``), ``Count`` (``SELECT COUNT(*) FROM (q)``) and ``OrderBy``
  (q with ``ORDER BY 1`` when it has none).  Queries whose result is not
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

# randgen's names that mean the same here
VALIDATOR_ALIASES: Mapping[str, str] = MappingProxyType({"resultsetcomparator": "ResultsetComparator",
                     "resultsetcomparatorsimplify": "ResultsetComparator",
                     "resultsetcomparator3": "ResultsetComparator",
                     "transformer": "Transformer", "transformer2": "Transformer",
                     "transformerlight": "Transformer", "transformernocomparator": "Transformer",
                     "none": ""})
TRANSFORMERS = ("Distinct", "ExecuteAsDerived", "ExecuteAsView", "ExecuteAsPreparedOnce",
                "Count", "OrderBy")
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
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
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


def transform(name: str, sql: str, thread: int) -> tuple[list[str], str] | None:
    """(statements to run, which one's rows to compare: 'last') for a transformer, or None.

    The rows of the last statement are compared with the original's (for
    Distinct, with the original's distinct rows; for Count, with its count).
    """
    q = sql.strip().rstrip(";")
    if name == "Distinct":
        if re.match(r"^\s*SELECT\s+DISTINCT\b", q, re.I):
            return None
        return [re.sub(r"^\s*SELECT\b", "SELECT DISTINCT", q, count=1, flags=re.I)], "distinct"
    if name == "ExecuteAsDerived":
        return [f"SELECT * FROM ( {q} ) AS kewpie_derived"], "same"
    if name == "ExecuteAsView":
        view = f"kewpie_transform_view_{thread}"
        return [f"CREATE OR REPLACE VIEW {view} AS {q}", f"SELECT * FROM {view}",
                f"DROP VIEW IF EXISTS {view}"], "second"
    if name == "ExecuteAsPreparedOnce":
        text = q.replace("\\", "\\\\").replace("'", "\\'")
        return [f"PREPARE kewpie_stmt FROM '{text}'", "EXECUTE kewpie_stmt",
                "DEALLOCATE PREPARE kewpie_stmt"], "second"
    if name == "Count":
        return [f"SELECT COUNT(*) FROM ( {q} ) AS kewpie_count"], "count"
    if name == "OrderBy":
        if _ORDER_RE.search(q) or _LIMIT_RE.search(q) or re.search(r"\bUNION\b", q, re.I):
            return None
        return [f"{q} ORDER BY 1"], "same"
    return None


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
            plan = transform(name, sql, self.thread)
            if plan is None:
                continue
            statements, how = plan
            outcomes = [run_statement(cur, s, f"{name}") for s in statements]
            got = outcomes[1] if how == "second" else outcomes[0]
            if any(o.error for o in outcomes[:2]):
                continue  # the rewrite is not valid for this query (randgen: STATUS_WONT_HANDLE)
            expected = first.rows
            if how == "distinct":
                seen: dict[str, tuple[Any, ...]] = {}
                for row in first.rows:
                    seen.setdefault(_row_key(row), row)
                expected = list(seen.values())
            elif how == "count":
                expected = [(len(first.rows),)]
            if got.rows is None or not same_rows(expected, got.rows):
                original = Outcome("original", rows=expected)
                self.record(Difference(f"Transformer/{name}", "content", sql,
                                       [original, got], self.thread), False)


def normalise_names(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """(known validator names, unknown ones) from ``--validators`` values."""
    return known_names(names, VALIDATOR_ALIASES)
