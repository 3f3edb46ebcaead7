"""DQE (differential query execution): SELECT, UPDATE and DELETE with the same condition must
touch the same rows.

Song et al., "Testing Database Systems via Differential Query Execution" (ICSE
2023; SQLancer's ``MySQLDQEOracle``).  The three statements find their rows
by the same WHERE condition through different code paths.  The oracle works
on a copy of a table (:meth:`~lib.hunt.wrongresult.copies.Copies.like`: same
columns, keys and engine, plus ``kw_rowid``, a row's identity, and
``kw_touched``) so the originals never change, and for a generated condition
``p`` compares:

- ``SELECT t1.kw_rowid FROM copy AS t1 [JOIN ...] WHERE p`` -- the rows found;
- ``UPDATE copy AS t1 [JOIN ...] SET t1.kw_touched = 1 WHERE p``, then the rows
  with ``kw_touched = 1`` -- the rows updated (and its affected-rows count);
- ``DELETE FROM copy WHERE p`` (single-table form, the alias spelt out) or
  ``DELETE t1 FROM copy AS t1 [JOIN ...] WHERE p`` (multi-table form), then
  the rows left -- the rows deleted (and its count).

Each DML runs in a transaction rolled back (InnoDB, MyRocks) or on a copy
restored from a pristine one afterwards (MyISAM, Aria, MEMORY); the UPDATE is
undone before the DELETE (an ``ON UPDATE CURRENT_TIMESTAMP`` column would
otherwise change what ``p`` sees).  The session's ``sql_mode`` drops
``STRICT_*`` for the run: in strict mode a conversion warning of the WHERE is an
error in UPDATE/DELETE and a warning in SELECT (documented), which would make
the three disagree by design.  Joins (in the multi-table forms) join the copy
with an original table; a NULL-extended copy row is no row of the copy.  An
error in any of the statements skips the check.

The SELECT names the table its copy was made from (:data:`COPY_MARK`, a comment:
``/* dqe: a copy of `test`.`t1` */ SELECT t1.kw_rowid FROM `kw_oracle`.`kw_dqe2`
...``), so a finding holds what its check needs to run again after a replay
(:meth:`DQEOracle.rebuild`: the copy made again under its name, from the replayed
original); a finding written before the mark (or19-sf3's ``c6fabc5728c7``) names
only its copy, and the original is each replayed base table that has every column
the statements read on the copy (:func:`columns_read`), tried in turn until the
three disagree (the last otherwise).  :meth:`DQEOracle.seen` tells the reduced
case which copy it compares and how it is put back
(lib/hunt/wrongresult/checkforms.py writes the comparison as mysqltest lines).
"""
from __future__ import annotations

import json
import re
from typing import Sequence

from .copies import ROWID, SCHEMA, TOUCHED, Copies, Copy
from .execute import Connection, Outcome, run_query
from .generator import FromClause, GeneratorOptions, JoinPart, Scope, SqlGenerator
from .oracle import Check, OracleBase, Rebuilt, Verdict
from .schema import TableInfo, quote_name

SKIP_ROLLBACK = -4  # skip code: the copy could not be put back (the run stops using it)
COPY_MARK = "/* dqe: a copy of {original} */ "   # before the SELECT: where its copy came from
_MARK_RE = re.compile(r"^\s*/\* dqe: a copy of `((?:[^`]|``)+)`\.`((?:[^`]|``)+)` \*/\s*")
_COPY_RE = re.compile(r"\bFROM\s+(`(?:[^`]|``)+`\.`(?:[^`]|``)+`)\s+AS\s+t1\b")
MAX_CANDIDATES = 8  # the originals an old finding's copy may stand for, tried in turn
SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys", SCHEMA)


def _text(value: object) -> str:
    """A result value as text (bytes decoded)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def copy_origin(queries: Sequence[str]) -> tuple[str, tuple[str, str] | None]:
    """(the copy's quoted name, (schema, table) of the original its SELECT's mark names,
    None for a finding written before the mark) of a DQE finding's statements; ValueError
    when they are not DQE's (a SELECT, an UPDATE and a DELETE of a copy aliased t1)."""
    if len(queries) != 3:
        raise ValueError("not a DQE check: a SELECT, an UPDATE and a DELETE")
    m = _MARK_RE.match(queries[0])
    body = queries[0][m.end():] if m else queries[0]
    copy = _COPY_RE.search(body)
    if not body.lstrip().upper().startswith("SELECT") or copy is None:
        raise ValueError("not a DQE check: its SELECT reads no copy aliased t1")
    origin = (m.group(1).replace("``", "`"), m.group(2).replace("``", "`")) if m else None
    return copy.group(1), origin


def columns_read(queries: Sequence[str], copy: str) -> list[str]:
    """The columns of the copy the statements name (``t1.`c2```, the single-table DELETE's
    ``<copy>.`c2```), the oracle's own two left out, sorted."""
    names: set[str] = set()
    for sql in queries:
        for m in re.finditer(r"(?:\bt1|" + re.escape(copy) + r")\.`((?:[^`]|``)+)`", sql):
            names.add(m.group(1).replace("``", "`"))
    return sorted(names - {ROWID, TOUCHED})


def candidates_query(columns: Sequence[str]) -> str:
    """SQL listing (schema, table) of every base table outside the system schemas that has
    all these columns (every one when there are none), by name."""
    where = ("TABLE_SCHEMA NOT IN (" + ", ".join("'" + s + "'" for s in SYSTEM_SCHEMAS)
             + ") AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')")
    if not columns:
        return (f"SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE {where}"
                f" ORDER BY 1, 2 LIMIT {MAX_CANDIDATES}")
    listed = ", ".join("'" + c.replace("\\", "\\\\").replace("'", "''") + "'" for c in columns)
    return (f"SELECT t.TABLE_SCHEMA, t.TABLE_NAME FROM information_schema.TABLES AS t JOIN "
            f"information_schema.COLUMNS AS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND "
            f"c.TABLE_NAME = t.TABLE_NAME WHERE t.{where.replace(' AND ', ' AND t.')} AND "
            f"c.COLUMN_NAME IN ({listed}) GROUP BY 1, 2 HAVING COUNT(DISTINCT c.COLUMN_NAME) "
            f"= {len(columns)} ORDER BY 1, 2 LIMIT {MAX_CANDIDATES}")


class DQEOracle(OracleBase):
    """The DQE oracle (name ``dqe``) on the first connection's server."""

    name = "dqe"
    writes = True

    def __init__(self, options: GeneratorOptions | None = None,
                 statement_timeout: float = 10.0) -> None:
        super().__init__(options, statement_timeout)
        self.copies: Copies | None = None
        self.saved_mode: str | None = None
        self.by_name: dict[str, Copy] = {}
        self.mode_statement = ""  # the SET of the non-strict sql_mode (rebuild: for the case)

    def default_options(self) -> GeneratorOptions:
        """One copy, joined with at most one other table."""
        return GeneratorOptions(max_join_rows=5_000)

    def prepare(self, conns: Sequence[Connection], tables: list[TableInfo],
                rows: dict[tuple[str, str], int]) -> list[TableInfo]:
        """Non-strict sql_mode for the run; copies are made when a check first needs one."""
        self.copies = Copies(conns[0], "kw")
        self.by_name = {}
        got = run_query(conns[0], "SELECT @@SESSION.sql_mode")
        self.saved_mode = str(got.rows[0][0]) if not got.failed and got.rows else None
        if self.saved_mode is not None:
            mode = ",".join(m for m in self.saved_mode.split(",")
                            if m and not m.startswith("STRICT_"))
            self.mode_statement = f"SET SESSION sql_mode = '{mode}'"
            run_query(conns[0], self.mode_statement)
        return tables

    def rebuild(self, conns: Sequence[Connection], queries: Sequence[str]) -> Rebuilt:
        """A finding's copy made again under its name from the replayed original (the one
        its SELECT's mark names; for an older finding, each candidate in turn, see the
        module docstring), in the run's non-strict sql_mode; :meth:`finish` drops it.  A
        copy that cannot be made leaves its statements to fail: no disagreement."""
        copy_name, origin = copy_origin(queries)
        self.prepare(conns, [], {})
        name = copy_name.split("`.`", 1)[1][:-1].replace("``", "`")
        if origin is not None:
            originals = [origin]
        else:
            got = run_query(conns[0], candidates_query(columns_read(queries, copy_name)))
            originals = [(_text(r[0]), _text(r[1])) for r in got.rows or ()] \
                if not got.failed else []
        check = Check(tuple(queries), "")
        for n, (schema, table) in enumerate(originals):
            if n:  # the previous candidate's copy dropped: each is built alone
                self.finish(conns)
                self.prepare(conns, [], {})
            assert self.copies is not None
            copy = self.copies.like(TableInfo(schema, table, ()), name=name)
            if copy is None:
                continue
            self.by_name = {copy.table.sql_name: copy}
            if len(originals) == 1 or \
                    self.verdict(check, self.execute(conns, check)).kind == "differ":
                break
        assert self.copies is not None
        head = (self.mode_statement,) if self.mode_statement else ()
        return Rebuilt(head + tuple(self.copies.statements), self.copies.undo)

    def seen(self, check: Check, outcomes: Sequence[Outcome]) -> tuple[str, ...]:
        """The copy the statements changed, for the reduced case's comparison (JSON: its
        name, whether a transaction undoes a change, else the pristine copy and the columns
        that put it back)."""
        copy = self.by_name.get(self._table_of(check))
        if copy is None:
            return ()
        return (json.dumps({"copy": copy.table.sql_name, "transactional": copy.transactional,
                            "pristine": copy.pristine, "columns": list(copy.columns)}),)

    def finish(self, conns: Sequence[Connection]) -> None:
        """Drop the copies; the session's sql_mode as it was."""
        if self.copies is not None:
            self.copies.drop()
        if self.saved_mode is not None:
            run_query(conns[0], "SET SESSION sql_mode = '" + self.saved_mode.replace("'", "''") + "'")

    def generate(self, gen: SqlGenerator) -> Check | None:
        """The SELECT, UPDATE and DELETE of one condition over a copy of one table."""
        assert self.copies is not None
        base = [t for t in gen.tables if not t.is_view and gen.table_rows(t) > 0]
        if not base:
            return None
        original = gen.choice(base)
        copy = self.copies.like(original)
        if copy is None:
            return None
        self.by_name[copy.table.sql_name] = copy
        scope = Scope([("t1", copy.table)], rows=max(1, copy.rows))
        parts = [JoinPart("", copy.table, "t1")]
        sql = f"{copy.table.sql_name} AS t1"
        if gen.chance(0.3):
            other = gen.pick_table(max(1, 5000 // max(1, copy.rows)))
            if other is not None:
                kind = gen.choice(("JOIN", "LEFT JOIN", "STRAIGHT_JOIN"))
                inner = Scope(scope.tables + [("t2", other)], rows=scope.rows)
                on = gen.join_condition(scope, "t2", other, inner)
                sql += f" {kind} {other.sql_name} AS t2 ON {on}"
                parts.append(JoinPart(kind, other, "t2", on))
                scope = inner
        fc = FromClause(sql, scope, scope.rows, tuple(parts))
        p = gen.predicate(fc.scope)
        table = copy.table.sql_name
        mark = COPY_MARK.format(original=original.sql_name)
        select = f"{mark}SELECT t1.{ROWID} FROM {fc.sql} WHERE {p}"
        if len(parts) == 1:
            update = f"UPDATE {fc.sql} SET t1.{TOUCHED} = 1 WHERE {p}"
            single = gen.chance(0.5)
            delete = (f"DELETE FROM {table} WHERE {_spell_out(p, table)}" if single
                      else f"DELETE t1 FROM {fc.sql} WHERE {p}")
            variant = "single" if single else "multi-table"
        else:
            update = f"UPDATE {fc.sql} SET t1.{TOUCHED} = 1 WHERE {p}"
            delete = f"DELETE t1 FROM {fc.sql} WHERE {p}"
            variant = "join"
        return Check((select, update, delete), variant)

    def execute(self, conns: Sequence[Connection], check: Check) -> list[Outcome]:
        """SELECT; UPDATE and the touched rows, undone; DELETE and the rows left, undone."""
        conn = conns[0]
        table = self._table_of(check)
        copy = self.by_name.get(table)
        if copy is None:
            return [Outcome(None, SKIP_ROLLBACK, "the copy is no longer usable")]
        outcomes = [self._run(conn, check.queries[0])]
        if outcomes[0].failed:
            return outcomes
        for dml, after in ((check.queries[1], f"SELECT {ROWID} FROM {table} WHERE {TOUCHED} = 1"),
                           (check.queries[2], f"SELECT {ROWID} FROM {table}")):
            if copy.transactional:
                self._run(conn, "START TRANSACTION")
            changed = self._run(conn, dml)
            outcomes.append(changed)
            if not changed.failed:
                outcomes.append(self._run(conn, after))
            undone = (not self._run(conn, "ROLLBACK").failed if copy.transactional
                      else self.copies is not None and self.copies.restore(copy))
            if not undone:
                outcomes.append(Outcome(None, SKIP_ROLLBACK, "the copy could not be put back"))
                self.by_name.pop(table, None)
            if outcomes[-1].failed:
                return outcomes
        return outcomes

    def _run(self, conn: Connection, sql: str) -> Outcome:
        """One statement (counted)."""
        self.stats.statements += 1
        return run_query(conn, sql)

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when the SELECT found, the UPDATE touched and the DELETE removed the same
        rows (and each DML's count says so)."""
        table = self._table_of(check)
        copy = self.by_name.get(table)
        found = sorted({r[0] for r in outcomes[0].rows or () if r[0] is not None})
        updated_count = outcomes[1].affected
        touched = sorted(r[0] for r in outcomes[2].rows or ())
        deleted_count = outcomes[3].affected
        left = {r[0] for r in outcomes[4].rows or ()}
        everything = set(range(1, (copy.rows if copy else 0) + 1))
        deleted = sorted(everything - left)
        results = (f"SELECT found {len(found)} row(s): {_ids(found)}",
                   f"UPDATE: {updated_count} affected, touched {len(touched)}: {_ids(touched)}",
                   f"DELETE: {deleted_count} affected, removed {len(deleted)}: {_ids(deleted)}")
        problems = []
        if touched != found:
            problems.append("UPDATE touched other rows than SELECT found")
        if deleted != found:
            problems.append("DELETE removed other rows than SELECT found")
        if updated_count != len(touched):
            problems.append(f"UPDATE said {updated_count} row(s), touched {len(touched)}")
        if deleted_count != len(deleted):
            problems.append(f"DELETE said {deleted_count} row(s), removed {len(deleted)}")
        if not problems:
            return Verdict("agree", results=results)
        return Verdict("differ", results=results, detail=f"DQE ({check.variant}): " + "; ".join(problems))

    def _table_of(self, check: Check) -> str:
        """The copy's sql name (the SELECT's first table)."""
        try:
            return copy_origin(check.queries)[0]
        except ValueError:
            return ""


def _ids(ids: Sequence[int]) -> str:
    """A short list of row ids."""
    return ", ".join(str(i) for i in ids[:30]) + (" ..." if len(ids) > 30 else "")


def _spell_out(predicate: str, table: str) -> str:
    """predicate with the alias t1 replaced by the table's name (single-table DELETE has no
    alias in MariaDB 10.11)."""
    return predicate.replace("t1.`", f"{table}.`")
