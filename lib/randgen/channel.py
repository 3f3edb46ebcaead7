"""The connection a randgen thread runs its generated statements on.

A plain run only needs each statement's outcome (ok, or an error code), never
its rows, so the hot path asks little of the client library: send, read every
result set, keep nothing.  Two drivers give that:

- :class:`CChannel` over mysqlclient (``MySQLdb``, libmariadb in C): rows are
  read into the C library and freed without becoming Python objects; about
  half the client CPU of PyMySQL per statement;
- :class:`PyChannel` over PyMySQL, when mysqlclient is not installed, and for
  runs whose validators compare result sets (they read rows from its cursor).

Both raise :class:`StatementError` with the server's (or client's) error code,
and say whether the connection is lost.
"""
from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import pymysql
import pymysql.cursors

if TYPE_CHECKING:  # mysqlclient is optional: imported when a channel is opened
    from MySQLdb.connections import Connection as CConnection

from .connection import LOST_CONNECTION_CODES, ConnectionSpec, error_message
from .errors import RandgenEnvironmentError
from ..servers.sql import error_code

COMMANDS_OUT_OF_SYNC = 2014


class StatementError(Exception):
    """A statement failed: its error code and message; ``lost`` when the connection is gone."""

    def __init__(self, code: int, message: str, lost: bool) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.lost = lost


class Channel(Protocol):
    """What a randgen thread needs of its connection."""

    driver: str

    def run(self, sql: str) -> tuple[int | None, int]:
        """Run one statement and drain its results (StatementError when it fails); the
        rows its result sets returned (None: no result set) and the affected-rows count."""

    def value(self, sql: str) -> Any:
        """The first column of the first row of a query (None for no row)."""

    def thread_id(self) -> int:
        """The server's connection id (for KILL QUERY and the Deadlock reporter)."""

    def cursor(self) -> pymysql.cursors.Cursor:
        """A PyMySQL cursor, for validators; only :class:`PyChannel` has one."""

    def close(self) -> None:
        """Close the connection, even a broken one, without raising."""


def _statement_error(exc: BaseException, interface_error: type[BaseException]) -> StatementError:
    """A driver's error as a StatementError: its code, text, and whether the connection is lost."""
    code = error_code(exc)
    lost = code in LOST_CONNECTION_CODES or code == COMMANDS_OUT_OF_SYNC \
        or isinstance(exc, interface_error)
    return StatementError(code, error_message(exc), lost)


class PyChannel:
    """A channel over a PyMySQL connection."""

    driver = "PyMySQL"

    def __init__(self, conn: pymysql.connections.Connection) -> None:
        self._conn = conn
        self._cur = conn.cursor()

    def run(self, sql: str) -> tuple[int | None, int]:
        """Run one statement and drain its results (StatementError when it fails); the
        rows its result sets returned (None: no result set) and the affected-rows count."""
        cur = self._cur
        rows: int | None = None
        try:
            affected = cur.execute(sql)
            if cur.description:
                rows = len(cur.fetchall())
            while cur.nextset():
                if cur.description:
                    rows = (rows or 0) + len(cur.fetchall())
        except pymysql.MySQLError as exc:
            raise _statement_error(exc, pymysql.err.InterfaceError) from exc
        return rows, int(affected or 0)

    def value(self, sql: str) -> Any:
        """The first column of the first row of a query (None for no row)."""
        self._cur.execute(sql)
        row = self._cur.fetchone()
        while self._cur.nextset():
            pass
        return row[0] if row else None

    def thread_id(self) -> int:
        """The server's connection id."""
        return int(self._conn.thread_id())

    def cursor(self) -> pymysql.cursors.Cursor:
        """The channel's PyMySQL cursor (validators read result sets from it)."""
        return self._cur

    def close(self) -> None:
        """Close the connection without raising."""
        try:
            self._conn.close()
        except pymysql.MySQLError:
            pass


class CChannel:
    """A channel over a mysqlclient (``MySQLdb``) connection."""

    driver = "mysqlclient"

    def __init__(self, conn: CConnection, mysqldb: ModuleType) -> None:
        self._conn = conn
        self._errors: type[Exception] = mysqldb.MySQLError
        self._interface_error: type[Exception] = mysqldb.InterfaceError

    def run(self, sql: str) -> tuple[int | None, int]:
        """Run one statement and drain its results (StatementError when it fails); the
        rows its result sets returned (None: no result set) and the affected-rows count."""
        conn = self._conn
        rows: int | None = None
        try:
            conn.query(sql.encode("utf8", "surrogateescape"))
            # rows stay in libmariadb and are freed with the result
            result = conn.store_result()
            if result is not None:
                rows = result.num_rows()
            affected = conn.affected_rows()
            while conn.next_result() == 0:
                result = conn.store_result()
                if result is not None:
                    rows = (rows or 0) + result.num_rows()
        except self._errors as exc:
            raise self._error(exc) from None
        return rows, int(affected) if affected is not None and 0 <= affected < 1 << 62 else 0

    def _error(self, exc: Exception) -> StatementError:
        """A mysqlclient error as a StatementError, its message read from the connection.

        mysqlclient (2.3) builds an error's ``args[1]`` with PyUnicode_FromString: a
        message that is not UTF-8 -- the server sends messages in
        ``character_set_results``, so after ``SET NAMES latin1`` a table named ``tä``
        is one byte in "Table 'test.tä' doesn't exist" -- leaves a NULL in the tuple,
        and reading it crashes the interpreter (a replayed mysql-test corpus did, in 2
        of 4 trials).  ``exc.args[1]`` is never read: the connection's ``error()``
        raises a UnicodeDecodeError instead, whose bytes are decoded with replacement."""
        code = error_code(exc)
        try:
            message = str(self._conn.error())
        except UnicodeDecodeError as bad:
            message = bytes(bad.object).decode("utf-8", "replace")
        except Exception:  # noqa: BLE001 - a closed connection: no message to read
            message = ""
        lost = code in LOST_CONNECTION_CODES or code == COMMANDS_OUT_OF_SYNC \
            or isinstance(exc, self._interface_error)
        return StatementError(code, message or f"error {code}", lost)

    def value(self, sql: str) -> Any:
        """The first column of the first row of a query (None for no row)."""
        self._conn.query(sql.encode("utf8", "surrogateescape"))
        result = self._conn.store_result()
        rows = result.fetch_row(1) if result is not None else ()
        while self._conn.next_result() == 0:
            self._conn.store_result()
        return rows[0][0] if rows else None

    def thread_id(self) -> int:
        """The server's connection id."""
        return int(self._conn.thread_id())

    def cursor(self) -> pymysql.cursors.Cursor:
        """No PyMySQL cursor here: runs with validators use :class:`PyChannel`."""
        raise TypeError("a mysqlclient channel has no PyMySQL cursor; open it with rows=True")

    def close(self) -> None:
        """Close the connection without raising."""
        try:
            self._conn.close()
        except Exception:  # noqa: BLE001 - a broken connection may raise anything on close
            pass


def load_mysqlclient() -> ModuleType | None:
    """The ``MySQLdb`` module, or None when mysqlclient is not installed."""
    try:
        import MySQLdb
    except ImportError:
        return None
    return MySQLdb


def open_channel(spec: ConnectionSpec, rows: bool = False,
                 connect_timeout: float = 10) -> Channel:
    """A new autocommit channel to ``spec`` (RandgenEnvironmentError when it fails).

    ``rows=True`` (validators read result sets) always gives a PyMySQL channel;
    otherwise mysqlclient's when it is installed.
    """
    mysqldb = None if rows else load_mysqlclient()
    if mysqldb is None:
        return PyChannel(spec.connect(connect_timeout=connect_timeout))
    params: dict[str, Any] = dict(user=spec.user, password=spec.password,
                                  database=spec.database, autocommit=True, charset="utf8mb4",
                                  connect_timeout=int(max(1, connect_timeout)),
                                  multi_statements=False)  # as PyMySQL: one statement a query
    if spec.unix_socket:
        params["unix_socket"] = spec.unix_socket
    else:  # libmariadb reads "localhost" as its default socket: PyMySQL's TCP instead
        params["host"] = "127.0.0.1" if spec.host == "localhost" else spec.host
        params["port"] = spec.port
    try:
        return CChannel(mysqldb.connect(**params), mysqldb)
    except mysqldb.MySQLError as exc:
        raise RandgenEnvironmentError(f"cannot connect to {spec.describe()}: {exc}") from exc

