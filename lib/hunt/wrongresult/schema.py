"""The tables the wrong-result oracles query: columns with their type class.

The oracles take the tables as randgen's :class:`~lib.randgen.metadata.MetadataCache`
(or a :class:`~lib.randgen.metadata.Metadata` snapshot) or as a plain list of
``(schema, table, [(column, type), ...])`` (a column may also be
``(column, type, key)`` with key ``'primary'``, ``'indexed'`` or ``''``).
:func:`tables_from` turns either into :class:`TableInfo` tuples, sorted by
name so that the same seed picks the same tables, keeping only the columns
whose type the generator knows (:data:`TYPE_CLASSES`).

A type class says which values and operators fit a column: ``int``, ``dec``,
``float``, ``str`` (character, binary, text and blob types, ENUM and SET),
``date``, ``datetime`` (DATETIME and TIMESTAMP), ``time`` and ``year``.
A view's columns count as indexed (a merged view's column may be an indexed
column of its table: the generator's care for keys applies to it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from ...randgen.metadata import Metadata, MetadataCache

TYPE_CLASSES: Mapping[str, str] = MappingProxyType({
    **{t: "int" for t in ("tinyint", "smallint", "mediumint", "int", "integer", "bigint",
                          "bit", "bool", "boolean", "serial")},
    **{t: "dec" for t in ("decimal", "numeric", "fixed", "dec")},
    **{t: "float" for t in ("float", "double", "real")},
    **{t: "str" for t in ("char", "varchar", "binary", "varbinary", "tinytext", "text",
                          "mediumtext", "longtext", "tinyblob", "blob", "mediumblob",
                          "longblob", "enum", "set")},
    "date": "date", "datetime": "datetime", "timestamp": "datetime", "time": "time",
    "year": "year",
})
NUMERIC_CLASSES = ("int", "dec", "float")
TEMPORAL_CLASSES = ("date", "datetime", "time", "year")
_BASE_TYPE_RE = re.compile(r"\s*([a-z]+)")
PlainTable = tuple[str, str, Sequence[Sequence[str]]]
Tables = MetadataCache | Metadata | Iterable[PlainTable]


@dataclass(frozen=True)
class ColumnInfo:
    """A column the generator may use: name, data type, type class and key kind."""

    name: str
    data_type: str
    type_class: str
    key: str = ""  # 'primary', 'indexed' or ''
    full_type: str = ""  # the whole column type, lower case: 'int(10) unsigned zerofill'

    @property
    def unsigned(self) -> bool:
        """True for an UNSIGNED numeric column."""
        return " unsigned" in self.full_type

    @property
    def precision(self) -> int:
        """A DECIMAL column's precision (its digits), 0 for other columns."""
        m = re.match(r"(?:decimal|numeric|fixed|dec)\((\d+)", self.full_type)
        return int(m.group(1)) if m else 0

    @property
    def bit_width(self) -> int:
        """A BIT column's width in bits (BIT is BIT(1)); 0 for other columns or an unknown type."""
        m = re.match(r"bit\((\d+)\)", self.full_type)
        return int(m.group(1)) if m else (1 if self.full_type.startswith("bit") else 0)

    @property
    def zerofill(self) -> bool:
        """True for a ZEROFILL column (its text has leading zeros)."""
        return " zerofill" in self.full_type

    @property
    def role(self) -> str:
        """The column as a query shape shows it: ``<int>``, ``<varchar:key>``, ``<int:pk>``."""
        suffix = {"primary": ":pk", "indexed": ":key"}.get(self.key, "")
        return f"<{self.data_type}{suffix}>"


@dataclass(frozen=True)
class TableInfo:
    """A table or view: schema, name and its usable columns (in name order)."""

    schema: str
    name: str
    columns: tuple[ColumnInfo, ...]
    is_view: bool = False
    # False when a primary-key column is of a type the generator does not use (UUID, INET6,
    # GEOMETRY...): the key columns it has are then no row's identity (hunt or19-sf5: a
    # window's ORDER BY over PRIMARY KEY (uuid, tinyint) without the UUID had ties)
    key_complete: bool = True
    # every column's name, the unused types' too: an output alias must be none of them
    # (GROUP BY and HAVING resolve a name to a FROM column before a select alias)
    all_names: tuple[str, ...] = ()

    @property
    def primary_key(self) -> list[ColumnInfo]:
        """The primary key's columns, or [] when the table has none or not all are usable."""
        pk = [c for c in self.columns if c.key == "primary"]
        return pk if self.key_complete else []

    @property
    def sql_name(self) -> str:
        """The schema-qualified, quoted name."""
        return f"{quote_name(self.schema)}.{quote_name(self.name)}"

    def columns_of(self, *classes: str) -> list[ColumnInfo]:
        """The columns of these type classes (all columns when none is given)."""
        return [c for c in self.columns if not classes or c.type_class in classes]


def free_aliases(prefix: str, n: int, taken: Iterable[str]) -> list[str]:
    """n aliases ``<prefix>1``, ``<prefix>2``... skipping any name in taken (compared
    without case, as MariaDB compares column names): GROUP BY and HAVING resolve a name to
    a FROM column before a select alias, so ``SELECT e AS g1 ... GROUP BY g1`` over a table
    with a column g1 groups by that column (hunt or19-sf8: DQP, Radar and TLP-HAVING false
    positives over the surface schema's generated column g1)."""
    used = {t.lower() for t in taken}
    out: list[str] = []
    i = 1
    while len(out) < n:
        name = f"{prefix}{i}"
        if name.lower() not in used:
            out.append(name)
        i += 1
    return out


def quote_name(name: str) -> str:
    """An identifier in backquotes (a backquote inside doubled)."""
    return "`" + name.replace("`", "``") + "`"


def base_type(type_text: str) -> str:
    """The base data type of a column type: ``'int(11) unsigned'`` -> ``'int'``."""
    m = _BASE_TYPE_RE.match(type_text.lower())
    return m.group(1) if m else ""


def type_class(type_text: str) -> str | None:
    """The type class of a column type (``None``: a type the generator does not use)."""
    return TYPE_CLASSES.get(base_type(type_text))


def _column(name: str, type_text: str, key: str = "", full_type: str = "") -> ColumnInfo | None:
    cls = type_class(type_text)
    if cls is None:
        return None
    return ColumnInfo(name, base_type(type_text), cls, key, (full_type or type_text).lower())


def _from_metadata(md: Metadata) -> list[TableInfo]:
    tables = []
    for schema, ts in md.tables_by_schema.items():
        for t in ts:
            # a view's column may be a table's indexed one (a merged view passes the index
            # to the optimizer, and its metadata does not say): each counts as indexed
            cols = [_column(c.name, c.data_type, c.key or ("indexed" if t.is_view else ""),
                            c.column_type) for c in t.columns]
            complete = not any(made is None and c.key == "primary"
                               for made, c in zip(cols, t.columns))
            tables.append(TableInfo(schema, t.name, tuple(c for c in cols if c), t.is_view,
                                    complete, tuple(c.name for c in t.columns)))
    return tables


def _from_plain(items: Iterable[Any]) -> list[TableInfo]:
    tables = []
    for item in items:
        schema, name, columns = item
        cols = []
        names = []
        complete = True
        for col in columns:
            col = tuple(col)
            key = str(col[2]) if len(col) > 2 else ""
            made = _column(str(col[0]), str(col[1]), key)
            complete = complete and not (made is None and key == "primary")
            cols.append(made)
            names.append(str(col[0]))
        tables.append(TableInfo(str(schema), str(name), tuple(sorted(
            (c for c in cols if c), key=lambda c: c.name)), key_complete=complete,
            all_names=tuple(names)))
    return tables


def tables_from(metadata: Tables) -> list[TableInfo]:
    """The tables with at least one usable column, sorted by (schema, name)."""
    if isinstance(metadata, MetadataCache):
        tables = _from_metadata(metadata.current)
    elif isinstance(metadata, Metadata):
        tables = _from_metadata(metadata)
    else:
        tables = _from_plain(metadata)
    return sorted((t for t in tables if t.columns), key=lambda t: (t.schema, t.name))


def shape_names(tables: Sequence[TableInfo]) -> dict[str, str]:
    """The name map of :func:`~lib.hunt.wrongresult.shape.query_shape` for these tables.

    Schemas become ``<schema>``, tables ``<table>`` (views ``<view>``), columns
    their role (``<int:key>``).  A column name with different types in two
    tables keeps the role of the first table (by name order).
    """
    names: dict[str, str] = {}
    for t in tables:
        names.setdefault(t.schema.lower(), "<schema>")
        names.setdefault(t.name.lower(), "<view>" if t.is_view else "<table>")
    for t in tables:
        for c in t.columns:
            names.setdefault(c.name.lower(), c.role)
    return names
