"""A schema of MariaDB's surface, drawn from a seed: tables over every column type family,
keys of every kind, engines, partitioning, generated columns, system versioning,
application periods, CHECK constraints, foreign keys, sequences and views -- as specs
that render their DDL and their rows.

:func:`generate_schema` draws a :class:`SchemaSpec` from a ``random.Random``.  The
specs are frozen dataclasses, so an oracle can look at them (which columns, which
types, which keys) and render variants: :meth:`TableSpec.create` with
``keys=False`` is the same table without indexes, constraints, partitioning or
versioning (Radar's "same data without the structure"), :meth:`SchemaSpec.data`
the same rows.

What the generator keeps valid, so that the server rejects (almost) none of its DDL:
a MEMORY table has no BLOB/TEXT/JSON/GEOMETRY column, no FULLTEXT or SPATIAL
key; FULLTEXT and SPATIAL keys are only on InnoDB/MyISAM/Aria tables that are not
partitioned; a SPATIAL key's column is NOT NULL; primary key columns are NOT NULL,
of small types, never generated; a partitioned table's partitioning column is in
every unique key, and it has no long unique key; prefix lengths fit the column; a
generated column is computed from earlier ordinary columns with a deterministic
expression of its type; an application period's columns are NOT NULL dates and its
rows start before they end.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Sequence

from .expr import KNOWN_BUGS
from .types import ColumnType, column_types, quote, without_empty_member

ENGINES = ("InnoDB", "MyISAM", "Aria", "MEMORY")
OPTIONAL_ENGINES = ("RocksDB",)
FULLTEXT_ENGINES = ("InnoDB", "MyISAM", "Aria")
PK_FAMILIES = ("int", "dec", "str", "bin", "date", "datetime", "time", "inet6", "uuid")
MAX_PK_BYTES = 600
MAX_TABLES, MAX_VIEWS, MAX_SEQUENCES = 9, 2, 2   # names t1..t9, v1..v2, s1..s2 at most
# every table's default (the server's may be latin1: kewpie's servers read no Debian config)
CHARSET, COLLATION = "utf8mb4", "utf8mb4_general_ci"


@dataclass(frozen=True)
class ColumnSpec:
    """A column: name, type, NULL or not, a default, or a generated expression."""

    name: str
    type: ColumnType
    nullable: bool = True
    default: str = ""                # a literal ("" = none)
    generated: str = ""              # an expression over earlier columns ("" = ordinary)
    stored: bool = False             # a generated column's kind: STORED or VIRTUAL
    invisible: bool = False

    @property
    def family(self) -> str:
        """The type family (lib.hunt.surface.types.FAMILIES)."""
        return self.type.family

    def ddl(self) -> str:
        """The column's definition in CREATE TABLE."""
        text = f"{self.name} {self.type.sql}"
        if self.generated:
            text += f" AS ({self.generated}) {'STORED' if self.stored else 'VIRTUAL'}"
        else:
            text += " NULL" if self.nullable else " NOT NULL"
            if self.default:
                text += f" DEFAULT {self.default}"
        if self.invisible:
            text += " INVISIBLE"
        return text


@dataclass(frozen=True)
class KeyPart:
    """A column of a key, with a prefix length and a direction."""

    column: str
    prefix: int = 0
    desc: bool = False

    def ddl(self) -> str:
        """The part as written in a key."""
        return self.column + (f"({self.prefix})" if self.prefix else "") + \
            (" DESC" if self.desc else "")


@dataclass(frozen=True)
class KeySpec:
    """A key: PRIMARY, UNIQUE, INDEX, FULLTEXT or SPATIAL, over its parts."""

    kind: str
    name: str
    parts: tuple[KeyPart, ...]
    period: str = ""                 # UNIQUE (..., p WITHOUT OVERLAPS)

    def ddl(self) -> str:
        """The key as written in CREATE TABLE."""
        parts = ", ".join(p.ddl() for p in self.parts)
        if self.period:
            parts += f", {self.period} WITHOUT OVERLAPS"
        if self.kind == "PRIMARY":
            return f"PRIMARY KEY ({parts})"
        lead = {"UNIQUE": "UNIQUE KEY", "INDEX": "KEY", "FULLTEXT": "FULLTEXT KEY",
                "SPATIAL": "SPATIAL KEY"}[self.kind]
        return f"{lead} {self.name} ({parts})"

    @property
    def unique(self) -> bool:
        """PRIMARY or UNIQUE."""
        return self.kind in ("PRIMARY", "UNIQUE")


@dataclass(frozen=True)
class ForeignKey:
    """A foreign key to another table's primary key."""

    column: str
    parent: str
    parent_column: str
    action: str                      # ON DELETE ... ON UPDATE ...

    def ddl(self) -> str:
        """As written in CREATE TABLE."""
        return (f"FOREIGN KEY ({self.column}) REFERENCES {self.parent} ({self.parent_column}) "
                f"{self.action}")


@dataclass(frozen=True)
class TableSpec:
    """A table: its columns, keys, engine and the rest of its structure."""

    name: str
    engine: str
    columns: tuple[ColumnSpec, ...]
    keys: tuple[KeySpec, ...] = ()
    checks: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    partition: str = ""              # "PARTITION BY ..." or ""
    versioned: bool = False          # WITH SYSTEM VERSIONING
    period: tuple[str, ...] = ()     # an application period: (name, start, end)
    rows: int = 10

    def column(self, name: str) -> ColumnSpec:
        """The column of that name."""
        return next(c for c in self.columns if c.name == name)

    @property
    def ordinary(self) -> tuple[ColumnSpec, ...]:
        """The columns an INSERT gives values for (not generated)."""
        return tuple(c for c in self.columns if not c.generated)

    @property
    def primary(self) -> KeySpec | None:
        """The primary key, if any."""
        return next((k for k in self.keys if k.kind == "PRIMARY"), None)

    def indexed(self, column: str) -> str:
        """How a column is keyed: 'pk' (first part of the primary key), 'key' (first part of
        another key) or ''."""
        for key in self.keys:
            if key.parts and key.parts[0].column == column and key.kind not in ("FULLTEXT",):
                return "pk" if key.kind == "PRIMARY" else "key"
        return ""

    def create(self, keys: bool = True, name: str = "") -> str:
        """CREATE TABLE; keys=False leaves out keys, CHECK and foreign keys, partitioning
        and versioning (the same columns, plain); name renames it."""
        parts = [c.ddl() for c in self.columns]
        if self.period:
            parts.append(f"PERIOD FOR {self.period[0]} ({self.period[1]}, {self.period[2]})")
        if keys:
            parts += [k.ddl() for k in self.keys]
            parts += [f"CONSTRAINT {self.name}_chk{i} CHECK ({c})"
                      for i, c in enumerate(self.checks, start=1)]
            parts += [f.ddl() for f in self.foreign_keys]
        text = f"CREATE TABLE {name or self.name} (\n  " + ",\n  ".join(parts) + \
            f"\n) ENGINE={self.engine} DEFAULT CHARSET={CHARSET} COLLATE={COLLATION}"
        if keys and self.versioned:
            text += " WITH SYSTEM VERSIONING"
        if keys and self.partition:
            text += f" {self.partition}"
        return text


@dataclass(frozen=True)
class ViewSpec:
    """A view over one table's columns."""

    name: str
    table: str
    columns: tuple[str, ...]
    sql: str                                  # CREATE VIEW ...


@dataclass(frozen=True)
class SchemaSpec:
    """Tables, sequences and views, in creation order."""

    tables: tuple[TableSpec, ...]
    sequences: tuple[str, ...] = ()          # CREATE SEQUENCE statements
    views: tuple[ViewSpec, ...] = ()
    seed: int = 0

    @property
    def sequence_names(self) -> tuple[str, ...]:
        """The sequences' names."""
        return tuple(s.split()[2] for s in self.sequences)

    def table(self, name: str) -> TableSpec:
        """The table of that name."""
        return next(t for t in self.tables if t.name == name)

    def ddl(self, keys: bool = True) -> list[str]:
        """Every CREATE statement (keys=False: the tables plain, no views)."""
        out = [t.create(keys) for t in self.tables]
        if keys:
            out += list(self.sequences) + [v.sql for v in self.views]
        return out

    def drop(self) -> list[str]:
        """DROP statements for everything ddl() of any seed creates (views first; every
        name a schema may use, so that another seed's tables -- their foreign keys -- do
        not stay in the way)."""
        views = ", ".join(f"v{i}" for i in range(1, MAX_VIEWS + 1))
        sequences = ", ".join(f"s{i}" for i in range(1, MAX_SEQUENCES + 1))
        tables = ", ".join(f"t{i}" for i in range(MAX_TABLES, 0, -1))
        return [f"DROP VIEW IF EXISTS {views}", f"DROP SEQUENCE IF EXISTS {sequences}",
                "SET SESSION foreign_key_checks = 0", f"DROP TABLE IF EXISTS {tables}",
                "SET SESSION foreign_key_checks = 1"]

    def data(self, seed: int | None = None) -> list[str]:
        """INSERT statements filling every table (the same rows for the same seed).
        Foreign keys are not checked while they run."""
        rng = random.Random(f"surface-data:{self.seed if seed is None else seed}")
        out = ["SET SESSION foreign_key_checks = 0"]
        for table in self.tables:
            out += table_rows(table, rng)
        out.append("SET SESSION foreign_key_checks = 1")
        return out

    def setup(self, keys: bool = True) -> list[str]:
        """Everything, in order: drops, DDL, data."""
        return self.drop() + self.ddl(keys) + self.data()


def _pk_value(column: ColumnSpec, n: int) -> str:
    """The n-th distinct value of a primary key column (the rows' own order)."""
    t = column.type
    fam = t.family
    if fam == "int":
        if t.kind == "YEAR":
            return str(1901 + n)
        if t.kind == "BIT":
            return f"b'{n:b}'"
        low = 0 if t.unsigned or t.kind == "TINYINT" else -3
        return str(low + n)
    if fam == "dec":
        return str(n) if t.scale == 0 else f"{n // 10}.{n % 10}"
    if fam in ("str", "bin"):
        return quote(f"k{n:03d}"[: max(t.length, 4)] if t.length else f"k{n:03d}")
    if fam == "date":
        return f"'2000-01-01' + INTERVAL {n} DAY"
    if fam == "datetime":
        return f"'2000-01-01 00:00:00' + INTERVAL {n * 3601} SECOND"
    if fam == "time":
        return quote(f"{n // 60:02d}:{n % 60:02d}:00")
    if fam == "inet6":
        return quote(f"::{n + 1:x}")
    if fam == "uuid":
        return quote(f"00000000-0000-0000-0000-{n:012x}")
    return str(n)


def table_rows(table: TableSpec, rng: random.Random) -> list[str]:
    """INSERT IGNORE statements for a table's rows: the primary key distinct, the other
    values edges of their types (NULL now and then where allowed); a period's start
    before its end."""
    columns = table.ordinary
    pk = table.primary
    pk_cols = {p.column for p in pk.parts} if pk else set()
    period_cols = set(table.period[1:]) if table.period else set()
    statements: list[str] = []
    rows: list[str] = []
    order = list(range(table.rows))
    rng.shuffle(order)                     # rows not in key order
    for n in order:
        values = []
        for c in columns:
            if c.name in pk_cols and c.name not in period_cols:
                values.append(_pk_value(c, n))
            elif c.name == "fk":                  # a parent's key (its rows are 0..30)
                values.append("NULL" if rng.random() < 0.1 else _pk_value(c, rng.randint(0, 30)))
            elif c.name in period_cols:
                start = rng.randint(0, 20)
                if c.name == table.period[1]:
                    values.append(f"'2001-01-01' + INTERVAL {start} DAY")
                else:
                    values.append(f"'2001-02-01' + INTERVAL {start} DAY")
            elif c.nullable and rng.random() < 0.12:
                values.append("NULL")
            else:
                values.append(c.type.literal(rng))
        rows.append("(" + ", ".join(values) + ")")
    names = ", ".join(c.name for c in columns)
    for i in range(0, len(rows), 10):
        statements.append(f"INSERT IGNORE INTO {table.name} ({names}) VALUES "
                          + ", ".join(rows[i:i + 10]))
    return statements


def _default(ctype: ColumnType, rng: random.Random) -> str:
    """A DEFAULT the type surely takes ('' for none)."""
    if ctype.family == "int" and ctype.kind != "BIT":
        return ctype.literal(rng)
    if ctype.kind in ("CHAR", "VARCHAR", "SET"):
        return "''"
    if ctype.kind == "ENUM":
        return quote(rng.choice(ctype.members))
    if ctype.family == "dec":
        return "0"
    if ctype.family in ("date", "datetime"):
        return "'2001-01-01'"
    return ""


def _key_bytes(column: ColumnSpec) -> int:
    t = column.type
    if t.family in ("str",) and t.kind in ("CHAR", "VARCHAR"):
        return t.length * 4
    if t.family == "bin":
        return t.length or 255
    return 16


def unkeyable(ctype: ColumnType, engine: str, avoid: frozenset[str]) -> bool:
    """True when a column of ctype in a table of engine may not be a key part, as the known
    bugs avoided (expr.KNOWN_BUGS) have it:

    - aria-bit-keyread: a BIT of a width that is no multiple of 8 (its uneven bits live in
      the row's null bytes) of an Aria table reads 0 from its index alone when its bit falls
      at bit 7 of a null byte, which depends on the nullable columns before it (and ALTER
      TABLE ... ADD COLUMN moves it);
    - set-key-spaces: a SET's index lookup of a string of spaces stores it into the SET (no
      member: no row) where the string comparison finds the empty sets (PAD SPACE:
      '' = ' '), in any engine."""
    return ((engine == "Aria" and ctype.kind == "BIT" and ctype.length % 8 != 0
             and "aria-bit-keyread" in avoid)
            or (ctype.kind == "SET" and "set-key-spaces" in avoid))


class SchemaGenerator:
    """Draws a schema (see the module docstring); engines are those the server has."""

    def __init__(self, rng: random.Random, engines: Sequence[str] = ENGINES,
                 tables: tuple[int, int] = (2, 5), columns: tuple[int, int] = (3, 9),
                 rows: tuple[int, int] = (0, 30),
                 avoid: frozenset[str] = frozenset(KNOWN_BUGS)) -> None:
        self.rng = rng
        self.avoid = avoid           # expr.KNOWN_BUGS steered clear of (vcol-div-precision,
                                     # vers-desc-key, enum-error-value-key, aria-bit-keyread,
                                     # set-key-spaces)
        self.engines = tuple(engines)
        self.table_range = (tables[0], min(tables[1], MAX_TABLES))
        self.column_range = columns
        self.row_range = rows
        self.types = column_types()
        if "enum-error-value-key" in avoid:    # KNOWN_BUGS: no ENUM with a '' member (the
            self.types = {f: [without_empty_member(t) for t in ts]   # same draws either way)
                          for f, ts in self.types.items()}

    def _type(self, family: str, engine: str) -> ColumnType:
        pool = [t for t in self.types[family]
                if not (engine in ("MEMORY",) and t.blob)
                and not (engine == "RocksDB" and t.family == "geom")]
        return self.rng.choice(pool)

    def _family(self, engine: str) -> str:
        weights = {"int": 6, "dec": 3, "real": 2, "str": 6, "bin": 1, "date": 2, "datetime": 2,
                   "time": 1, "json": 1, "geom": 1, "inet6": 1, "uuid": 1}
        if engine in ("MEMORY",):
            weights["json"] = weights["geom"] = 0
        if engine == "RocksDB":
            weights["geom"] = 0
        families = list(weights)
        return self.rng.choices(families, [weights[f] for f in families])[0]

    def table(self, name: str, engine: str, earlier: Sequence[TableSpec]) -> TableSpec:
        """One table."""
        rng = self.rng
        n_cols = rng.randint(*self.column_range)
        columns: list[ColumnSpec] = []
        # c0: the usual primary key (an integer most of the time), shared by every table
        pk_family = rng.choice(("int", "int", "int", "int", "str", "dec", "date", "datetime",
                                "bin", "time", "uuid", "inet6"))
        pk_type = rng.choice([t for t in self.types[pk_family]
                              if t.indexable and not (t.kind == "BIT" and t.length < 8)
                              and t.kind not in ("ENUM", "SET", "YEAR", "CHAR")
                              and not (t.kind == "VARCHAR" and t.length * 4 > 900)
                              and not (t.kind == "DECIMAL" and t.length - t.scale < 2)])
        with_pk = rng.random() < 0.85
        columns.append(ColumnSpec("c0", pk_type, nullable=not with_pk))
        for i in range(1, n_cols):
            family = self._family(engine)
            ctype = self._type(family, engine)
            nullable = rng.random() < 0.75
            default = ""
            if ctype.kind == "TIMESTAMP" and not nullable:
                default = "'2000-01-01 00:00:00'"   # no automatic CURRENT_TIMESTAMP
            elif rng.random() < 0.15:
                default = _default(ctype, rng)
            columns.append(ColumnSpec(f"c{i}", ctype, nullable=nullable, default=default,
                                      invisible=rng.random() < 0.05 and (nullable or
                                                                          bool(default))))
        period: tuple[str, ...] = ()
        if rng.random() < 0.12:
            date = next(t for t in self.types["date"] if t.kind == "DATE")
            columns += [ColumnSpec("ps", date, nullable=False), ColumnSpec("pe", date, nullable=False)]
            period = ("app", "ps", "pe")
        if engine not in ("MEMORY", "RocksDB") and rng.random() < 0.35:
            columns += self._generated(columns, rng.randint(1, 2))
        keys = self._keys(columns, engine, with_pk, period)
        partition = ""
        if rng.random() < 0.2 and not any(k.kind in ("FULLTEXT", "SPATIAL") for k in keys) \
                and not any(c.family == "geom" for c in columns):
            partition, keys = self._partition(columns, keys)
        versioned = engine in ("InnoDB", "MyISAM", "Aria") and rng.random() < 0.12 and \
            not partition
        if versioned and engine == "MyISAM" and "vers-desc-key" in self.avoid:
            keys = tuple(replace(k, parts=tuple(replace(p, desc=False) for p in k.parts))
                         for k in keys)    # KNOWN_BUGS vers-desc-key: no DESC key part
        checks = self._checks(columns) if rng.random() < 0.2 else ()
        fks: tuple[ForeignKey, ...] = ()
        if engine == "InnoDB" and not partition and rng.random() < 0.35:
            fks = self._foreign_key(columns, earlier)
            keys = keys + tuple(KeySpec("INDEX", f"fk_{f.column}", (KeyPart(f.column),))
                                for f in fks)
        rows = rng.randint(*self.row_range)
        return TableSpec(name, engine, tuple(columns), keys, checks, fks, partition, versioned,
                         period, rows)

    def bit_keyread(self, column: ColumnSpec, engine: str) -> bool:
        """True when column may not be a key part (:func:`unkeyable`)."""
        return unkeyable(column.type, engine, self.avoid)

    def _keyable(self, parts: Sequence[KeyPart], columns: Sequence[ColumnSpec],
                 engine: str) -> tuple[KeyPart, ...]:
        """The parts of a key drawn that may be key parts (:meth:`bit_keyread`'s left out
        after the draws, which stay the same either way)."""
        return tuple(p for p in parts if not self.bit_keyread(columns_by(columns, p.column), engine))

    def _generated(self, columns: list[ColumnSpec], count: int) -> list[ColumnSpec]:
        rng = self.rng
        out: list[ColumnSpec] = []
        # (not over CHAR: its value depends on PAD_CHAR_TO_FULL_LENGTH, which the server
        # refuses in a generated column)
        bases = [c for c in columns if not c.generated and c.family in
                 ("int", "dec", "real", "str", "date", "datetime")
                 and c.type.kind not in ("BIT", "CHAR")]
        types = {"int": ColumnType("BIGINT", "int", "BIGINT"),
                 "real": ColumnType("DOUBLE", "real", "DOUBLE"),
                 "dec": ColumnType("DECIMAL(65,30)", "dec", "DECIMAL", length=65, scale=30),
                 "str": ColumnType("VARCHAR(700)", "str", "VARCHAR", length=700),
                 "date": ColumnType("DATE", "date", "DATE")}
        for i in range(count):
            if not bases:
                break
            base = rng.choice(bases)
            b = base.name
            fam = base.family
            options: list[tuple[str, str]]
            # (nothing that overflows at the type's edges: that is an error even in
            # INSERT IGNORE)
            # (a DECIMAL division depends on div_precision_increment: KNOWN_BUGS
            # vcol-div-precision; the same draws either way)
            div = "vcol-div-precision" not in self.avoid
            if fam == "int":
                options = [(f"{b} MOD 7", "int"), (f"{b} DIV 3", "int"), (f"{b} IS NULL", "int"),
                           (f"{b} >> 1", "int"), (f"CONCAT({b}, 'x')", "str"),
                           (f"{b} / 4" if div else f"{b} * 0.25", "dec")]
            elif fam in ("dec", "real"):
                options = [(f"{b} / 2" if div or fam == "real" else f"{b} * 0.5",
                            "real" if fam == "real" else "dec"),
                           (f"ROUND({b}, 1)", "real" if fam == "real" else "dec"),
                           (f"{b} IS NOT NULL", "int"), (f"SIGN({b})", "int")]
            elif fam == "str":
                options = [(f"CONCAT({b}, '-')", "str"), (f"LEFT({b}, 2)", "str"),
                           (f"UPPER({b})", "str"), (f"LENGTH({b})", "int"),
                           (f"REVERSE({b})", "str"), (f"TRIM({b})", "str")]
            else:
                options = [(f"DATE({b})", "date"), (f"YEAR({b})", "int"),
                           (f"DAYOFYEAR({b})", "int"), (f"{b} + INTERVAL 1 DAY", "date")]
            expr, rfam = rng.choice(options)
            out.append(ColumnSpec(f"g{i}", types[rfam], generated=expr,
                                  stored=rng.random() < 0.4))
        return out

    def _keys(self, columns: list[ColumnSpec], engine: str, with_pk: bool,
              period: tuple[str, ...]) -> tuple[KeySpec, ...]:
        rng = self.rng
        keys: list[KeySpec] = []
        plain = [c for c in columns if not c.generated]
        if with_pk:
            parts = [KeyPart("c0", desc=engine != "MEMORY" and rng.random() < 0.1)]
            if rng.random() < 0.2:
                extra = [c for c in plain[1:] if c.type.indexable and not c.nullable
                         and c.family in PK_FAMILIES and _key_bytes(c) + _key_bytes(columns[0])
                         <= MAX_PK_BYTES and c.name not in ("ps", "pe")]
                if extra:
                    parts.append(KeyPart(rng.choice(extra).name))
            # (a period table's primary key WITHOUT OVERLAPS half the time: FOR PORTION OF
            # then splits rows without duplicating the key)
            keys.append(KeySpec("PRIMARY", "PRIMARY", self._keyable(parts, columns, engine),
                                period=period[0] if period and rng.random() < 0.5 else ""))
        if period and rng.random() < 0.5:
            keys.append(KeySpec("UNIQUE", "uq_period", (KeyPart("c0"),), period=period[0]))
        for i in range(rng.randint(0, 3)):
            candidates = [c for c in columns if c.family != "geom"
                          and (c.type.indexable or c.type.blob)
                          and not (c.generated and not c.stored and engine != "InnoDB")]
            if not candidates:
                break
            c = rng.choice(candidates)
            kind = "UNIQUE" if rng.random() < 0.3 else "INDEX"
            part = KeyPart(c.name, desc=engine != "MEMORY" and rng.random() < 0.2)
            if c.type.blob:
                if kind == "UNIQUE" and engine in ("InnoDB", "MyISAM") and not c.generated:
                    part = KeyPart(c.name)               # a long unique (hash) key
                else:
                    part = KeyPart(c.name, prefix=rng.choice((1, 3, 10)))
            elif c.family in ("str", "bin") and c.type.kind in ("CHAR", "VARCHAR", "BINARY",
                                                                 "VARBINARY") \
                    and c.type.length > 3 and rng.random() < 0.3:
                part = KeyPart(c.name, prefix=rng.randint(1, min(c.type.length - 1, 8)))
            if not part.prefix and _key_bytes(c) > 900:   # (Aria and MyISAM: 1000 bytes)
                part = KeyPart(c.name, prefix=10, desc=part.desc)
            parts = [part]
            if rng.random() < 0.3:
                other = [o for o in columns if o.name != c.name and o.type.indexable
                         and o.family != "geom" and not o.generated and _key_bytes(o) <= 900]
                if other:
                    parts.append(KeyPart(rng.choice(other).name, desc=rng.random() < 0.3
                                         and engine != "MEMORY"))
            if kept := self._keyable(parts, columns, engine):
                keys.append(KeySpec(kind, f"k{i}", kept))
        texts = [c for c in columns if c.family == "str" and not c.generated
                 and c.type.kind in ("CHAR", "VARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT")
                 and (c.type.indexable or c.type.blob)]
        if engine in FULLTEXT_ENGINES and texts and rng.random() < 0.25:
            keys.append(KeySpec("FULLTEXT", "ft", (KeyPart(rng.choice(texts).name),)))
        geoms = [c for c in columns if c.family == "geom" and not c.nullable]
        if engine in FULLTEXT_ENGINES and geoms and rng.random() < 0.6:
            keys.append(KeySpec("SPATIAL", "sp", (KeyPart(geoms[0].name),)))
        return tuple(keys)

    def _partition(self, columns: list[ColumnSpec], keys: tuple[KeySpec, ...]
                   ) -> tuple[str, tuple[KeySpec, ...]]:
        """A partitioning clause over c0, and the keys it allows (every unique key gets c0,
        long unique keys go)."""
        rng = self.rng
        c0 = columns[0]
        kept: list[KeySpec] = []
        for key in keys:
            if key.unique and any(columns_by(columns, p.column).type.blob and not p.prefix
                                  for p in key.parts):
                continue                                   # no long unique when partitioned
            if key.unique and key.period:
                continue
            if key.unique and not any(p.column == "c0" and not p.prefix for p in key.parts):
                parts = tuple(p for p in key.parts if p.column != "c0")
                key = replace(key, parts=parts + (KeyPart("c0"),))
            kept.append(key)
        if c0.family == "int" and c0.type.kind not in ("BIT", "YEAR"):
            clause = rng.choice((
                f"PARTITION BY HASH (c0) PARTITIONS {rng.randint(2, 5)}",
                f"PARTITION BY KEY (c0) PARTITIONS {rng.randint(2, 4)}",
                "PARTITION BY RANGE (c0) (PARTITION p0 VALUES LESS THAN (0), PARTITION p1 "
                "VALUES LESS THAN (10), PARTITION p2 VALUES LESS THAN MAXVALUE)",
                "PARTITION BY LIST (c0) (PARTITION p0 VALUES IN (0, 2, 4, 6, 8), PARTITION p1 "
                "VALUES IN (1, 3, 5, NULL), PARTITION pd DEFAULT)",
                f"PARTITION BY HASH (c0) SUBPARTITION BY KEY (c0) SUBPARTITIONS 2 "
                f"PARTITIONS 2"))
            if "SUBPARTITION" in clause:
                clause = ("PARTITION BY RANGE (c0) SUBPARTITION BY HASH (c0) SUBPARTITIONS 2 "
                          "(PARTITION p0 VALUES LESS THAN (5), PARTITION p1 VALUES LESS THAN "
                          "MAXVALUE)")
        elif c0.type.blob:
            return "", keys
        else:
            clause = f"PARTITION BY KEY (c0) PARTITIONS {rng.randint(2, 4)}"
        return clause, tuple(kept)

    def _checks(self, columns: list[ColumnSpec]) -> tuple[str, ...]:
        numbers = [c for c in columns if c.family in ("int", "dec") and not c.generated
                   and c.type.kind not in ("BIT",)]
        strings = [c for c in columns if c.family == "str" and c.type.kind in ("CHAR", "VARCHAR")]
        out = []
        if numbers:  # true of every value the data has (INSERT IGNORE still fails on CHECK)
            c = self.rng.choice(numbers)
            out.append(f"{c.name} IS NULL OR {c.name} > -1e70")
        if strings and self.rng.random() < 0.5:
            c = self.rng.choice(strings)
            out.append(f"{c.name} <> 'forbidden'")
        return tuple(out)

    def _foreign_key(self, columns: list[ColumnSpec],
                     earlier: Sequence[TableSpec]) -> tuple[ForeignKey, ...]:
        parents = [t for t in earlier if t.engine == "InnoDB" and t.primary is not None
                   and len(t.primary.parts) == 1 and not t.partition
                   and t.column(t.primary.parts[0].column).family == "int"
                   and not t.primary.parts[0].desc and not t.primary.period]
        if not parents:
            return ()
        parent = self.rng.choice(parents)
        pcol = parent.column(parent.primary.parts[0].column) if parent.primary else None
        if pcol is None:
            return ()
        columns.append(ColumnSpec("fk", pcol.type, nullable=True))   # its values: the parent's
        action = self.rng.choice(("ON DELETE CASCADE ON UPDATE CASCADE",
                                  "ON DELETE SET NULL ON UPDATE RESTRICT",
                                  "ON DELETE RESTRICT ON UPDATE SET NULL", ""))
        return (ForeignKey("fk", parent.name, pcol.name, action.strip()),)

    def schema(self, seed: int = 0) -> SchemaSpec:
        """A whole schema: tables t1..tN, a sequence or two, views over them."""
        rng = self.rng
        tables: list[TableSpec] = []
        for i in range(1, rng.randint(*self.table_range) + 1):
            engine = rng.choice(self.engines)
            tables.append(self.table(f"t{i}", engine, tables))
        sequences = []
        for i in range(rng.randint(0, 2)):
            sequences.append(f"CREATE SEQUENCE s{i + 1} START WITH {rng.randint(-5, 5)} "
                             f"INCREMENT BY {rng.choice((1, 2, -1, 7))} MINVALUE -100 "
                             f"MAXVALUE 1000000 {rng.choice(('CYCLE', 'NOCYCLE'))} "
                             f"{rng.choice(('CACHE 1', 'CACHE 10', 'NOCACHE'))}")
        views = []
        for i in range(rng.randint(0, 2)):
            t = rng.choice(tables)
            cols = [c for c in t.columns if not c.invisible] or list(t.columns)
            picked = rng.sample(cols, min(len(cols), rng.randint(1, 4)))
            algorithm = rng.choice(("", "ALGORITHM=MERGE ", "ALGORITHM=TEMPTABLE "))
            where = f" WHERE {picked[0].name} IS NOT NULL" if rng.random() < 0.4 else ""
            check = " WITH CHECK OPTION" if where and "TEMPTABLE" not in algorithm and \
                rng.random() < 0.5 else ""
            name = f"v{i + 1}"
            views.append(ViewSpec(name, t.name, tuple(c.name for c in picked),
                                  f"CREATE {algorithm}VIEW {name} AS SELECT "
                                  f"{', '.join(c.name for c in picked)} FROM {t.name}{where}"
                                  f"{check}"))
        return SchemaSpec(tuple(tables), tuple(sequences), tuple(views), seed)


def columns_by(columns: Sequence[ColumnSpec], name: str) -> ColumnSpec:
    """The column of that name in a list."""
    return next(c for c in columns if c.name == name)


def generate_schema(seed: int, engines: Sequence[str] = ENGINES,
                    avoid: frozenset[str] = frozenset(KNOWN_BUGS), **bounds: tuple[int, int]
                    ) -> SchemaSpec:
    """The schema of a seed (the same on every machine; avoid: expr.KNOWN_BUGS not
    written)."""
    return SchemaGenerator(random.Random(f"surface-schema:{seed}"), engines,
                           avoid=avoid, **bounds).schema(seed)
