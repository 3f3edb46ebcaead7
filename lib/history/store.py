"""Where the history lives and how to reach it: a SQLite file (the default,
``WORKDIR/history.sqlite``, or ``--history PATH``) or a MariaDB/MySQL server
(``--history-dsn mysql://user:password@host:port/database``), both through one
SQLAlchemy engine.

SQLite runs in WAL mode with ``synchronous=NORMAL`` (a commit is a write to the log,
no fsync: about 0.1 ms) and a busy timeout, and a writer's transactions (and any
connection's with the execution option ``immediate``) start with ``BEGIN IMMEDIATE``,
so that concurrent writers (parallel runs, pytest-xdist workers)
queue for the write lock instead of failing; readers never wait for writers.  On a
server, a missing database is created; the connection times out after
``CONNECT_TIMEOUT`` seconds, so that a store that is down costs a run one warning,
not a hang.
"""
from __future__ import annotations

import os
import sqlite3
import time
from typing import Any
from urllib.parse import quote, unquote, urlparse

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import SQLAlchemyError

from .errors import HistoryError
from .migrations import upgrade
from .target import StoreTarget

CONNECT_TIMEOUT = 5
IO_TIMEOUT = 60
BUSY_TIMEOUT = 60.0
WAL_RETRY = 0.01                # seconds between tries of the switch to WAL mode
READER_CACHE_KIB = 65536        # a reader's SQLite page cache (64 MiB)
READER_MMAP_BYTES = 1 << 30     # and how much of the file it maps (1 GiB)
UNKNOWN_DATABASE = 1049


def _server_url(dsn: str, with_database: bool = True) -> Any:
    """The SQLAlchemy URL of a mysql:// DSN, through mysqlclient (utf8mb4)."""
    url = urlparse(dsn)
    user = quote(unquote(url.username or "root"), safe="")
    password = quote(unquote(url.password or ""), safe="")
    auth = f"{user}:{password}@" if password else f"{user}@"
    database = url.path.strip("/") if with_database else ""
    return make_url(f"mysql+mysqldb://{auth}{url.hostname}:{url.port or 3306}/{database}"
                    f"?charset=utf8mb4")


def _sqlite_engine(path: str, writer: bool) -> Engine:
    """A SQLite engine over path: WAL, NORMAL sync, busy timeout; a writer's transactions
    take the write lock at BEGIN (IMMEDIATE); a reader has a larger page cache and maps
    the file."""
    engine = create_engine(f"sqlite:///{path}",
                           connect_args={"timeout": BUSY_TIMEOUT, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we say BEGIN ourselves (below)
        cursor = dbapi_connection.cursor()
        _wal_mode(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
        if not writer:  # searches read scattered rows: keep their pages, map the file
            cursor.execute(f"PRAGMA cache_size=-{READER_CACHE_KIB}")
            cursor.execute(f"PRAGMA mmap_size={READER_MMAP_BYTES}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = writer or connection.get_execution_options().get("immediate", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _wal_mode(cursor: Any) -> None:
    """``PRAGMA journal_mode=WAL``, waiting (up to BUSY_TIMEOUT) while another connection
    holds the file: on a store made just now the switch needs an exclusive lock and
    SQLite asks no busy handler for it, so concurrent first writers (pytest-xdist's
    workers, parallel runs) got "database is locked" at once now and then."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.fetchall()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(WAL_RETRY)


def _create_database(dsn: str) -> None:
    """CREATE DATABASE IF NOT EXISTS for the DSN's database (utf8mb4)."""
    name = urlparse(dsn).path.strip("/")
    engine = create_engine(_server_url(dsn, with_database=False),
                           connect_args={"connect_timeout": CONNECT_TIMEOUT})
    try:
        with engine.begin() as conn:
            quoted = name.replace("`", "``")
            conn.execute(text(f"CREATE DATABASE IF NOT EXISTS `{quoted}` CHARACTER SET utf8mb4"))
    finally:
        engine.dispose()


def _server_engine(dsn: str) -> Engine:
    return create_engine(_server_url(dsn), pool_pre_ping=True, pool_recycle=3600,
                         connect_args={"connect_timeout": CONNECT_TIMEOUT,
                                       "read_timeout": IO_TIMEOUT, "write_timeout": IO_TIMEOUT})


def _error_code(exc: SQLAlchemyError) -> int | None:
    orig = getattr(exc, "orig", None)
    args = getattr(orig, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def open_engine(target: StoreTarget, writer: bool = False, create: bool = False) -> Engine:
    """An engine over the store with its schema current (migrated when older).

    create: make the SQLite file (and its folder) or the server's database when
    missing; without it a store that does not exist is a HistoryError.  Any failure
    to reach or upgrade the store is a HistoryError naming it.
    """
    if not target.is_server:
        if not create and not target.exists():
            raise HistoryError(f"no history store at {target.sqlite_path} (no run has written "
                               f"one there); give --history PATH, --history-dsn DSN or the "
                               f"runs' --workdir")
        if create:
            os.makedirs(os.path.dirname(target.sqlite_path), exist_ok=True)
        engine = _sqlite_engine(target.sqlite_path, writer)
    else:
        engine = _server_engine(target.dsn)
    try:
        try:
            upgrade(engine)
        except SQLAlchemyError as exc:
            if not (target.is_server and create and _error_code(exc) == UNKNOWN_DATABASE):
                raise
            engine.dispose()
            _create_database(target.dsn)
            engine = _server_engine(target.dsn)
            upgrade(engine)
    except (SQLAlchemyError, OSError) as exc:
        engine.dispose()
        raise HistoryError(f"history store {target.display}: {describe_error(exc)}") from None
    return engine


def describe_error(exc: BaseException) -> str:
    """One line for a database error (the driver's message, not SQLAlchemy's essay)."""
    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).splitlines() or [""])[0]
    return f"{type(orig).__name__}: {first}"[:300]
