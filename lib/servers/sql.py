"""SQL access to one server as root: new connections, and one kept for ``execute``.

The kept connection is checked (``ping``) before each use and dropped on a
lost-connection error, so a restarted server gets a fresh one.  Errors become
:class:`~lib.errors.QueryError` carrying the code, the statement and the
server's name; a statement against a server that is not running raises
:class:`~lib.errors.ServerDiedError` with the error log's tail.
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import pymysql

from ..errors import QueryError, ServerDiedError
from ..platform.logsetup import get_logger
from .layout import HOST

# the client's errors of a connection that is gone (or never came): can't connect through
# the socket (2002) or TCP (2003), server has gone away (2006), lost connection during a
# query (2013) or with a system error (2055) -- the one list every layer above reads
LOST_CONNECTION_CODES = frozenset({2002, 2003, 2006, 2013, 2055})
PROBE_TIMEOUT = 10  # seconds a readiness or health probe waits for the handshake and answer


def handshake_wait(deadline: float) -> float:
    """How long a starting server's readiness probe waits for its handshake: until the
    start's deadline (a time.monotonic() value), PROBE_TIMEOUT at least.

    mariadbd makes its socket before it takes connections (it listens, then reads its
    grant tables and more: seconds under valgrind or load); a connection made meanwhile
    waits in the socket's queue, and a probe that gave up on it would make the server log
    ``Aborted connection ... closed normally without authentication`` when it takes it
    -- a warning the warnings check rightly fails.  Waiting until the deadline costs
    nothing: the server answers as soon as it takes connections, a server that dies
    closes the socket at once, and at the deadline the start has failed anyway."""
    return max(PROBE_TIMEOUT, deadline - time.monotonic())


def error_code(exc: BaseException) -> int:
    """The MySQL error number of a client library's error (PyMySQL's or mysqlclient's), 0
    when it carries none -- an OSError's errno is no MySQL error number."""
    if isinstance(exc, OSError):
        return 0
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else 0


class SqlClient:
    """Root's SQL access to the server listening on socket_file and port."""

    def __init__(self, name: str, socket_file: str, port: int,
                 alive: Callable[[], bool], log_tail: Callable[[], str]) -> None:
        self.name = name
        self.socket_file = socket_file
        self.port = port
        self._alive = alive
        self._log_tail = log_tail
        self._conn: pymysql.connections.Connection | None = None
        self.charset = ""   # the connections' character set ('' = PyMySQL's, utf8mb4)
        # session settings under which a statement changes this server only (the reuse
        # rule empties `test` so): no binlog event (Galera: no write set either)
        self.unreplicated_session: tuple[str, ...] = ("SET SESSION sql_log_bin = 0",)
        # False: kewpie's own reads close their connection after them (a mysql-test
        # case's servers: tests never see one of kewpie's in their process list)
        self.keep = True
        self.probe_failures: set[str] = set()  # distinct probe failures already logged

    def connect(self, db: str | None = None, autocommit: bool = True,
                **kwargs: Any) -> pymysql.Connection:
        """A new connection through the unix socket (kwargs override, e.g. read_timeout).

        Over the socket TLS is off unless an ``ssl*`` argument is given: PyMySQL's
        default (TLS when the server offers it) builds an SSL context per connection,
        ~35 ms of loading the system's CA certificates, and TLS over a local socket
        protects nothing.  TCP connections keep PyMySQL's default."""
        params: dict[str, Any] = dict(unix_socket=self.socket_file, user="root", password="",
                                      database=db, autocommit=autocommit, connect_timeout=10)
        if self.charset:
            params["charset"] = self.charset
        params.update(kwargs)
        if params.get("unix_socket") and not any(k.startswith("ssl") for k in kwargs):
            params["ssl_disabled"] = True
        import pymysql  # ~15 ms of imports (ssl): at the first connection, during a boot
        return pymysql.connect(**params)

    def connect_tcp(self, db: str | None = None, **kwargs: Any) -> pymysql.Connection:
        """A new connection over TCP to 127.0.0.1:port."""
        return self.connect(db=db, unix_socket=None, host=HOST, port=self.port, **kwargs)

    def ping(self, timeout: float = PROBE_TIMEOUT) -> bool:
        """True when the server answers ``SELECT 1`` on a new connection right now.

        The handshake and the answer may take timeout seconds (PROBE_TIMEOUT at least): a
        loaded server answers late, and a probe that gave up mid-handshake would make it
        log an aborted unauthenticated connection (the warnings check counts those); a
        starting server's readiness probe waits up to its start's deadline
        (:func:`handshake_wait`)."""
        if not os.path.exists(self.socket_file):
            return False
        import pymysql
        timeout = max(timeout, PROBE_TIMEOUT)
        try:
            conn = self.connect(connect_timeout=timeout, read_timeout=timeout)
        except pymysql.MySQLError as exc:
            self._probe_failed("connect", exc)
            return False
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT 1")
                return cur.fetchone() == (1,)
        except pymysql.MySQLError as exc:
            self._probe_failed("SELECT 1", exc)
            return False
        finally:
            conn.close()

    def _probe_failed(self, step: str, exc: Exception) -> None:
        """Log (debug) each distinct reason a probe failed, once per client: a kept
        failed run's log then says what a server saw of kewpie's probes."""
        reason = f"{step}: {exc}"
        if reason not in self.probe_failures:
            self.probe_failures.add(reason)
            get_logger().debug("%s: probe failed at %s", self.name, reason)

    def shutdown(self, timeout: float) -> bool:
        """Send ``SHUTDOWN``; False when the server does not take SQL (e.g. a joiner
        waiting for its state transfer)."""
        import pymysql
        try:
            conn = self.connect(connect_timeout=2, read_timeout=timeout)
            with conn.cursor() as cur:
                cur.execute("SHUTDOWN")
            conn.close()
            return True
        except pymysql.MySQLError:
            return False

    def close(self) -> None:
        """Drop the kept connection (a stop or a start invalidates it)."""
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
            self._conn = None

    def _connection(self) -> pymysql.Connection:
        import pymysql
        if self._conn is not None:
            try:
                self._conn.ping(reconnect=False)
                return self._conn
            except pymysql.MySQLError:
                self.close()
        if not self._alive():
            raise ServerDiedError(f"server {self.name} is not running", self._log_tail())
        self._conn = self.connect()
        return self._conn

    def execute(self, sql: str, args: Any = None, db: str | None = None) -> list[tuple[Any, ...]]:
        """Run one statement (autocommit) on the kept connection and return its rows."""
        import pymysql
        try:
            conn = self._connection()
            if db:
                conn.select_db(db)
            with conn.cursor() as cur:
                cur.execute(sql, args)
                return list(cur.fetchall()) if cur.description else []
        except pymysql.MySQLError as exc:
            code = error_code(exc)
            message = exc.args[1] if len(exc.args) > 1 else str(exc)
            if code in LOST_CONNECTION_CODES:
                self.close()
            raise QueryError(code, message, sql, self.name) from exc

    def query_dicts(self, sql: str, args: Any = None) -> list[dict[str, Any]]:
        """Run a statement and return its rows as dicts keyed by column name."""
        import pymysql
        conn = self._connection()
        try:
            with conn.cursor(pymysql.cursors.DictCursor) as cur:
                cur.execute(sql, args)
                return list(cur.fetchall()) if cur.description else []
        except pymysql.MySQLError as exc:
            raise QueryError(error_code(exc), str(exc.args[-1]), sql, self.name) from exc

    def variable(self, name: str) -> str | None:
        """A global variable's value (None when the server has no such variable)."""
        rows = self.execute("SHOW GLOBAL VARIABLES LIKE %s", (name,))
        return rows[0][1] if rows else None

    def status_var(self, name: str) -> str | None:
        """A global status value (None when the server has no such counter)."""
        rows = self.execute("SHOW GLOBAL STATUS LIKE %s", (name,))
        return rows[0][1] if rows else None
