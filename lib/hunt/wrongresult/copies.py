"""Copies of the checked tables in a schema of the oracles' own (DQE, Radar).

:class:`Copies` makes, on one connection, copies of tables in schema
:data:`SCHEMA` (created when first needed, dropped by :meth:`Copies.drop`),
with the session's binary log off while it writes there (``sql_log_bin=0``,
when the account may: a replica never sees the schema, and the divergence
oracle never compares it):

- :meth:`Copies.like`: ``CREATE TABLE ... LIKE`` the original (same columns,
  keys, engine, partitioning, CHECK constraints; no triggers, no foreign keys)
  plus two columns of the oracle's, ``kw_rowid`` (1..n: a row's identity) and
  ``kw_touched`` (0), filled from the original; for a table of an engine
  without transactions a second, pristine copy restores it (:meth:`Copies.restore`);
- :meth:`Copies.raw`: the same data without metadata (Radar's "raw
  database"): every column of its own type, character set and collation, but
  nullable, without keys, defaults, AUTO_INCREMENT, generation expressions,
  constraints or partitions, in the original's engine when it takes the
  columns (else InnoDB); a view gets a table of its rows; under a name of its
  own when asked (a finding's statements judged again after a replay name the
  copies they ran on: lib/hunt/wrongresult/replay.py; so does :meth:`Copies.like`).

:attr:`Copies.statements` keeps every statement that built the copies (the
schema, the tables, their rows) and :attr:`Copies.undo` what drops them: a
reduced case builds them as the reduction did.

A copy that cannot be made (an engine that refuses, a type the server
cannot copy) is None: its table is left out of the checks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .execute import Connection, run_query
from .schema import TableInfo, quote_name

SCHEMA = "kw_oracle"
TRANSACTIONAL_ENGINES = frozenset({"innodb", "rocksdb"})
ROWID = "kw_rowid"
TOUCHED = "kw_touched"


def _text(value: object) -> str:
    """A result value as text (bytes decoded)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _quote_text(value: str) -> str:
    """A string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True)
class Copy:
    """A copy: its table (schema, name, the original's columns), the original, whether its
    engine has transactions, its row count and the columns to copy (not generated)."""

    table: TableInfo
    original: TableInfo
    transactional: bool
    rows: int
    columns: tuple[str, ...]
    pristine: str = ""  # sql name of the pristine copy (engines without transactions)


class Copies:
    """Copies of tables on one connection (see the module docstring)."""

    def __init__(self, conn: Connection, prefix: str) -> None:
        self.conn = conn
        self.prefix = prefix
        self.made: dict[tuple[str, str], Copy | None] = {}
        self.schema_ready = False
        self.saved_log_bin: object = None
        self.count = 0
        self.statements: list[str] = []   # every statement that built the copies

    @property
    def undo(self) -> tuple[str, ...]:
        """The statements that drop the copies (none before the schema was made)."""
        return (f"DROP SCHEMA IF EXISTS {quote_name(SCHEMA)}",) if self.schema_ready else ()

    def _run(self, sql: str, record: bool = True) -> bool:
        """Run one statement of the copies; True when it succeeded (then kept in
        :attr:`statements` when record)."""
        if run_query(self.conn, sql).failed:
            return False
        if record:
            self.statements.append(sql)
        return True

    def _ready(self) -> None:
        """The schema exists, the session's binary log is off."""
        if self.schema_ready:
            return
        got = run_query(self.conn, "SELECT @@SESSION.sql_log_bin")
        if not got.failed and got.rows:
            self.saved_log_bin = got.rows[0][0]
            if not self._run("SET SESSION sql_log_bin = 0", record=False):
                self.saved_log_bin = None
        self._run(f"CREATE SCHEMA IF NOT EXISTS {quote_name(SCHEMA)}")
        self.schema_ready = True

    def drop(self) -> None:
        """Drop the copies' schema; the session's binary log as it was."""
        if self.schema_ready:
            self._run(f"DROP SCHEMA IF EXISTS {quote_name(SCHEMA)}")
            if self.saved_log_bin is not None:
                self._run(f"SET SESSION sql_log_bin = {int(str(self.saved_log_bin) in ('1', 'ON'))}",
                          record=False)
        self.schema_ready = False
        self.made.clear()

    def _describe(self, table: TableInfo) -> tuple[str, list[tuple[str, str, str, str, bool]]] | None:
        """(engine, [(column, column type, character set, collation, generated)]) of a table
        or view, from information_schema; None when it is gone."""
        where = (f"TABLE_SCHEMA = {_quote_text(table.schema)} AND "
                 f"TABLE_NAME = {_quote_text(table.name)}")
        engine = run_query(self.conn, f"SELECT ENGINE FROM information_schema.TABLES WHERE {where}")
        got = run_query(self.conn, "SELECT COLUMN_NAME, COLUMN_TYPE, CHARACTER_SET_NAME, "
                                   "COLLATION_NAME, IS_GENERATED FROM information_schema.COLUMNS "
                                   f"WHERE {where} ORDER BY ORDINAL_POSITION")
        if engine.failed or got.failed or not got.rows:
            return None
        name = _text(engine.rows[0][0]) if engine.rows and engine.rows[0][0] else ""
        return name, [(_text(c), _text(t), _text(cs) if cs else "", _text(co) if co else "",
                       _text(g).upper() == "ALWAYS") for c, t, cs, co, g in got.rows]

    def _name(self, kind: str) -> str:
        self.count += 1
        return f"{self.prefix}_{kind}{self.count}"

    def like(self, table: TableInfo, name: str = "") -> Copy | None:
        """A ``LIKE`` copy with kw_rowid and kw_touched (cached per table), named name when
        given (else the next ``<prefix>_dqe<n>``)."""
        key = ("like", table.schema + "." + table.name)
        if key in self.made:
            return self.made[key]
        self.made[key] = None
        if table.is_view:
            return None
        self._ready()
        described = self._describe(table)
        if described is None:
            return None
        engine, columns = described
        copied = tuple(quote_name(c) for c, _, _, _, generated in columns if not generated)
        name = name or self._name("dqe")
        sql_name = f"{quote_name(SCHEMA)}.{quote_name(name)}"
        listed = ", ".join(copied)
        if not (self._run(f"CREATE TABLE {sql_name} LIKE {table.sql_name}")
                and self._run(f"ALTER TABLE {sql_name} ADD COLUMN {ROWID} BIGINT NOT NULL "
                              f"DEFAULT 0, ADD COLUMN {TOUCHED} INT NOT NULL DEFAULT 0")
                and self._run(f"INSERT INTO {sql_name} ({listed}, {ROWID}) SELECT {listed}, "
                              f"ROW_NUMBER() OVER () FROM {table.sql_name}")):
            self._run(f"DROP TABLE IF EXISTS {sql_name}")
            return None
        transactional = engine.lower() in TRANSACTIONAL_ENGINES
        pristine = ""
        if not transactional:
            pristine = f"{quote_name(SCHEMA)}.{quote_name(name + '_pristine')}"
            if not self._run(f"CREATE TABLE {pristine} ENGINE=MyISAM AS SELECT {listed}, {ROWID} "
                             f"FROM {sql_name}"):
                return None
        got = run_query(self.conn, f"SELECT COUNT(*) FROM {sql_name}")
        rows = int(got.rows[0][0]) if not got.failed and got.rows else 0
        info = TableInfo(SCHEMA, name, table.columns, all_names=table.all_names + (ROWID,))
        copy = Copy(info, table, transactional, rows, copied, pristine)
        self.made[key] = copy
        return copy

    def restore(self, copy: Copy) -> bool:
        """A copy without transactions as it was made (from its pristine copy)."""
        if copy.transactional or not copy.pristine:
            return True
        listed = ", ".join(copy.columns)
        return (self._run(f"DELETE FROM {copy.table.sql_name}")
                and self._run(f"INSERT INTO {copy.table.sql_name} ({listed}, {ROWID}) "
                              f"SELECT {listed}, {ROWID} FROM {copy.pristine}"))

    def raw(self, table: TableInfo, name: str = "") -> Copy | None:
        """A raw copy: the rows without keys, constraints, defaults (cached per table),
        named name when given (else the next ``<prefix>_raw<n>``)."""
        key = ("raw", table.schema + "." + table.name)
        if key in self.made:
            return self.made[key]
        self.made[key] = None
        self._ready()
        described = self._describe(table)
        if described is None:
            return None
        engine, columns = described
        name = name or self._name("raw")
        defs = []
        for column, column_type, charset, collation, _ in columns:
            spec = f"{quote_name(column)} {column_type}"
            if charset:
                spec += f" CHARACTER SET {charset}"
            if collation:
                spec += f" COLLATE {collation}"
            defs.append(spec + " NULL")
        sql_name = f"{quote_name(SCHEMA)}.{quote_name(name)}"
        listed = ", ".join(quote_name(c) for c, _, _, _, _ in columns)
        made = False
        for use in ([engine] if engine else []) + ["InnoDB"]:
            if self._run(f"CREATE TABLE {sql_name} ({', '.join(defs)}) ENGINE={use}"):
                made = self._run(f"INSERT INTO {sql_name} ({listed}) SELECT {listed} "
                                 f"FROM {table.sql_name}")
                if made:
                    break
                self._run(f"DROP TABLE IF EXISTS {sql_name}")
        if not made:
            return None
        copy = Copy(TableInfo(SCHEMA, name, table.columns, False,
                              all_names=table.all_names), table,
                    engine.lower() in TRANSACTIONAL_ENGINES, 0, ())
        self.made[key] = copy
        return copy


def copy_names(copies: Sequence[Copy]) -> dict[str, str]:
    """original sql name -> copy sql name, for rewriting queries."""
    return {c.original.sql_name: c.table.sql_name for c in copies}
