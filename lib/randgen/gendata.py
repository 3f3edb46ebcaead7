"""Gendata: ``.zz`` specifications, and the tables and rows randgen builds from them.

A ``.zz`` file is a Perl script assigning hash and array literals to
``$tables``, ``$fields``, ``$data`` and ``$schemas``.  :func:`read_spec`
reads it with a small parser of Perl data literals (strings, numbers,
``undef``, ``[...]``, ``{ key => ... }``, ``1..50`` ranges, comments); a file
it cannot read is handed to ``perl`` (``do`` + JSON::PP, by absolute path).

:class:`GendataPlan` turns a specification into randgen's tables: the
cartesian product of the table options (rows, engines, charsets,
collations, partitions, pk, row formats, options) and of the field options
(types, null, default, sign, indexes, charsets, collations), with randgen's
names (``table100_innodb_int_autoinc``, ``col_int_key``,
``col_char_10_not_null_key``...), a ``pk`` column, a field order shuffled
per table, and rows drawn from the ``$data`` value kinds (``digit``,
``letter``, ``english``, ``null``, ``char(12)``, a literal...).  The same
seed gives the same statements.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from .builtins import Prng, field_type_kind, field_type_value
from .errors import GendataError
from .metadata import Column, Metadata, Table
from ..platform.tools import run_tool

DEFAULT_ROWS = (0, 1, 2, 10, 100)
INSERT_BATCH = 50
_NUMERIC_TYPE_RE = re.compile(r"int|float|double|dec|numeric|fixed", re.I)
_NO_CHARSET_RE = re.compile(r"bit|int|bool|float|double|dec|numeric|fixed|blob|date|time|year|binary",
                            re.I)


# ---------------------------------------------------------------- reading .zz
@dataclass
class GendataSpec:
    """A gendata specification: the ``$tables``, ``$fields``, ``$data`` and ``$schemas`` of a .zz."""

    tables: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    schemas: list[str] | None = None
    path: str = ""


_ZZ_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
  | (?P<var>\$[A-Za-z_]\w*)
  | (?P<op>=>|\.\.|[{}\[\](),;=])
  | (?P<word>[A-Za-z_]\w*)
""", re.VERBOSE)


class _ZZParser:
    def __init__(self, text: str) -> None:
        self.toks: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _ZZ_TOKEN.match(text, pos)
            if not m:
                raise ValueError(f"unexpected text at offset {pos}: {text[pos:pos + 30]!r}")
            pos = m.end()
            if m.lastgroup != "ws":
                self.toks.append((m.lastgroup or "", m.group()))
        self.toks.append(("eof", ""))
        self.i = 0

    def peek(self) -> tuple[str, str]:
        """The token k places ahead."""
        return self.toks[self.i]

    def take(self, text: str | None = None) -> tuple[str, str]:
        """Consume the next token (checking its text)."""
        t = self.toks[self.i]
        if text is not None and t[1] != text:
            raise ValueError(f"expected {text!r}, found {t[1]!r}")
        self.i += 1
        return t

    def parse(self) -> dict[str, Any]:
        """The variables the file assigns."""
        out: dict[str, Any] = {}
        while self.peek()[0] != "eof":
            kind, text = self.peek()
            if kind == "op" and text == ";":
                self.take()
                continue
            if kind == "word" and text in ("our", "my"):
                self.take()
                kind, text = self.peek()
            if kind == "num":  # a trailing "1;"
                self.take()
                continue
            if kind != "var":
                raise ValueError(f"expected a $variable, found {text!r}")
            self.take()
            self.take("=")
            out[text[1:]] = self.value()
        return out

    def value(self) -> Any:
        """One data value."""
        kind, text = self.take()
        if kind == "op" and text == "{":
            result: dict[str, Any] = {}
            while self.peek()[1] != "}":
                k_kind, k_text = self.take()
                key = _unquote(k_text) if k_kind == "str" else k_text
                self.take("=>") if self.peek()[1] == "=>" else self.take(",")
                result[key] = self.value()
                if self.peek()[1] == ",":
                    self.take()
            self.take("}")
            return result
        if kind == "op" and text in ("[", "("):
            close = "]" if text == "[" else ")"
            items: list[Any] = []
            while self.peek()[1] != close:
                items.extend(self._list_item())
                if self.peek()[1] == ",":
                    self.take()
            self.take(close)
            return items
        if kind == "str":
            return _unquote(text)
        if kind == "num":
            return _number(text)
        if kind == "word":
            return None if text == "undef" else text
        raise ValueError(f"unexpected {text!r}")

    def _list_item(self) -> list[Any]:
        first = self.value()
        if self.peek()[1] == "..":
            self.take()
            last = self.value()
            return list(range(int(first), int(last) + 1))
        return [first]


def _number(text: str) -> int | float:
    return float(text) if any(c in text for c in ".eE") else int(text)


def _unquote(text: str) -> str:
    body = text[1:-1]
    if text[0] == "'":
        return re.sub(r"\\([\\'])", r"\1", body)
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def read_spec(path: str) -> GendataSpec:
    """Read a .zz file (small parser first, then ``perl`` for what it cannot read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise GendataError(f"cannot read gendata file {path}: {exc}") from exc
    try:
        values = _ZZParser(text).parse()
    except ValueError as parse_error:
        values = _read_with_perl(path, str(parse_error))
    return spec_from_values(values, path)


def spec_from_values(values: dict[str, Any], path: str = "") -> GendataSpec:
    """A GendataSpec from the variables of a .zz file."""
    def _mapping(name: str) -> dict[str, Any]:
        v = values.get(name) or {}
        if not isinstance(v, dict):
            raise GendataError(f"{path}: ${name} must be a hash ({{ ... }})")
        return {str(k).lower(): (list(x) if isinstance(x, list) else [x]) for k, x in v.items()}
    schemas = values.get("schemas")
    if schemas is not None and not isinstance(schemas, list):
        schemas = [schemas]
    return GendataSpec(_mapping("tables"), _mapping("fields"), _mapping("data"),
                       [str(s) for s in schemas] if schemas else None, path)


def _read_with_perl(path: str, why: str) -> dict[str, Any]:
    from .perl_coprocess import find_perl
    perl = find_perl()
    if perl is None:
        raise GendataError(f"{path}: cannot read it ({why}) and no perl with JSON::PP to "
                           f"evaluate it")
    script = ("no strict; our ($tables, $fields, $data, $schemas); my $r = do $ARGV[0]; "
              "die \"$@\" if $@; use JSON::PP; print JSON::PP->new->canonical->allow_nonref->encode("
              "{tables => $tables, fields => $fields, data => $data, schemas => $schemas});")
    proc = run_tool([perl, "-e", script, os.path.abspath(path)], timeout=60)
    if proc.timed_out:
        raise GendataError(f"{path}: perl did not evaluate it within 60 s")
    if proc.returncode != 0:
        raise GendataError(f"{path}: perl could not evaluate it: {proc.stderr.strip()[:300]}")
    spec: dict[str, Any] = json.loads(proc.stdout)  # the script prints a JSON object
    return spec


# ---------------------------------------------------------------- planning
@dataclass
class FieldDef:
    """One generated column."""

    name: str
    type: str            # as written in the spec, lower case ('char(10)', 'int', 'enum')
    nullability: str = ""
    index: str = ""
    sql: str = ""
    index_sql: str = ""

    @property
    def data_type(self) -> str:
        """The base data type (for metadata): 'int', 'char', 'varchar'..."""
        m = re.match(r"\s*([a-z]+)", self.type)
        base = m.group(1) if m else "int"
        return "int" if base == "integer" else base


@dataclass
class TableDef:
    """One generated table: name, options, row count."""

    name: str
    rows: int
    options_sql: str
    pk: str


@dataclass
class GendataOptions:
    """gendata's command-line options (``--rows``, ``--engine``, ``--views``, ``--notnull``...)."""

    rows: list[int] | None = None
    engines: list[str] | None = None
    views: str | None = None
    notnull: bool = False
    short_column_names: bool = False
    strict_fields: bool = False
    varchar_length: int = 1
    max_rows: int | None = None   # kewpie: cap the rows of every table (benchmarks)


def _sql_field(sql: str) -> FieldDef:
    """A field the .zz file gives as SQL (``$fields->{sqls}``): its name and type read
    off the SQL."""
    m = re.match(r"^\s*`?\w+`?\s+(\w+)", sql)
    ftype = m.group(1).lower() if m else ""
    if re.search("auto_increment", sql, re.I):
        ftype += " auto_increment"
    name_m = re.match(r"^\s*`?(\w+)", sql)
    return FieldDef(name_m.group(1) if name_m else "", ftype, sql=sql)


class GendataPlan:
    """randgen's tables for a specification, and the statements that build them."""

    def __init__(self, spec: GendataSpec, options: GendataOptions | None = None,
                 default_schema: str = "test") -> None:
        self.spec = spec
        self.options = options or GendataOptions()
        self.default_schema = default_schema
        self.schemas = list(spec.schemas) if spec.schemas else [default_schema]
        self.tables = self._tables()
        self.fields, self.custom_index_sqls = self._fields()
        t = spec.tables
        self.view_kinds: list[str | None] | None = t.get("views") or (
            [self.options.views] if self.options.views is not None else None)
        self.merges = t.get("merges")

    # tables ----------------------------------------------------------------
    def _tables(self) -> list[TableDef]:
        t = self.spec.tables
        o = self.options
        rows = o.rows or t.get("rows") or list(DEFAULT_ROWS)
        cycles: list[tuple[int, list[Any] | None]] = [
            (0, rows), (1, o.engines or t.get("engines")), (2, t.get("charsets") or [None]),
            (3, t.get("collations") or [None]), (12, t.get("partitions") or [None]),
            (6, t.get("pk") or t.get("primary_key") or ["integer auto_increment"]),
            (4, t.get("row_formats") or [None]), (5, t.get("options") or [None]),
        ]
        combos: list[dict[int, str]] = [{}]
        for idx, values in cycles:
            if values is None:
                continue
            combos = [{**c, idx: "" if v is None else str(v).lower()} for c in combos for v in values]
        names = list(t.get("names") or [])
        seen: dict[str, int] = {}
        result = []
        for c in combos:
            if names:
                name = str(names.pop(0))
            else:
                parts = [c[i] for i in sorted(c) if c[i] != ""]
                name = "table" + "_".join(parts)
                name = re.sub(r"[^A-Za-z0-9]", "_", name)
                name = re.sub(r"_+", "_", name).rstrip("_")
                for a, b in (("auto_increment", "autoinc"), ("partition_by", "part_by"),
                             ("partition", "part"), ("values_less_than", ""), ("integer", "int")):
                    name = re.sub(a, b, name, flags=re.I)
                if name in seen:
                    seen[name] += 1
                    name = f"{name}_{seen[name]}"
                else:
                    seen[name] = 1
            opts = []
            if c.get(1):
                opts.append(f"ENGINE={c[1]}")
            if c.get(2):
                opts.append(f"CHARACTER SET {c[2]}")
            if c.get(3):
                opts.append(f"COLLATE {c[3]}")
            if c.get(4):
                opts.append(f"ROW_FORMAT={c[4]}")
            if c.get(5):
                opts.append(c[5])
            if c.get(12):
                opts.append(f"/*!50100 PARTITION BY {c[12]} */")
            nrows = int(float(c[0])) if c.get(0, "") != "" else 0
            if o.max_rows is not None:
                nrows = min(nrows, o.max_rows)
            result.append(TableDef(name, nrows, " ".join(opts), c.get(6, "")))
        return result

    # fields ----------------------------------------------------------------
    def _fields(self) -> tuple[list[FieldDef], list[str]]:
        f = self.spec.fields
        o = self.options
        names = [str(n) for n in (f.get("names") or [])]
        fields: list[FieldDef] = []
        short_no = 0
        for c in self._field_combos():
            if c.get(0, "") == "":
                continue
            if ("not null" in c.get(4, "") or o.notnull) and "default null" in c.get(10, ""):
                continue
            if names:
                name = names.pop(0)
            elif o.short_column_names:
                name = f"c{short_no}"
                short_no += 1
            else:
                name = "col_" + "_".join(c[i] for i in sorted(c) if c[i] != "")
                name = re.sub(r"[^A-Za-z0-9]", "_", name)
                name = re.sub(r"_+", "_", name).rstrip("_")
            fields.append(self._field(c, name))
        for sql in f.get("sqls") or []:
            fields.insert(0, _sql_field(str(sql)))
        return fields, [str(s) for s in f.get("index_sqls") or []]

    def _field_combos(self) -> list[dict[int, str]]:
        """Every combination of the fields' dimensions (keyed as the .zz file's $fields
        arrays: 0 type, 1 charset, 2 collation, 3 sign, 4 null, 5 index, 10 default);
        sign only for numeric types, charset only for types that take one."""
        f = self.spec.fields
        o = self.options
        if o.strict_fields:
            null = f.get("null") or f.get("nullability") or [None]
            indexes = f.get("indexes") or f.get("keys") or [None]
        else:
            null = f.get("null") or f.get("nullability") or (["not null"] if o.notnull else [None])
            indexes = f.get("indexes") or f.get("keys") or [None, "key"]
        cycles: list[tuple[int, list[Any]]] = [
            (0, f.get("types") or ["int", "varchar", "date", "time", "datetime"]),
            (4, null), (10, f.get("default") or [None]), (3, f.get("sign") or [None]),
            (5, indexes), (1, f.get("charsets") or [None]), (2, f.get("collations") or [None]),
        ]
        combos: list[dict[int, str]] = [{}]
        for idx, values in cycles:
            new = []
            for c in combos:
                ftype = c.get(0, "")
                if idx == 3 and not _NUMERIC_TYPE_RE.search(ftype):
                    new.append(c)
                elif idx == 1 and _NO_CHARSET_RE.search(ftype):
                    new.append(c)
                else:
                    new.extend({**c, idx: "" if v is None else str(v).lower()} for v in values)
            combos = new
        return combos

    def _field(self, c: dict[int, str], name: str) -> FieldDef:
        """The field of one combination, called name: its column and index SQL."""
        o = self.options
        ftype = c[0]
        sql_type = ftype
        if re.search(r"set|enum", ftype) and "(" not in ftype:
            sql_type += " (" + ",".join(f"'{chr(97 + i)}'" for i in range(26)) + ")"
        if "char" in ftype and "(" not in ftype:
            sql_type += " (1)"
        key_len = " (255)" if re.search(r"blob|text|binary", ftype) and "(" not in ftype else ""
        index = c.get(5, "")
        index_sql = f"{index} (`{name}`{key_len})" if index not in ("", "nokey") else ""
        parts = [sql_type,
                 f"CHARACTER SET {c[1]}" if c.get(1) else "",
                 f"COLLATE {c[2]}" if c.get(2) else "",
                 c.get(3, ""), c.get(4, ""), c.get(10, "")]
        sql = f"`{name}` " + " ".join(p for p in parts if p)
        if not o.strict_fields and "timestamp" in ftype:
            sql += " NOT NULL" if o.notnull else " NULL DEFAULT 0"
        return FieldDef(name, ftype, c.get(4, ""), index, sql, index_sql)

    # output ----------------------------------------------------------------
    def table_fields(self, table: TableDef) -> list[FieldDef]:
        """The fields of a table before shuffling (its pk last)."""
        fields = list(self.fields)
        if table.pk:
            fields.append(FieldDef("pk", table.pk, "", "primary key", f"pk {table.pk}",
                                   "primary key (pk)"))
        return fields

    def metadata(self) -> Metadata:
        """The tables and columns this plan creates (for generating without a server)."""
        tables: list[Table] = []
        for schema in self.schemas:
            for t in self.tables:
                cols = tuple(sorted(
                    (Column(fd.name, fd.data_type,
                            "primary" if fd.index == "primary key" else
                            "indexed" if fd.index not in ("", "nokey") else "")
                     for fd in self.table_fields(t)), key=lambda c: c.name))
                tables.append(Table(schema, t.name, cols, False, t.rows))
                for view in self._view_names(t):
                    tables.append(Table(schema, view, cols, True, t.rows))
        return Metadata.from_tables(tables, self.schemas[0])

    def _view_names(self, table: TableDef) -> list[str]:
        if self.view_kinds is None:
            return []
        if len(self.view_kinds) == 1:
            return [f"view_{table.name}"]
        return [f"view_{table.name}_{i}" for i in range(len(self.view_kinds))]

    def statements(self, prng: Prng) -> Iterator[str]:
        """The SQL statements that create and fill the tables, in order."""
        yield "SET SQL_MODE= CONCAT(@@sql_mode,',NO_ENGINE_SUBSTITUTION')"
        myisam_tables: list[str] = []
        for schema in self.schemas:
            yield f"CREATE SCHEMA IF NOT EXISTS `{schema}`"
            yield f"USE `{schema}`"
            for table in self.tables:
                fields = prng.shuffleArray(self.table_fields(table))
                field_sql = ",\n".join(fd.sql for fd in fields if fd.sql)
                index_sqls = self.custom_index_sqls + [fd.index_sql for fd in fields if fd.index_sql]
                body = field_sql + (",\n/*Indices*/\n" + ",\n".join(index_sqls) if index_sqls else "")
                yield f"DROP TABLE IF EXISTS `{table.name}`"
                yield f"CREATE TABLE `{table.name}` (\n{body}) {table.options_sql}".rstrip()
                if "ENGINE=MYISAM" in table.options_sql.upper() or "ENGINE=" not in \
                        table.options_sql.upper():
                    myisam_tables.append(table.name)
                for i, (view, kind) in enumerate(zip(self._view_names(table), self.view_kinds or [])):
                    algo = f"ALGORITHM={str(kind).upper()} " if kind else ""
                    yield f"CREATE OR REPLACE {algo}VIEW `{view}` AS SELECT * FROM `{table.name}`"
                yield from self._rows(table, fields, prng)
        if self.merges and myisam_tables:
            for i, merge in enumerate(self.merges):
                yield f"CREATE TABLE `merge_{i}` LIKE `{myisam_tables[0]}`"
                yield (f"ALTER TABLE `merge_{i}` ENGINE=MERGE UNION({','.join(myisam_tables)}) "
                       f"{str(merge or '').upper()}")
        yield "COMMIT"
        yield f"USE `{self.schemas[0]}`"

    def _rows(self, table: TableDef, fields: list[FieldDef], prng: Prng) -> Iterator[str]:
        big = table.rows > 100
        yield f"ALTER TABLE `{table.name}` DISABLE KEYS"
        if big:
            yield "SET AUTOCOMMIT=OFF"
            yield "START TRANSACTION"
        perms = self._data_perms()
        notnull = self.options.notnull
        buffer: list[str] = []
        for row_id in range(1, table.rows + 1):
            values = []
            for fd in fields:
                if not fd.type:
                    continue
                values.append(_row_value(fd, row_id, perms, notnull, prng))
            buffer.append(" (" + ", ".join(values) + ") ")
            if row_id % INSERT_BATCH == 0 or row_id == table.rows:
                yield f"INSERT /*! IGNORE */ INTO `{table.name}` VALUES " + ", ".join(buffer)
                buffer = []
            if row_id % 10000 == 0:
                yield "COMMIT"
        yield "COMMIT"
        if big:
            yield "SET AUTOCOMMIT=ON"
        yield f"ALTER TABLE `{table.name}` ENABLE KEYS"

    def _data_perms(self) -> dict[str, list[Any]]:
        d = self.spec.data
        nn = self.options.notnull
        return {
            "number": d.get("numbers") or ["digit"] * 4 + ["digit" if nn else "null"],
            "string": d.get("strings") or ["letter"] * 4 + ["letter" if nn else "null"],
            "blob": d.get("blobs") or ["data"] * 4 + ["data" if nn else "null"],
            "temporal": d.get("temporals") or ["date", "time", "datetime", "year", "timestamp",
                                               "date" if nn else "null"],
            "enum": d.get("enum") or ["letter"] * 4 + ["letter" if nn else "null"],
        }


def _row_value(fd: FieldDef, row_id: int, perms: dict[str, list[Any]], notnull: bool,
               prng: Prng) -> str:
    ftype = fd.type
    if "auto_increment" in ftype:
        return "NULL"
    if fd.index == "primary key":
        if re.fullmatch(r"(datetime|timestamp)", ftype):
            return f"FROM_UNIXTIME(UNIX_TIMESTAMP('2000-01-01') + {row_id})"
        if "date" in ftype:
            return f"FROM_DAYS(TO_DAYS('2000-01-01') + {row_id})"
        if ftype == "time":
            return f"SEC_TO_TIME({row_id})"
        return str(row_id)
    if re.search(r"date|time|year", ftype):
        kind, quote = "temporal", True
    elif re.search(r"blob|text|binary", ftype):
        kind, quote = "blob", True
    elif re.search(r"int|float|double|dec|numeric|fixed|bool|bit", ftype):
        kind, quote = "number", False
    elif ftype == "enum":
        kind, quote = "enum", True
    else:
        kind, quote = "string", True
    possible = perms[kind]
    if "not null" in fd.nullability or notnull:
        possible = [p for p in possible if str(p).lower() != "null"]
    if not possible:
        raise GendataError(f"unable to generate data for field '{ftype} {fd.nullability}'")
    pick = prng.arrayElement(possible)
    if pick is None:
        pick = ftype
    pick = str(pick)
    if field_type_kind(pick) is not None:
        try:
            value = field_type_value(prng, pick)
        except ValueError:
            value = pick
    else:
        value = pick
    if value is None:
        return "NULL"
    if quote:
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return value
