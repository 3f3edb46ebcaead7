"""Schema metadata for the ``_table``/``_field`` built-ins, read from the server.

:class:`Metadata` is a snapshot: schemas, their tables and views, and each
table's columns with data type and key kind (``primary``, ``indexed`` or
none), everything sorted by name so that the same seed picks the same names.
:func:`load_metadata` reads it from ``information_schema`` over any PyMySQL
connection; :class:`MetadataCache` holds the current snapshot for all
generator threads and replaces it on :meth:`MetadataCache.refresh` (the
executor refreshes after DDL).  Without a server, a snapshot can be built
from a gendata specification (:meth:`Metadata.from_tables`).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    import pymysql.connections

SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")
INT_TYPES = ("tinyint", "smallint", "mediumint", "int", "integer", "bigint")
CHAR_TYPES = ("char", "varchar")
# collations a snapshot built without a server offers to _collation/_charset
OFFLINE_COLLATIONS = ("binary", "latin1_bin", "latin1_swedish_ci", "utf8mb3_general_ci",
                      "utf8mb4_bin", "utf8mb4_general_ci", "utf8mb4_unicode_ci")
META_TYPES: Mapping[str, str] = MappingProxyType({
    **{t: "int" for t in ("bit", "tinyint", "smallint", "mediumint", "int", "bigint")},
    "float": "float", "double": "float", "decimal": "decimal",
    "datetime": "timestamp", "timestamp": "timestamp",
    **{t: "char" for t in ("char", "varchar", "binary", "varbinary")},
    **{t: "blob" for t in ("tinyblob", "blob", "mediumblob", "longblob")},
    **{t: "text" for t in ("tinytext", "text", "mediumtext", "longtext")},
})


@dataclass(frozen=True)
class Column:
    """A column: name, data type (``int``, ``varchar``...) and key kind."""

    name: str
    data_type: str = "int"
    key: str = ""  # 'primary', 'indexed' or ''
    max_length: int | None = None  # CHARACTER_MAXIMUM_LENGTH
    column_type: str = ""          # COLUMN_TYPE, lower case: 'int(10) unsigned zerofill'

    @property
    def meta_type(self) -> str:
        """randgen's generalised type: int, float, decimal, timestamp, char, blob, text or the type."""
        return META_TYPES.get(self.data_type, self.data_type)

    @property
    def indexed(self) -> bool:
        """True for primary-key and other indexed columns."""
        return self.key in ("primary", "indexed")

    @property
    def is_int(self) -> bool:
        """True for integer types."""
        return self.data_type in INT_TYPES

    @property
    def is_char(self) -> bool:
        """True for CHAR and VARCHAR."""
        return self.data_type in CHAR_TYPES


@dataclass(frozen=True)
class Table:
    """A table or view and its columns (in name order)."""

    schema: str
    name: str
    columns: tuple[Column, ...] = ()
    is_view: bool = False
    rows: int = 0  # TABLE_ROWS (an estimate for InnoDB); randgen's "big" tables have >= 500


_KIND_FILTERS: Mapping[str, Callable[[Column], bool]] = MappingProxyType({
    "": lambda c: True,
    "primary": lambda c: c.key == "primary",
    "no_pk": lambda c: c.key != "primary",
    "indexed": lambda c: c.indexed,
    "unindexed": lambda c: not c.indexed,
    "int": lambda c: c.is_int,
    "int_indexed": lambda c: c.is_int and c.indexed,
    "char": lambda c: c.is_char,
    "char_indexed": lambda c: c.is_char and c.indexed,
})


@dataclass
class Metadata:
    """A snapshot of the schemas a grammar works on (not changed once built)."""

    default_schema: str = "test"
    tables_by_schema: dict[str, tuple[Table, ...]] = field(default_factory=dict)
    collations: tuple[str, ...] = ()
    charsets: tuple[str, ...] = ()
    version: int = 0
    _lookup: dict[tuple[str, str], Table] = field(default_factory=dict, repr=False)
    _cache: dict[tuple[str | None, ...], list[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for schema, tables in self.tables_by_schema.items():
            for t in tables:
                self._lookup[(schema, t.name)] = t

    @classmethod
    def from_tables(cls, tables: Iterable[Table], default_schema: str = "test") -> "Metadata":
        """A snapshot from table descriptions (gendata's, for generating without a server)."""
        by_schema: dict[str, list[Table]] = {}
        for t in tables:
            t = replace(t, columns=tuple(sorted(t.columns, key=lambda c: c.name)))
            by_schema.setdefault(t.schema, []).append(t)
        by_schema.setdefault(default_schema, [])
        return cls(default_schema, {s: tuple(sorted(ts, key=lambda t: t.name))
                                    for s, ts in sorted(by_schema.items())},
                   OFFLINE_COLLATIONS, tuple(sorted({c.split("_")[0] for c in OFFLINE_COLLATIONS})))

    def schemas(self) -> list[str]:
        """User schemas, sorted."""
        return sorted(self.tables_by_schema)

    def tables(self, schema: str | None = None) -> list[str]:
        """Table and view names of a schema (default: the default schema)."""
        key = ("tables", schema)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = [t.name for t in
                                      self.tables_by_schema.get(schema or self.default_schema, ())]
        return hit

    def base_tables(self, schema: str | None = None) -> list[str]:
        """Base table names of a schema."""
        return [t.name for t in self.tables_by_schema.get(schema or self.default_schema, ())
                if not t.is_view]

    def views(self, schema: str | None = None) -> list[str]:
        """View names of a schema."""
        return [t.name for t in self.tables_by_schema.get(schema or self.default_schema, ())
                if t.is_view]

    def table(self, name: str | None, schema: str | None = None) -> Table | None:
        """A table by name; with no name, the schema's first table."""
        schema = schema or self.default_schema
        if name is None:
            tables = self.tables_by_schema.get(schema, ())
            return tables[0] if tables else None
        return self._lookup.get((schema, name))

    def columns(self, table: str | None, schema: str | None = None, kind: str = "") -> list[str]:
        """Column names of a table, optionally only one kind.

        kind: '' (all), 'primary', 'no_pk', 'indexed', 'unindexed', 'int', 'int_indexed',
        'char', 'char_indexed'.
        """
        key = (table, schema, kind)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        t = self.table(table, schema)
        select = _KIND_FILTERS[kind]
        hit = self._cache[key] = [c.name for c in (t.columns if t else ()) if select(c)]
        return hit

    def table_count(self) -> int:
        """How many tables and views the snapshot knows."""
        return sum(len(ts) for ts in self.tables_by_schema.values())

    def to_json(self) -> dict[str, Any]:
        """A plain description (for the Perl coprocess and reports)."""
        return {
            "default_schema": self.default_schema,
            "schemas": {s: [{"name": t.name, "view": t.is_view, "rows": t.rows,
                             "columns": [[c.name, c.data_type, c.key, c.meta_type, c.max_length]
                                         for c in t.columns]}
                            for t in ts] for s, ts in self.tables_by_schema.items()},
            "collations": list(self.collations), "charsets": list(self.charsets),
        }


def load_metadata(conn: pymysql.connections.Connection, default_schema: str, with_collations: bool = False,
                  version: int = 0, with_rows: bool = False) -> Metadata:
    """Read tables, views and columns of every user schema from information_schema.

    with_rows also reads TABLE_ROWS (randgen's big/small tables, for the Perl
    coprocess): the server then opens every table, which costs time.
    """
    excluded = ", ".join(f"'{s}'" for s in SYSTEM_SCHEMAS)
    with conn.cursor() as cur:
        cur.execute(f"SELECT SCHEMA_NAME FROM information_schema.SCHEMATA "
                    f"WHERE SCHEMA_NAME NOT IN ({excluded})")
        schemas = [r[0] for r in cur.fetchall()]
        rows_col = "TABLE_ROWS" if with_rows else "0"
        cur.execute(f"SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, {rows_col} "
                    f"FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN ({excluded})")
        kinds = {(s, t): (typ, int(n or 0)) for s, t, typ, n in cur.fetchall()}
        cur.execute(f"SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_KEY, "
                    f"CHARACTER_MAXIMUM_LENGTH, COLUMN_TYPE "
                    f"FROM information_schema.COLUMNS WHERE TABLE_SCHEMA NOT IN ({excluded})")
        cols: dict[tuple[str, str], list[Column]] = {}
        for s, t, c, dt, key, maxlen, ct in cur.fetchall():
            k = "primary" if key == "PRI" else "indexed" if key in ("UNI", "MUL") else ""
            full = ct.decode("utf-8", "replace") if isinstance(ct, bytes) else str(ct or "")
            cols.setdefault((s, t), []).append(
                Column(c, str(dt).lower(), k, int(maxlen) if maxlen is not None else None,
                       full.lower()))
        collations: tuple[str, ...] = ()
        charsets: tuple[str, ...] = ()
        if with_collations:
            cur.execute("SELECT COLLATION_NAME, CHARACTER_SET_NAME FROM "
                        "information_schema.COLLATIONS")
            collations, charsets = collation_names(cur.fetchall())
    by_schema: dict[str, list[Table]] = {s: [] for s in schemas}
    by_schema.setdefault(default_schema, [])
    for (s, t), (typ, n) in kinds.items():
        columns = tuple(sorted(cols.get((s, t), []), key=lambda c: c.name))
        by_schema.setdefault(s, []).append(Table(s, t, columns, typ == "VIEW", n))
    return Metadata(default_schema,
                    {s: tuple(sorted(ts, key=lambda t: t.name)) for s, ts in sorted(by_schema.items())},
                    collations, charsets, version)


def collation_names(rows: Iterable[Sequence[Any]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(collations, character sets), sorted, from COLLATION_NAME, CHARACTER_SET_NAME rows.

    NULLs are left out: MariaDB 10.10+ lists UCA-14 collations that apply to
    several character sets with a NULL ``CHARACTER_SET_NAME``.
    """
    rows = list(rows)
    collations = tuple(sorted({str(r[0]) for r in rows if r[0] is not None}))
    charsets = tuple(sorted({str(r[1]) for r in rows if len(r) > 1 and r[1] is not None}))
    return collations, charsets


class MetadataCache:
    """The current metadata snapshot, shared by the generator threads of a run.

    ``refresh(conn)`` reads a new snapshot (at most once per ``min_interval``
    seconds unless forced); readers just take ``current``.
    """

    def __init__(self, metadata: Metadata, min_interval: float = 0.5,
                 with_rows: bool = False) -> None:
        self.current = metadata
        self.with_rows = with_rows
        self.min_interval = min_interval
        self._lock = threading.Lock()
        self._last = float("-inf")
        self.refreshes = 0

    def seconds_to_next(self) -> float:
        """How long until a refresh is allowed (0 when it is)."""
        return max(0.0, self.min_interval - (time.monotonic() - self._last))

    def refresh(self, conn: pymysql.connections.Connection, force: bool = False) -> bool:
        """Re-read the metadata; False when skipped (too soon, or another refresh runs)."""
        if not force and time.monotonic() - self._last < self.min_interval:
            return False
        if not self._lock.acquire(blocking=force):
            return False
        try:
            old = self.current
            self.current = load_metadata(conn, old.default_schema, bool(old.collations),
                                         old.version + 1, self.with_rows)
            self._last = time.monotonic()
            self.refreshes += 1
            return True
        finally:
            self._lock.release()
