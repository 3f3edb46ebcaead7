"""kewpie 2012's ``lib.util.database_connect``: the benchmark suites' results database.

A results database is named by a DSN string in 2012's form,
``host:user:password:database:port`` (the password may be empty:
``127.0.0.1:root::results:3306``).

- ``results_db_connect(dsn_string, "select", query)`` runs query and gives the
  first row's figures as 2012 did: columns 1 to 7 as ``tps``,
  ``min_req_lat_ms``, ``max_req_lat_ms``, ``avg_req_lat_ms``,
  ``95p_req_lat_ms``, ``rwreqps``, ``deadlocksps`` (all 0.0 when there is no
  row: a concurrency and iteration not recorded yet);
- ``results_db_connect(dsn_string, "insert" or "delete", query)`` runs it and
  commits (None).

:class:`Dsn` parses the string and connects (also for
:func:`lib.kewpie2012.sysbench_methods.sysbench_db_analysis`).  Connection and
query errors of ``results_db_connect`` are raised, as 2012's were.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pymysql

FIGURES = ("tps", "min_req_lat_ms", "max_req_lat_ms", "avg_req_lat_ms", "95p_req_lat_ms",
           "rwreqps", "deadlocksps")
OPERATIONS = ("select", "insert", "delete")


@dataclass(frozen=True)
class Dsn:
    """The parts of a ``host:user:password:database:port`` string."""

    host: str
    user: str
    password: str
    database: str
    port: int

    @classmethod
    def parse(cls, dsn_string: str) -> "Dsn":
        """The parts of dsn_string (a password may hold ':'); ValueError naming the form."""
        parts = str(dsn_string).split(":")
        if len(parts) < 5 or not parts[-1].isdigit():
            raise ValueError(f"results database DSN {dsn_string!r} is not "
                             f"host:user:password:database:port")
        return cls(parts[0], parts[1], ":".join(parts[2:-2]), parts[-2], int(parts[-1]))

    def connect(self) -> pymysql.Connection:
        """A connection to the results database."""
        return pymysql.connect(host=self.host, user=self.user, password=self.password,
                               database=self.database, port=self.port, connect_timeout=10)


def results_db_fetch(cursor: Any, query: str) -> dict[str, float]:
    """The figures of the first row query gives (columns 1-7); TypeError when none."""
    cursor.execute(query)
    row = cursor.fetchone()
    return {name: row[i + 1] for i, name in enumerate(FIGURES)}


def results_db_connect(dsn_string: str, operation: str, query: str) -> dict[str, float] | None:
    """Run query on the results database (see the module docstring)."""
    if operation not in OPERATIONS:
        raise ValueError(f"results_db_connect: operation {operation!r} is not one of "
                         f"{', '.join(OPERATIONS)}")
    conn = Dsn.parse(dsn_string).connect()
    try:
        with conn.cursor() as cursor:
            if operation == "select":
                try:
                    return results_db_fetch(cursor, query)
                except TypeError:  # no row yet
                    return {name: 0.0 for name in FIGURES}
            cursor.execute(query)
        conn.commit()
        return None
    finally:
        conn.close()


def error_text(exc: pymysql.MySQLError) -> str:
    """2012's error text: ``Error N: message``."""
    if len(exc.args) >= 2:
        return f"Error {exc.args[0]}: {exc.args[1]}"
    return f"Error: {exc}"
