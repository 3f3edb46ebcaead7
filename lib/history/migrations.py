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

A step may also rewrite rows: version 2 scrubs the passwords older kewpies stored
(a ``--history-dsn``'s in a run's options, a ``--mysqld=--wsrep-sst-auth=...``) with
the redaction every write now goes through (lib/platform/secrets.py); on SQLite, when it
rewrites rows, with ``secure_delete`` on and the log checkpointed and truncated after
(best effort, without waiting for other writers), so that the file keeps no copy.  A
store made just now takes the same steps with nothing to rewrite: no pragma, no
checkpoint.  Version 3 declares the sweeps' details tables with the others (the sweeps
of before had made them with SQL of their own: kept, with their rows).

A new version: add the column or table to lib/history/schema.py, a step
``_to_N`` below that makes the same change with ``op`` on a store of version N-1,
raise :data:`SCHEMA_VERSION`, and a unit test that upgrades a store of version N-1.
"""
from __future__ import annotations

import json
import sqlite3
from typing import Any, Callable

from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import Column, ColumnElement, Table, inspect, or_, select
from sqlalchemy.engine import Connection, Engine

from ..platform.secrets import redact, redact_text, secret_like_patterns
from .errors import HistoryError
from .schema import (HISTORY_TABLES, SCHEMA_VERSION, SWEEP_DETAIL_TABLES, SWEEP_TABLES, meta,
                     results, runs, sweeps)

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


SCRUB_BATCH = 1000
SCRUBBED_KEY = "kewpie_scrubbed_rows"  # in the connection's info: rows version 2 rewrote
SECURE_KEY = "kewpie_secure_delete"    # and whether it turned SQLite's secure_delete on
# What version 2 scrubs: (table, its text columns, those of them that hold JSON).
SCRUBBED = (
    (runs, ("options", "labels", "trees", "selection", "build_url", "tree_path"),
     ("options", "labels", "trees")),
    (results, ("failure", "evidence"), ()),
    (sweeps, ("spec", "context"), ("spec", "context")),
)


def scrubbed(text: str, is_json: bool) -> str:
    """text with its secrets as ``***``: JSON walked (its structure kept), other text
    as free text."""
    if is_json:
        try:
            data = json.loads(text)
        except ValueError:
            return redact_text(text)
        clean = redact(data)
        return text if clean == data else json.dumps(clean, default=str)
    return redact_text(text)


def _scrub(conn: Connection, table: Table, columns: tuple[str, ...],
           json_columns: tuple[str, ...]) -> int:
    """Rewrite the rows of table whose columns hold a secret, in batches by id (only
    rows that may hold one are read: a LIKE per secret word); how many changed."""
    key = table.c.id
    maybe: ColumnElement[bool] = or_(*(table.c[c].like(p) for c in columns
                                       for p in secret_like_patterns()))
    changed, last = 0, 0
    while True:
        rows = conn.execute(select(key, *(table.c[c] for c in columns))
                            .where(key > last, maybe).order_by(key).limit(SCRUB_BATCH)).all()
        if not rows:
            return changed
        for row in rows:
            values: dict[str, str] = {}
            for name, text in zip(columns, row[1:]):
                clean = scrubbed(text, name in json_columns) if text else text
                if clean != text:
                    values[name] = clean
            if values:
                _secure_delete(conn)
                conn.execute(table.update().where(key == row[0]).values(values))
                changed += 1
        last = int(rows[-1][0])


def _secure_delete(conn: Connection) -> None:
    """On SQLite, before the first row a scrub rewrites: the bytes a change frees are
    zeroed (``secure_delete``, for this connection until :func:`upgrade` turns it off)."""
    if conn.dialect.name == "sqlite" and not conn.info.get(SECURE_KEY):
        conn.exec_driver_sql("PRAGMA secure_delete=ON")
        conn.info[SECURE_KEY] = True


def _to_2(op: Operations, conn: Connection) -> None:
    """Version 2: no passwords in what older kewpies recorded -- a run's options, labels
    and texts, a result's failure and evidence, a sweep's spec and context -- each
    secret replaced by ``***`` (no change to the tables)."""
    tables = set(inspect(conn).get_table_names())
    for table, columns, json_columns in SCRUBBED:
        if table.name in tables and conn.execute(select(table.c.id).limit(1)).first():
            conn.info[SCRUBBED_KEY] = conn.info.get(SCRUBBED_KEY, 0) + \
                _scrub(conn, table, columns, json_columns)


def _to_3(op: Operations, conn: Connection) -> None:
    """Version 3: the sweeps' details tables declared here (made, or kept where the
    sweeps' own SQL of versions 1 and 2 had made them) with their indexes."""
    tables = set(inspect(conn).get_table_names())
    for table in SWEEP_DETAIL_TABLES:
        if table.name not in tables:
            table.create(conn)
        else:
            _add_indexes(op, conn, table)


MIGRATIONS: tuple[tuple[int, str, Step], ...] = (
    (1, "the history's tables; the sweeps' tables gain run_id", _to_1),
    (2, "passwords scrubbed from the runs, results and sweeps recorded", _to_2),
    (3, "the sweeps' details tables", _to_3),
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


def _pragma(conn: Connection, pragma: str) -> list[Any]:
    """A SQLite PRAGMA on conn's own connection, outside any transaction: its answer,
    read whole and its statement closed (an open one would hold a read snapshot in the
    pool); [] when the database is busy (a checkpoint others keep busy: a later one
    does it)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    cursor = raw.cursor()
    try:
        cursor.execute(f"PRAGMA {pragma}")
        return list(cursor.fetchall())
    except sqlite3.OperationalError:
        return []
    finally:
        cursor.close()


def _truncate_log(conn: Connection) -> None:
    """Checkpoint a SQLite store's log and truncate it, so that no page it held before a
    scrub stays in the file: best effort, without waiting (writers that keep it busy
    leave it to a later checkpoint)."""
    busy = _pragma(conn, "busy_timeout")
    _pragma(conn, "busy_timeout=0")
    try:
        _pragma(conn, "wal_checkpoint(TRUNCATE)")
    finally:
        if busy:
            _pragma(conn, f"busy_timeout={int(busy[0][0])}")


def upgrade(engine: Engine) -> int:
    """Bring the store to :data:`SCHEMA_VERSION` (nothing to do: one query); returns it."""
    with engine.connect() as conn:
        if current_version(conn) == SCHEMA_VERSION:
            return SCHEMA_VERSION
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            try:
                conn.execution_options(immediate=True)  # BEGIN IMMEDIATE (lib/history/store.py)
                with conn.begin():
                    version = _steps(conn)
                if conn.info.pop(SCRUBBED_KEY, 0):
                    _truncate_log(conn)
            finally:
                if conn.info.pop(SECURE_KEY, False):
                    _pragma(conn, "secure_delete=OFF")
            return version
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
