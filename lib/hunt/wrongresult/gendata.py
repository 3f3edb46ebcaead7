"""A ``.zz`` file's tables, built in one schema over a connection (benchmarks, tests).

:func:`load_gendata` runs randgen's gendata statements
(:class:`~lib.randgen.gendata.GendataPlan`) for a specification in a schema
of its own, with the rows of every table capped, and returns what the
oracles need (the session's ``autocommit`` and ``sql_mode``, which gendata
changes, are restored): the tables as read back from ``information_schema``
(:func:`~lib.randgen.metadata.load_metadata`, so only the tables the server
really created: a stock file naming an engine this server lacks loses those
tables) and the count of statements that failed.
"""
from __future__ import annotations

from dataclasses import dataclass

import pymysql

from ...randgen.builtins import Prng
from ...randgen.gendata import GendataOptions, GendataPlan, read_spec
from ...randgen.metadata import Metadata, load_metadata
from .execute import run_query
from .schema import quote_name


@dataclass(frozen=True)
class GendataLoad:
    """The outcome of one load: the schema's tables, statements run, statements failed."""

    metadata: Metadata
    statements: int
    errors: int


def load_gendata(conn: pymysql.connections.Connection, zz_path: str, schema: str,
                 seed: int = 1, max_rows: int | None = 100) -> GendataLoad:
    """Drop and rebuild schema with the tables of zz_path (rows capped at max_rows).

    A specification that names its own schemas (``$schemas``) is built in
    schema regardless: one load, one schema.
    """
    spec = read_spec(zz_path)
    spec.schemas = None
    plan = GendataPlan(spec, GendataOptions(max_rows=max_rows), schema)
    saved = run_query(conn, "SELECT @@SESSION.autocommit, @@SESSION.sql_mode").rows or ((1, ""),)
    run_query(conn, f"DROP SCHEMA IF EXISTS {quote_name(schema)}")
    statements = errors = 0
    for sql in plan.statements(Prng(seed)):
        statements += 1
        if run_query(conn, sql).failed:
            errors += 1
    run_query(conn, "COMMIT")
    autocommit, sql_mode = saved[0]
    run_query(conn, f"SET SESSION autocommit = {int(autocommit)}")
    run_query(conn, "SET SESSION sql_mode = '" + str(sql_mode).replace("'", "''") + "'")
    full = load_metadata(conn, schema)
    only = Metadata(schema, {schema: full.tables_by_schema.get(schema, ())})
    return GendataLoad(only, statements, errors)
