"""Schema versions of the history store and the steps between them.

The version is a row of ``history_meta`` (``schema_version``); a store without that
table is version 0: empty, or the sweeps' results database of before (tables
``kewpie_sweeps`` and ``kewpie_runs`` only), which version 1 keeps and extends.
Each step is a function over Alembic's :class:`~alembic.operations.Operations` (the
portable ALTER TABLE: SQLite's limits included, through its batch mode) and the
connection, run in order from the store's version to :data:`SCHEMA_VERSION`.

Why Alembic's operations without its script directory: kewpie's schema ships inside
the package and is upgraded by whichever kewpie opens a store first (a run, a
``kewpie history`` command), with no ``alembic.ini``, ``env.py`` or command line
to install.  Steps are taken under a lock, so that concurrent first writers upgrade
once: SQLite's write lock (the whole upgrade is one ``BEGIN IMMEDIATE``
transaction: SQLite's DDL is transactional) or a server's ``GET_LOCK``.

A new version: add the column or table to lib/history/schema.py, a step
``_to_N`` below that makes the same change with ``op`` on a store of version N-1,
raise :data:`SCHEMA_VERSION`, and a unit test that upgrades a store of version N-1.
"""
from __future__ import annotations

from typing import Callable

from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import Column, Table, inspect, select
from sqlalchemy.engine import Connection, Engine

from .errors import HistoryError
from .schema import (HISTORY_TABLES, SCHEMA_VERSION, SWEEP_DETAIL_TABLES, SWEEP_TABLES, meta,
                     sweeps)

VERSION_KEY = "schema_version"
LOCK_NAME = "kewpie_history_schema"
LOCK_WAIT = 60

Step = Callable[[Operations, Connection], None]


def _to_1(op: Operations, conn: Connection) -> None:
    """Version 1: the history's tables; the sweeps' tables (made, or the old results
    database's kept) with ``run_id`` and their indexes."""
    tables = set(inspect(conn).get_table_names())
    for table in HISTORY_TABLES:
        if table.name not in tables:
            table.create(conn)
    for table in SWEEP_TABLES:
        if table.name not in tables:
            table.create(conn)
            continue
        have = {c["name"] for c in inspect(conn).get_columns(table.name)}
        if table is sweeps and "run_id" not in have:
            op.add_column(table.name, Column("run_id", sweeps.c.run_id.type))
        _add_indexes(op, conn, table)


def _add_indexes(op: Operations, conn: Connection, table: Table) -> None:
    """Create the table's indexes that the store lacks."""
    indexes = {i["name"] for i in inspect(conn).get_indexes(table.name)}
    for index in table.indexes:
        if index.name not in indexes:
            op.create_index(str(index.name), table.name, [c.name for c in index.columns])


def _to_2(op: Operations, conn: Connection) -> None:
    """Version 2: the sweeps' details tables declared here (made, or kept where the
    sweeps' own SQL of version 1 had made them) with their indexes."""
    tables = set(inspect(conn).get_table_names())
    for table in SWEEP_DETAIL_TABLES:
        if table.name not in tables:
            table.create(conn)
        else:
            _add_indexes(op, conn, table)


MIGRATIONS: tuple[tuple[int, str, Step], ...] = (
    (1, "the history's tables; the sweeps' tables gain run_id", _to_1),
    (2, "the sweeps' details tables", _to_2),
)


def current_version(conn: Connection) -> int:
    """The store's schema version (0: no history tables yet)."""
    if not inspect(conn).has_table(meta.name):
        return 0
    value = conn.execute(select(meta.c.value).where(meta.c.name == VERSION_KEY)).scalar()
    return int(value) if value is not None else 0


def _set_version(conn: Connection, version: int) -> None:
    conn.execute(meta.delete().where(meta.c.name == VERSION_KEY))
    conn.execute(meta.insert().values(name=VERSION_KEY, value=str(version)))


def _steps(conn: Connection) -> int:
    """Take every step from the store's version; returns the version reached."""
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise HistoryError(f"the store's schema version {version} is newer than this "
                           f"kewpie's ({SCHEMA_VERSION}): use a newer kewpie with it")
    op = Operations(MigrationContext.configure(conn))
    for target, _, step in MIGRATIONS:
        if version < target:
            step(op, conn)
            _set_version(conn, target)
            version = target
    return version


def upgrade(engine: Engine) -> int:
    """Bring the store to :data:`SCHEMA_VERSION` (nothing to do: one query); returns it."""
    with engine.connect() as conn:
        if current_version(conn) == SCHEMA_VERSION:
            return SCHEMA_VERSION
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            conn.execution_options(immediate=True)  # BEGIN IMMEDIATE (lib/history/store.py)
            with conn.begin():
                return _steps(conn)
    with engine.connect() as conn:  # a server: DDL commits by itself; GET_LOCK serializes
        got = conn.exec_driver_sql(f"SELECT GET_LOCK('{LOCK_NAME}', {LOCK_WAIT})").scalar()
        if got != 1:
            raise HistoryError(f"could not lock the store's schema within {LOCK_WAIT} s "
                               f"(another kewpie is upgrading it?)")
        try:
            version = _steps(conn)
            conn.commit()
            return version
        finally:
            conn.exec_driver_sql(f"SELECT RELEASE_LOCK('{LOCK_NAME}')")
