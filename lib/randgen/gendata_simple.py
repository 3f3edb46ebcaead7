"""randgen's "simple" gendata (``--gendata`` without a file).

Nine tables A, B, C, D, E, AA, BB, CC, DD with 0, 1, 20, 100, 1000, 0, 1,
20, 100 rows (``--rows`` replaces the counts), each with ``pk`` (auto
increment; two-letter tables start at 5 * the name's length) and the
columns ``col_int_key``, ``col_int_nokey``, ``col_date_key``,
``col_date_nokey``, ``col_time_key``, ``col_time_nokey``,
``col_datetime_key``, ``col_datetime_nokey``, ``col_varchar_key``,
``col_varchar_nokey`` (the ``_key`` ones indexed), and a one-row table
``DUMMY``.  Values: mostly digits, some 0..255, 10% NULL; dates with 10%
NULL and 10% '1900-01-01'...  The same seed gives the same rows.
"""
from __future__ import annotations

from typing import Iterator

from .builtins import Prng
from .metadata import Column, Metadata, Table

NAMES = ("A", "B", "C", "D", "E", "AA", "BB", "CC", "DD")
ROWS = (0, 1, 20, 100, 1000, 0, 1, 20, 100)
BATCH = 500
COLUMNS = (("pk", "int", "primary"), ("col_int_nokey", "int", ""), ("col_int_key", "int", "indexed"),
           ("col_date_key", "date", "indexed"), ("col_date_nokey", "date", ""),
           ("col_time_key", "time", "indexed"), ("col_time_nokey", "time", ""),
           ("col_datetime_key", "datetime", "indexed"), ("col_datetime_nokey", "datetime", ""),
           ("col_varchar_key", "varchar", "indexed"), ("col_varchar_nokey", "varchar", ""))


class SimpleGendata:
    """The simple data set: options as gendata-old.pl took them."""

    def __init__(self, rows: list[int] | None = None, engine: str = "", views: str | None = None,
                 notnull: bool = False, varchar_length: int = 1, max_rows: int | None = None) -> None:
        counts = list(rows) if rows else list(ROWS)
        counts += list(ROWS[len(counts):])
        if max_rows is not None:
            counts = [min(c, max_rows) for c in counts]
        self.rows = counts[:len(NAMES)]
        self.engines = [e for e in engine.split(",")] if engine else [""]
        self.views = views
        self.notnull = notnull
        self.varchar_length = max(1, varchar_length)

    def table_names(self) -> list[str]:
        """Names of the generated tables (one per name and engine)."""
        return [self._name(n, e) for n in NAMES for e in self.engines]

    def _name(self, base: str, engine: str) -> str:
        return base if engine == self.engines[0] else f"{base}_{engine}"

    def metadata(self, schema: str = "test") -> Metadata:
        """The tables this creates (for generating without a server)."""
        cols = tuple(sorted((Column(n, t, k) for n, t, k in COLUMNS), key=lambda c: c.name))
        tables = [Table(schema, n, cols) for n in self.table_names()] + [
            Table(schema, "DUMMY", (Column("I", "int"),))]
        if self.views is not None:
            tables += [Table(schema, f"view_{n}", cols, True) for n in self.table_names()]
        return Metadata.from_tables(tables, schema)

    def statements(self, prng: Prng) -> Iterator[str]:
        """The statements that create and fill the tables."""
        null = "NOT NULL" if self.notnull else "/*! NULL */"
        vlen = self.varchar_length
        for base, size in zip(NAMES, self.rows):
            for engine in self.engines:
                name = self._name(base, engine)
                auto = f" AUTO_INCREMENT={len(name) * 5}" if len(name) > 1 else ""
                eng = f" ENGINE={engine}" if engine else ""
                yield f"DROP TABLE /*! IF EXISTS */ {name}"
                yield (f"CREATE TABLE {name} (pk INTEGER AUTO_INCREMENT, "
                       f"col_int_nokey INTEGER {null}, col_int_key INTEGER, "
                       f"col_date_key DATE, col_date_nokey DATE {null}, "
                       f"col_time_key TIME, col_time_nokey TIME {null}, "
                       f"col_datetime_key DATETIME, col_datetime_nokey DATETIME {null}, "
                       f"col_varchar_key VARCHAR({vlen}), col_varchar_nokey VARCHAR({vlen}) {null}, "
                       f"PRIMARY KEY (pk), KEY (col_int_key), KEY (col_date_key), "
                       f"KEY (col_time_key), KEY (col_datetime_key), "
                       f"KEY (col_varchar_key, col_int_key)){auto}{eng}")
                if self.views is not None:
                    algo = f"ALGORITHM={self.views} " if self.views else ""
                    yield f"CREATE {algo}VIEW view_{name} AS SELECT * FROM {name}"
                yield from self._rows(name, size, prng)
        yield "DROP TABLE /*! IF EXISTS */ DUMMY"
        yield "CREATE TABLE DUMMY (I INTEGER)"
        yield "INSERT INTO DUMMY VALUES(0)"

    def _rows(self, name: str, size: int, prng: Prng) -> Iterator[str]:
        values: list[str] = []
        nn = self.notnull
        for row in range(1, size + 1):
            pick1, pick2 = prng.int(0, 9), prng.int(0, 9)
            if nn:
                i1 = str(prng.int(0, 255) if pick1 == 8 else prng.digit())
                i2 = str(prng.int(0, 255) if pick1 == 8 else prng.digit())
            else:
                i1 = "NULL" if pick1 == 9 else str(prng.int(0, 255) if pick1 == 8 else prng.digit())
                i2 = "NULL" if pick2 == 9 else str(prng.int(0, 255) if pick1 == 8 else prng.digit())
            date = f"'{prng.date()}'"
            if not nn:
                date = ([date] * 8 + ["NULL", "'1900-01-01'"])[prng.int(0, 9)]
            tm = f"'{prng.time()}'"
            if not nn:
                tm = ([tm] * 8 + ["NULL", "'00:00:00'"])[prng.int(0, 9)]
            dt = f"'{prng.datetime()}'"
            round_dt = f"'{prng.date()} 00:00:00'"
            if nn:
                dt = ([dt] * 7 + [round_dt, round_dt, "'1900-01-01 00:00:00'"])[prng.int(0, 9)]
            else:
                dt = ([dt] * 6 + [round_dt, round_dt, "NULL", "'1900-01-01 00:00:00'"])[prng.int(0, 9)]
            if nn:
                vc = f"'{prng.string(self.varchar_length)}'"
            else:
                vc = "NULL" if prng.int(0, 9) == 9 else f"'{prng.string(self.varchar_length)}'"
            values.append(f"({i1}, {i2}, {date}, {date}, {tm}, {tm}, {dt}, {dt}, {vc}, {vc})")
            if row % BATCH == 0 or row == size:
                yield (f"INSERT /*! IGNORE */ INTO {name} (col_int_key, col_int_nokey, col_date_key, "
                       f"col_date_nokey, col_time_key, col_time_nokey, col_datetime_key, "
                       f"col_datetime_nokey, col_varchar_key, col_varchar_nokey) VALUES "
                       + ",".join(values))
                values = []
