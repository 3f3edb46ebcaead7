"""kewpie 2012's names for server things, kept so its test cases run unchanged.

:class:`Kewpie2012Names` is mixed into :class:`~lib.servers.server.Server`:
``master_port``, ``cnf_file``, ``type``, ``status``, ``mysqldump``... are
read-only views of what the server holds under its own names.
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Callable

from ..errors import QueryError, ReplicationError

if TYPE_CHECKING:
    from .codetree import CodeTree
    from .options import Option


class CompatLogger:
    """kewpie 2012's logging object (``test_debug``, ``info``...) over our logger."""

    def __init__(self, logger: Any, show_test_debug: bool = False) -> None:
        self._logger = logger
        self._show_test_debug = show_test_debug  # --test-debug

    def test_debug(self, msg: str) -> None:
        """Debug output from a test: shown (INFO, 'TEST_DEBUG') with --test-debug, else
        only in kewpie.log."""
        if self._show_test_debug:
            self._logger.info(f"TEST_DEBUG {msg}")
        else:
            self._logger.debug(msg)

    def verbose(self, msg: str) -> None:
        """kewpie 2012's verbose level: debug here."""
        self._logger.debug(msg)

    def debug_class(self, obj: Any) -> None:
        """kewpie 2012 dumped an object's attributes at debug level."""
        self._logger.debug(f"{type(obj).__name__}: {vars(obj) if hasattr(obj, '__dict__') else obj}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


STD_DATA_DIRS = ("mysql-test/std_data", "share/mysql/mysql-test/std_data",
                 "share/mariadb/mysql-test/std_data", "share/mysql-test/std_data")


class Kewpie2012Names:
    """The 2012 attribute names, over a server's port, cnf_path, tree and options.

    The 2012 methods (``slave_stop``, ``set_master``, ``get_innodb_version``...)
    keep their old return conventions: ``(retcode, result)`` tuples, ``None``
    for "nothing", no exceptions for SQL errors.
    """

    port: int
    cnf_path: str
    server_type: str
    tree: "CodeTree"
    user_options: list["Option"]
    log: Any
    name: str
    error_log: str
    pid_file: str
    host: str
    client_init_command: str | None = None  # kewpie 2012: run on each execute_query connection
    restore_pristine: Callable[[], None] | None = None  # set by the manager (restore_snapshot)

    def is_alive(self) -> bool:
        """Provided by the server."""
        raise NotImplementedError

    def execute(self, sql: str, args: Any = None, db: str | None = None) -> list[tuple]:
        """Provided by the server."""
        raise NotImplementedError

    def kill(self) -> None:
        """Provided by the server."""
        raise NotImplementedError

    def stop(self, timeout: float | None = None) -> Any:
        """Provided by the server."""
        raise NotImplementedError

    @property
    def pid(self) -> int | None:
        """Provided by the server."""
        raise NotImplementedError

    # ------------------------------------------------------------ 2012 attributes
    @property
    def mysqladmin(self) -> str:
        """Path of the admin tool (mariadb-admin / mysqladmin)."""
        return self.tree.tool("admin")

    @property
    def version(self) -> str:
        """The server version as ``mysqld --version`` prints it (``10.11.6-MariaDB-...``)."""
        version = self.tree.version
        return f"{version.version}{version.suffix}" if version else ""

    @property
    def std_data(self) -> str:
        """The code tree's ``mysql-test/std_data`` (certificates, data files), or ''."""
        for sub in STD_DATA_DIRS:
            path = os.path.join(self.tree.basedir, sub)
            if os.path.isdir(path):
                return path
        return ""

    # ------------------------------------------------------------ 2012 methods
    def _query(self, sql: str) -> tuple[int, Any]:
        """(0, rows) or (1, 'Error N: message'), as kewpie 2012's execute_query."""
        try:
            return 0, self.execute(sql)
        except QueryError as exc:
            return 1, f"Error {exc.code}: {exc.message}"

    def get_innodb_version(self) -> str | None:
        """``@@innodb_version`` of the running server; MariaDB 10.10+ dropped the variable
        (its InnoDB is the server's own), so there the server's version number; None
        when the server does not answer."""
        retcode, rows = self._query("SELECT @@innodb_version")
        if retcode == 0:
            return rows[0][0] if rows and rows[0][0] else None
        if str(rows).startswith("Error 1193:") and self.tree.version is not None:
            return self.tree.version.version
        return None

    def get_xtradb_version(self) -> str | None:
        """The XtraDB release (``-rel`` in ``@@innodb_version``, Percona Server), else None:
        MariaDB 10.11 has plain InnoDB."""
        version = self.get_innodb_version()
        return version if version and "rel" in version else None

    def get_pid(self) -> int | None:
        """The server's pid: the process's when running, else the pid file's, else None."""
        if self.pid is not None:
            return self.pid
        try:
            with open(self.pid_file) as fh:
                return int(fh.read().strip() or 0) or None
        except (OSError, ValueError):
            return None

    def die(self) -> int:
        """kill -9 the server (kewpie 2012's ``die``); 0."""
        self.kill()
        return 0

    def dump_errlog(self) -> str:
        """The whole error log, as text ('' if there is none yet)."""
        try:
            with open(self.error_log, errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""

    def restore_snapshot(self) -> None:
        """Give the server a fresh copy of its pristine datadir (stopping it first), as
        kewpie 2012 did from the snapshot taken after bootstrap."""
        if self.restore_pristine is None:
            raise RuntimeError(f"server {self.name} has no pristine datadir to restore")
        if self.is_alive():
            self.stop()
        self.restore_pristine()

    def slave_stop(self) -> tuple[int, Any]:
        """``STOP SLAVE``; (retcode, result)."""
        return self._query("STOP SLAVE")

    def slave_start(self) -> tuple[int, Any]:
        """``START SLAVE``; (retcode, result)."""
        return self._query("START SLAVE")

    def slave_ready(self) -> bool:
        """Both replication threads run."""
        try:
            rows = self.query_dicts("SHOW SLAVE STATUS")  # type: ignore[attr-defined]
        except QueryError:
            return False
        return bool(rows) and rows[0].get("Slave_IO_Running") == "Yes" and \
            rows[0].get("Slave_SQL_Running") == "Yes"

    def get_binlog_info(self) -> tuple[int, str, int]:
        """(0, binlog file, position) from SHOW MASTER STATUS; (1, error, 0) without binlog."""
        retcode, rows = self._query("SHOW MASTER STATUS")
        if retcode:
            return 1, str(rows), 0
        if not rows:
            return 1, f"server {self.name} has no binary log (start it with --log-bin)", 0
        return 0, rows[0][0], int(rows[0][1])

    def set_master(self, master_server: "Kewpie2012Names",
                   get_cur_log_pos: bool = True) -> tuple[int, Any]:
        """Point this server at master_server by binlog file and position (its current
        one, or the start of its current binlog); (retcode, message)."""
        retcode, log_file, log_pos = master_server.get_binlog_info()
        if retcode:
            return retcode, log_file
        if not get_cur_log_pos:
            log_pos = 4
        query = (f"CHANGE MASTER TO MASTER_HOST='{master_server.host}', MASTER_USER='root', "
                 f"MASTER_PASSWORD='', MASTER_PORT={master_server.port}, "
                 f"MASTER_LOG_FILE='{log_file}', MASTER_LOG_POS={log_pos}, "
                 f"MASTER_CONNECT_RETRY=1")
        return self._query(query)

    def wait_sync_with_slaves(self, slave_servers: list[Any], timeout: float = 60) -> None:
        """Wait until every slave has applied this master's binlog up to now (GTID
        position); ReplicationError naming the slave when one falls short in timeout."""
        retcode, rows = self._query("SELECT @@GLOBAL.gtid_binlog_pos")
        position = rows[0][0] if retcode == 0 and rows else ""
        deadline = time.monotonic() + timeout
        for slave in slave_servers:
            if not position:
                return
            remaining = max(1.0, deadline - time.monotonic())
            retcode, result = slave._query(
                f"SELECT MASTER_GTID_WAIT('{position}', {remaining:.0f})")
            if retcode or result[0][0] != 0:
                raise ReplicationError(f"slave {slave.name} did not reach {self.name}'s "
                                       f"position {position} within {timeout:g}s ({result})")

    @property
    def master_port(self) -> int:
        """The client port (kewpie called it MASTER_PORT)."""
        return self.port

    @property
    def cnf_file(self) -> str:
        """The server's option file (``cnf_path``)."""
        return self.cnf_path

    @property
    def type(self) -> str:
        """The server type (``server_type``)."""
        return self.server_type

    @property
    def basedir(self) -> str:
        """The code tree's basedir."""
        return self.tree.basedir

    @property
    def mysqldump(self) -> str:
        """Path of the dump tool."""
        return self.tree.tool("dump")

    @property
    def mysql_client(self) -> str:
        """Path of the command-line client."""
        return self.tree.tool("client")

    @property
    def server_options(self) -> list[str]:
        """The suite's options for this server, as ``--name=value`` strings."""
        return [o.as_arg() for o in self.user_options]

    @property
    def status(self) -> int:
        """1 when running, 0 otherwise (kewpie's STATUS)."""
        return 1 if self.is_alive() else 0

    @property
    def logging(self) -> CompatLogger:
        """kewpie 2012's logging object."""
        return CompatLogger(self.log)
