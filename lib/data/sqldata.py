"""Deterministic test data made with plain SQL: known tables with an exact row count.

``create_tables(server, "shop", tables=4, rows=500, engines=("InnoDB", "MyISAM"))``
creates ``shop.t1..t4`` with a mix of column types, filled from MariaDB's
``seq_1_to_N`` sequence tables, so the same call always gives the same data.
``change_rows`` then inserts, updates and deletes a deterministic set of rows,
marked with a tag, to tell states apart (e.g. before and after an incremental
backup).  For randgen's data sets (``.zz`` files, the simple data set) use
``KewpieTestCase.randgen`` (docs/randgen.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from ..servers.server import Server

TABLE_DDL = (
    "CREATE TABLE `{schema}`.`{table}` ("
    " pk INT NOT NULL PRIMARY KEY,"
    " col_int INT NOT NULL,"
    " col_char VARCHAR(32) NOT NULL,"
    " col_text TEXT,"
    " col_dec DECIMAL(10,2),"
    " col_date DATE,"
    " KEY (col_int)"
    ") ENGINE={engine}")
FILL = ("INSERT INTO `{schema}`.`{table}` "
        "SELECT seq, (seq * 7919) % 1000, CONCAT('row-', seq, '-{table}'), "
        "REPEAT(CHAR(65 + seq % 26), seq % 300), seq / 3, DATE '2020-01-01' + INTERVAL seq DAY "
        "FROM `{schema}`.seq_1_to_{rows}")


def create_tables(server: Server, schema: str, tables: int = 3, rows: int = 100,
                  engines: Sequence[str] = ("InnoDB",), prefix: str = "t") -> list[str]:
    """Create schema (if missing) and tables prefix1..prefixN, engines used in turn."""
    server.execute(f"CREATE DATABASE IF NOT EXISTS `{schema}`")
    names = []
    for i in range(1, tables + 1):
        table = f"{prefix}{i}"
        engine = engines[(i - 1) % len(engines)]
        server.execute(TABLE_DDL.format(schema=schema, table=table, engine=engine))
        if rows:
            server.execute(FILL.format(schema=schema, table=table, rows=rows))
        names.append(table)
    return names


def change_rows(server: Server, schema: str, table: str, tag: str, count: int = 50) -> None:
    """Insert count new rows tagged with tag, update some old ones, delete a few."""
    top = server.execute(f"SELECT COALESCE(MAX(pk), 0) FROM `{schema}`.`{table}`")[0][0]
    server.execute(f"INSERT INTO `{schema}`.`{table}` (pk, col_int, col_char, col_text, col_dec, "
                   f"col_date) SELECT {top} + seq, seq, CONCAT(%s, '-', seq), %s, seq, "
                   f"DATE '2024-01-01' FROM `{schema}`.seq_1_to_{count}", (tag, tag))
    server.execute(f"UPDATE `{schema}`.`{table}` SET col_char = CONCAT(%s, '-updated') "
                   f"WHERE MOD(pk, 10) = 3", (tag,))
    server.execute(f"DELETE FROM `{schema}`.`{table}` WHERE MOD(pk, 97) = 0")
