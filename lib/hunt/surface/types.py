"""MariaDB 10.11's column types, by family, with the values that sit at their edges.

A :class:`ColumnType` is one SQL type as a column declares it (``DECIMAL(65,30)``,
``VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_german2_ci``, ``TIME(3)``,
``INET6``...), its **family** -- what an expression of it is, for the
expression generator: ``int``, ``dec``, ``real``, ``str``, ``bin``, ``date``,
``datetime``, ``time``, ``json``, ``geom``, ``inet6``, ``uuid`` (the last two
compare only with their own kind) -- and the literals that exercise it:
its limits, zero and ``-0``, the empty string and trailing spaces, collation
ties (``'a'``/``'A'``/``'ä'``, ``'ss'``/``'ß'``), fractional seconds, JSON of
every kind, IPv4-mapped IPv6 addresses, the empty geometry collection...

:func:`column_types` lists every type the schema generator may draw, per family
(:data:`FAMILIES`); :meth:`ColumnType.literal` draws a value of the type
(``NULL`` is the caller's choice).  Everything is text: nothing here talks to a
server.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Mapping

FAMILIES = ("int", "dec", "real", "str", "bin", "date", "datetime", "time", "json", "geom",
            "inet6", "uuid")
# families whose values compare with each other by value (the expression generator's rule)
NUMERIC = ("int", "dec", "real")
TEMPORAL = ("date", "datetime", "time")

INT_RANGES: Mapping[str, tuple[int, int, int]] = MappingProxyType({
    # name: (signed min, signed max, unsigned max)
    "TINYINT": (-128, 127, 255),
    "SMALLINT": (-32768, 32767, 65535),
    "MEDIUMINT": (-8388608, 8388607, 16777215),
    "INT": (-2147483648, 2147483647, 4294967295),
    "BIGINT": (-9223372036854775808, 9223372036854775807, 18446744073709551615),
})
CHARSETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    # charset: collations drawn for it (ties: _ci folds case, german2 ß = ss, uca accents)
    "utf8mb4": ("utf8mb4_general_ci", "utf8mb4_bin", "utf8mb4_unicode_520_ci",
                "utf8mb4_uca1400_ai_ci", "utf8mb4_uca1400_as_cs", "utf8mb4_nopad_bin",
                "utf8mb4_german2_ci", "utf8mb4_turkish_ci"),
    "latin1": ("latin1_swedish_ci", "latin1_bin", "latin1_german2_ci", "latin1_general_cs"),
    "utf8mb3": ("utf8mb3_general_ci", "utf8mb3_bin", "utf8mb3_unicode_ci"),
    "ascii": ("ascii_general_ci", "ascii_bin"),
})
# strings that test collations and padding: case, accents, ß/ss, trailing spaces, empty
STRINGS = ("", " ", "a", "A", "a ", "a  ", "b", "ab", "abc", "ABC", "Abc", "z", "0", "1",
           "10", "-1", "1a", "0.5", "1e2", "ss", "ß", "ä", "Ä", "ae", "é", "e", "E", "ı", "i",
           "I", "İ", "%", "_", "a%", "x'y", "{}", "[1]", "2001-01-01", "12:00:00", "NULL",
           "null", "true", "\\", "tab\there", "€", "😀")
LATIN1_SAFE = tuple(s for s in STRINGS if all(ord(c) < 256 for c in s) and "ı" not in s)
ASCII_SAFE = tuple(s for s in STRINGS if s.isascii())
JSON_DOCS = ('{}', '[]', 'null', 'true', 'false', '0', '-1.5e3', '"x"', '""', '[1, 2, 3]',
             '[1, "a", null, true, {"b": [2]}]', '{"a": 1}', '{"a": 1, "b": "x"}',
             '{"a": {"b": {"c": [1, 2, {"d": null}]}}}', '{"a": [1, 2], "A": [3]}',
             '{"k": "ß", "e": ""}', '[[[]]]', '{"a": 1.0}', '{"a": 10000000000000000000}',
             '[-0.0, 0]')
GEOMETRIES = ("POINT(0 0)", "POINT(1 1)", "POINT(-1.5 2.25)", "LINESTRING(0 0, 1 1, 2 2)",
              "LINESTRING(0 0, 0 0)", "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))",
              "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 2 1, 2 2, 1 2, 1 1))",
              "MULTIPOINT(0 0, 1 1)", "MULTILINESTRING((0 0, 1 1), (2 2, 3 3))",
              "MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)))",
              "GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(0 0, 1 1))", "GEOMETRYCOLLECTION EMPTY")
INET6S = ("::", "::1", "::ffff:1.2.3.4", "::ffff:255.255.255.255", "2001:db8::1",
          "fe80::1:2:3:4", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "1::")
UUIDS = ("00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
         "123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000001",
         "f0000000-0000-1000-8000-000000000000", "01234567-89ab-4def-8123-456789abcdef")
DATES = ("1000-01-01", "9999-12-31", "1970-01-01", "2000-02-29", "2001-02-28", "1999-12-31",
         "2024-01-01", "2038-01-19", "0001-01-01", "2000-01-01")
TIMES = ("00:00:00", "23:59:59", "-838:59:59", "838:59:59", "12:00:00", "-00:00:01",
         "00:00:00.000001", "99:59:59.999999", "-12:30:45.5", "01:02:03")
DATETIMES = ("1000-01-01 00:00:00", "9999-12-31 23:59:59.999999", "1970-01-01 00:00:01",
             "2038-01-19 03:14:07", "2000-02-29 12:34:56.789", "2000-01-01 00:00:00",
             "1999-12-31 23:59:59.5", "2024-06-30 18:00:00.000001")
TIMESTAMPS = ("1970-01-01 00:00:01", "2038-01-19 03:14:07.999999", "2000-02-29 12:34:56.789",
              "2000-01-01 00:00:00", "1999-12-31 23:59:59.5", "2024-06-30 18:00:00.000001")
YEARS = ("1901", "2155", "1970", "2000", "0", "69", "70", "2024")


def quote(text: str) -> str:
    """A SQL string literal for text (backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True)
class ColumnType:
    """One column type: its SQL, its family and what its values are."""

    sql: str                     # as declared: "DECIMAL(10,2) UNSIGNED"
    family: str                  # one of FAMILIES
    kind: str                    # the base type: INT, DECIMAL, VARCHAR, ENUM, INET6...
    length: int = 0              # CHAR/VARCHAR/BINARY length, DECIMAL precision, BIT width
    scale: int = 0               # DECIMAL scale, temporal fractional digits
    unsigned: bool = False
    charset: str = ""
    collation: str = ""
    members: tuple[str, ...] = ()   # ENUM/SET members
    indexable: bool = True       # may be a key part without a prefix length
    blob: bool = False           # TEXT/BLOB/JSON/GEOMETRY: a key needs a prefix (or is long unique)

    def literal(self, rng: random.Random) -> str:
        """A value of this type as a SQL literal, edges preferred."""
        kind = self.kind
        if kind in INT_RANGES:
            low, high, umax = INT_RANGES[kind]
            if self.unsigned:
                low, high = 0, umax
            return str(rng.choice((low, high, 0, 1, 2, 3, 7, 10, 100, high - 1, low + 1,
                                   rng.randint(low, high), rng.randint(-10, 10) if low < 0 else
                                   rng.randint(0, 20))))
        if kind == "BIT":
            width = self.length
            top = (1 << width) - 1
            value = rng.choice((0, 1, top, top >> 1, rng.randint(0, top)))
            return f"b'{value:b}'"
        if kind == "DECIMAL":
            return self._decimal_literal(rng)
        if kind in ("FLOAT", "DOUBLE"):
            return self._float_literal(rng)
        if kind == "DATE":
            return quote(rng.choice(DATES))
        if kind == "TIME":
            return quote(self._fraction(rng.choice(TIMES)))
        if kind == "DATETIME":
            return quote(self._fraction(rng.choice(DATETIMES)))
        if kind == "TIMESTAMP":
            return quote(self._fraction(rng.choice(TIMESTAMPS)))
        if kind == "YEAR":
            return rng.choice(YEARS)
        if kind in ("CHAR", "VARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT"):
            return self._text_literal(rng)
        if kind in ("BINARY", "VARBINARY", "BLOB", "TINYBLOB", "MEDIUMBLOB"):
            hexits = rng.choice(("", "00", "FF", "0000", "61", "6120", "00FF00", "DEADBEEF",
                                 "7F", "80", "C3A4"))
            if self.kind == "BINARY":
                hexits = hexits[: 2 * self.length]
            return f"X'{hexits}'" if hexits else "''"
        if kind == "ENUM":
            return quote(rng.choice(self.members)) if rng.random() < 0.9 else \
                str(rng.randint(1, len(self.members)))
        if kind == "SET":
            chosen = [m for m in self.members if rng.random() < 0.4]
            return quote(",".join(chosen))
        if kind == "JSON":
            return quote(rng.choice(JSON_DOCS))
        if kind == "INET6":
            return quote(rng.choice(INET6S))
        if kind == "UUID":
            return quote(rng.choice(UUIDS))
        if self.family == "geom":
            shape = rng.choice(self._shapes())
            return f"ST_GeomFromText({quote(shape)})"
        raise ValueError(f"no literal for {self.sql}")

    def _decimal_literal(self, rng: random.Random) -> str:
        """A DECIMAL literal: its largest and smallest, 0, 1, -0, a random one."""
        whole = self.length - self.scale
        biggest = ("9" * whole or "0") + ("." + "9" * self.scale if self.scale else "")
        tiny = ("0." + "0" * (self.scale - 1) + "1") if self.scale else "1"
        choices = [biggest, "0", "1", tiny, "0.5" if self.scale else "5", "-0",
                   f"{rng.randint(0, 10 ** min(whole, 6) - 1 if whole else 0)}"
                   + (f".{rng.randint(0, 10 ** min(self.scale, 6) - 1):0{min(self.scale, 6)}d}"
                      if self.scale else "")]
        if not self.unsigned:
            choices += ["-" + biggest, "-1", "-" + tiny]
        return rng.choice(choices)

    def _float_literal(self, rng: random.Random) -> str:
        """A FLOAT or DOUBLE literal: the type's edges, -0, small and random values."""
        edges = (["3.4028234e38", "1.1754944e-38", "-3.4028234e38"] if self.kind == "FLOAT" else
                 ["1.7976931348623157e308", "2.2250738585072014e-308",
                  "-1.7976931348623157e308", "4.9e-324"])
        choices = edges + ["0e0", "-0e0", "1e0", "-1e0", "0.1e0", "1.5e0", "1e15", "-2.5e-3",
                           repr(round(rng.uniform(-1000, 1000), 3))]
        if self.unsigned:
            choices = [c for c in choices if not c.startswith("-")]
        return rng.choice(choices)

    def _text_literal(self, rng: random.Random) -> str:
        """A character string literal its character set holds, cut to the type's length."""
        pool = ASCII_SAFE if self.charset == "ascii" else \
            LATIN1_SAFE if self.charset == "latin1" else \
            tuple(s for s in STRINGS if s != "😀") if self.charset == "utf8mb3" else STRINGS
        text = rng.choice(pool)
        if rng.random() < 0.15:
            text = text * rng.randint(2, 5)
        limit = self.length if self.kind in ("CHAR", "VARCHAR") else 255
        return quote(text[:limit])

    def _fraction(self, value: str) -> str:
        """A temporal literal cut to the type's fractional digits (the server would round)."""
        if "." not in value:
            return value
        whole, frac = value.split(".", 1)
        return whole + ("." + frac[: self.scale] if self.scale else "")

    def _shapes(self) -> tuple[str, ...]:
        wanted = {"POINT": ("POINT(",), "LINESTRING": ("LINESTRING(",),
                  "POLYGON": ("POLYGON(",)}.get(self.kind)
        if not wanted:
            return GEOMETRIES
        return tuple(g for g in GEOMETRIES if g.startswith(wanted))


def without_empty_member(ctype: ColumnType) -> ColumnType:
    """An ENUM type whose member ``''`` is another letter (as many members: a value is drawn
    the same way), any other type as it is: the error value 0 that INSERT IGNORE writes
    for an invalid value reads ``''`` too, and an index lookup of ``''`` finds the member
    alone (the known bug enum-error-value-key, lib.hunt.surface.expr.KNOWN_BUGS)."""
    if ctype.kind != "ENUM" or "" not in ctype.members:
        return ctype
    filler = next(ch for ch in "defghijklmnopqrstuvw" if ch not in ctype.members)
    members = tuple(m or filler for m in ctype.members)
    tail = ctype.sql[ctype.sql.rindex(")") + 1:]
    return replace(ctype, sql=f"ENUM({','.join(quote(m) for m in members)}){tail}",
                   members=members)


def _int_types() -> list[ColumnType]:
    types = []
    for name in INT_RANGES:
        types.append(ColumnType(name, "int", name))
        types.append(ColumnType(f"{name} UNSIGNED", "int", name, unsigned=True))
    types += [ColumnType("BIT(1)", "int", "BIT", length=1), ColumnType("BIT(8)", "int", "BIT", length=8),
              ColumnType("BIT(64)", "int", "BIT", length=64), ColumnType("YEAR", "int", "YEAR")]
    return types


def _decimal_types() -> list[ColumnType]:
    shapes = ((1, 0), (5, 2), (10, 0), (10, 10), (20, 6), (38, 10), (65, 0), (65, 30))
    types = [ColumnType(f"DECIMAL({m},{d})", "dec", "DECIMAL", length=m, scale=d) for m, d in shapes]
    types.append(ColumnType("DECIMAL(12,4) UNSIGNED", "dec", "DECIMAL", length=12, scale=4,
                            unsigned=True))
    return types


def _real_types() -> list[ColumnType]:
    return [ColumnType("FLOAT", "real", "FLOAT"), ColumnType("DOUBLE", "real", "DOUBLE"),
            ColumnType("DOUBLE UNSIGNED", "real", "DOUBLE", unsigned=True)]


def _temporal_types() -> list[ColumnType]:
    types = [ColumnType("DATE", "date", "DATE")]
    for n in (0, 3, 6):
        suffix = f"({n})" if n else ""
        types += [ColumnType(f"DATETIME{suffix}", "datetime", "DATETIME", scale=n),
                  ColumnType(f"TIMESTAMP{suffix}", "datetime", "TIMESTAMP", scale=n),
                  ColumnType(f"TIME{suffix}", "time", "TIME", scale=n)]
    return types


def _string_types() -> list[ColumnType]:
    types = []
    for charset, collations in CHARSETS.items():
        for collation in collations[:2] if charset != "utf8mb4" else collations:
            tail = f" CHARACTER SET {charset} COLLATE {collation}"
            types += [ColumnType(f"VARCHAR(32){tail}", "str", "VARCHAR", length=32,
                                 charset=charset, collation=collation),
                      ColumnType(f"CHAR(4){tail}", "str", "CHAR", length=4, charset=charset,
                                 collation=collation)]
    types += [ColumnType("VARCHAR(512)", "str", "VARCHAR", length=512),
              ColumnType("CHAR(1)", "str", "CHAR", length=1),
              ColumnType("CHAR(0)", "str", "CHAR", length=0, indexable=False),
              ColumnType("TEXT", "str", "TEXT", blob=True, indexable=False),
              ColumnType("TINYTEXT CHARACTER SET latin1", "str", "TINYTEXT", charset="latin1",
                         blob=True, indexable=False),
              ColumnType("MEDIUMTEXT COLLATE utf8mb4_bin", "str", "MEDIUMTEXT",
                         collation="utf8mb4_bin", blob=True, indexable=False),
              ColumnType("ENUM('a','b','c','')", "str", "ENUM", members=("a", "b", "c", "")),
              ColumnType("ENUM('x','X ','y') COLLATE utf8mb4_bin", "str", "ENUM",
                         members=("x", "X ", "y")),
              ColumnType("SET('a','b','c','d')", "str", "SET", members=("a", "b", "c", "d")),
              ColumnType("INET6", "inet6", "INET6"),
              ColumnType("UUID", "uuid", "UUID")]
    return types


def _binary_types() -> list[ColumnType]:
    return [ColumnType("BINARY(4)", "bin", "BINARY", length=4),
            ColumnType("VARBINARY(32)", "bin", "VARBINARY", length=32),
            ColumnType("BLOB", "bin", "BLOB", blob=True, indexable=False),
            ColumnType("TINYBLOB", "bin", "TINYBLOB", blob=True, indexable=False)]


def _other_types() -> list[ColumnType]:
    return [ColumnType("JSON", "json", "JSON", blob=True, indexable=False),
            ColumnType("GEOMETRY", "geom", "GEOMETRY", blob=True, indexable=False),
            ColumnType("POINT", "geom", "POINT", blob=True, indexable=False),
            ColumnType("LINESTRING", "geom", "LINESTRING", blob=True, indexable=False),
            ColumnType("POLYGON", "geom", "POLYGON", blob=True, indexable=False)]


def column_types() -> dict[str, list[ColumnType]]:
    """Every type the schema generator draws, by family."""
    everything = (_int_types() + _decimal_types() + _real_types() + _temporal_types()
                  + _string_types() + _binary_types() + _other_types())
    by_family: dict[str, list[ColumnType]] = {f: [] for f in FAMILIES}
    for t in everything:
        by_family[t.family].append(t)
    return by_family
