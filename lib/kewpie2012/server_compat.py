"""kewpie 2012's server object: a modern Server with the 2012 names.

2012 test modules get their servers (the ``servers`` global,
``test_executor.servers``, ``server_manager.servers``) as
:class:`Kewpie2012Server` wrappers: ``master_port``, ``cnf_file``, ``type``,
``status``, ``mysqldump``... are read-only views of what the server holds
under its own names (its paths: ``vardir``, ``datadir``, ``error_log``... are
``server.paths``), and the 2012 methods (``slave_stop``, ``set_master``,
``get_innodb_version``, ``die``...) keep their old return conventions:
``(retcode, result)`` tuples, ``None`` for "nothing", no exceptions for SQL
errors.  Every other name is the modern server's (:mod:`lib.kewpie2012.wrapper`).
:class:`ServerWrappers` hands out one wrapper per server, so 2012 code that
compares servers or finds one in a list sees the same object everywhere.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from ..errors import QueryError, ReplicationError, ServerStartError
from ..home import data_path
from ..platform.logsetup import get_logger
from ..servers.option_safety import check_restart_options
from ..servers.options import Option, parse_options
from .compat_logger import CompatLogger
from .wrapper import ModernWrapper, unwrap

if TYPE_CHECKING:
    from ..servers.server import Server

STD_DATA = "std_data"  # kewpie's own, beside the suites (lib/home.py): 2012's std_data/


def query_2012(server: Server, sql: str) -> tuple[int, Any]:
    """(0, rows) or (1, 'Error N: message'), as kewpie 2012's execute_query."""
    try:
        return 0, server.execute(sql)
    except QueryError as exc:
        return 1, f"Error {exc.code}: {exc.message}"


def binlog_info(server: Server) -> tuple[int, str, int]:
    """(0, binlog file, position) from SHOW MASTER STATUS; (1, error, 0) without binlog."""
    retcode, rows = query_2012(server, "SHOW MASTER STATUS")
    if retcode:
        return 1, str(rows), 0
    if not rows:
        return 1, f"server {server.name} has no binary log (start it with --log-bin)", 0
    return 0, rows[0][0], int(rows[0][1])


class Kewpie2012Server(ModernWrapper):
    """A server as kewpie 2012 tests know it (see the module docstring)."""

    client_init_command: str | None = None  # kewpie 2012: run on each execute_query connection

    def __init__(self, server: Server,
                 restore_pristine: Callable[[Server], None] | None = None,
                 family: ServerWrappers | None = None) -> None:
        super().__init__(server)
        self._restore_pristine = restore_pristine  # the manager's copy of the pristine datadir
        self._family = family  # the wrappers of the test's servers (and their manager)
        self._options: list[str] | None = None  # server_options, the live list
        self._options_of: list[Option] | None = None  # the user_options it was made from

    @property
    def _server(self) -> Server:
        server: Server = self._wrapped
        return server

    # ------------------------------------------------------------ 2012 attributes
    @property
    def master_port(self) -> int:
        """The client port (kewpie called it MASTER_PORT)."""
        return self._server.port

    @property
    def cnf_file(self) -> str:
        """The server's option file (``paths.cnf_path``)."""
        return self._server.paths.cnf_path

    @property
    def vardir(self) -> str:
        """The server's vardir (``paths.vardir``)."""
        return self._server.paths.vardir

    @property
    def datadir(self) -> str:
        """The server's datadir (``paths.datadir``)."""
        return self._server.paths.datadir

    @property
    def logdir(self) -> str:
        """The server's log directory (``paths.logdir``)."""
        return self._server.paths.logdir

    @property
    def tmpdir(self) -> str:
        """The server's temporary directory (``paths.tmpdir``)."""
        return self._server.paths.tmpdir

    @property
    def error_log(self) -> str:
        """The server's error log (``paths.error_log``)."""
        return self._server.paths.error_log

    @property
    def pid_file(self) -> str:
        """The server's pid file (``paths.pid_file``)."""
        return self._server.paths.pid_file

    @property
    def socket_file(self) -> str:
        """The server's unix socket (``paths.socket_file``)."""
        return self._server.paths.socket_file

    @property
    def type(self) -> str:
        """The server type (``server_type``)."""
        return self._server.server_type

    @property
    def basedir(self) -> str:
        """The code tree's basedir."""
        return self._server.tree.basedir

    @property
    def mysqldump(self) -> str:
        """Path of the dump tool."""
        return self._server.tree.tool("dump")

    @property
    def mysql_client(self) -> str:
        """Path of the command-line client."""
        return self._server.tree.tool("client")

    @property
    def mysqladmin(self) -> str:
        """Path of the admin tool (mariadb-admin / mysqladmin)."""
        return self._server.tree.tool("admin")

    @property
    def version(self) -> str:
        """The server version as ``mysqld --version`` prints it (``10.11.6-MariaDB-...``)."""
        version = self._server.tree.version
        return f"{version.version}{version.suffix}" if version else ""

    @property
    def std_data(self) -> str:
        """kewpie's own ``std_data/`` (shipped beside the suites, as 2012's vardirs linked
        to the harness's): the data files 2012 tests load (``bug723097.sql``...)."""
        return data_path(STD_DATA)

    @property
    def server_options(self) -> list[str]:
        """The server's live option list (the suite's options, as written): 2012 code
        changes it in place (``append``, ``remove``) and the next ``start()`` (or the
        manager's ``start_server``/``restart_server``) starts the server with it."""
        current = self._server.user_options
        if self._options is None or self._options_of is not current:
            self._options = [o.text or o.as_arg() for o in current]
            self._options_of = current
        return self._options

    @server_options.setter
    def server_options(self, options: list[str]) -> None:
        """2012 code may also assign a new list (it takes effect as above)."""
        self._options = list(options)
        self._options_of = self._server.user_options

    @property
    def server_manager(self) -> Any:
        """The test's 2012 ``server_manager`` (:mod:`lib.kewpie2012.manager_compat`); None for
        a server no 2012 test was handed."""
        return self._family.manager if self._family is not None else None

    def apply_server_options(self) -> None:
        """Give the server the options of :attr:`server_options` when the test changed
        that list (checked as a restart's options are: lib/servers/option_safety.py);
        they take effect at its next start."""
        if self._options is None or self._options_of is not self._server.user_options:
            return
        wanted = parse_options(self._options)
        if wanted != self._server.user_options:
            check_restart_options(self._server, list(self._options))
            self._server.user_options = wanted
        self._options_of = self._server.user_options

    @property
    def status(self) -> int:
        """1 when running, 0 otherwise (kewpie's STATUS)."""
        return 1 if self._server.is_alive() else 0

    @property
    def logging(self) -> CompatLogger:
        """kewpie 2012's logging object."""
        return CompatLogger(get_logger())

    # ------------------------------------------------------------ 2012 methods
    def start(self, timeout: float | None = None, wait: bool = True,
              extra_args: list[str] | tuple[str, ...] = (), expect_fail: bool = False,
              working_environ: Any = None, **kwargs: Any) -> int:
        """Start unless running; 0, or 1 for a failed start when expect_fail is set
        (a test expecting the start to fail); working_environ is accepted for the
        2012 signature.  Other keywords are the server's (Galera's ``new_cluster``)."""
        del working_environ
        if not self._server.is_alive():
            self.apply_server_options()
        try:
            self._server.start(timeout=timeout, wait=wait, extra_args=extra_args, **kwargs)
        except ServerStartError:
            if expect_fail:
                return 1
            raise
        return 0

    def ping(self, quiet: bool = True) -> bool:
        """True when the server answers ``SELECT 1`` (quiet: 2012's; the check never logs)."""
        del quiet
        return self._server.sql.ping()

    def get_innodb_version(self) -> str | None:
        """``@@innodb_version`` of the running server; MariaDB 10.10+ dropped the variable
        (its InnoDB is the server's own), so there the server's version number; None
        when the server does not answer."""
        retcode, rows = query_2012(self._server, "SELECT @@innodb_version")
        if retcode == 0:
            return rows[0][0] if rows and rows[0][0] else None
        if str(rows).startswith("Error 1193:") and self._server.tree.version is not None:
            return self._server.tree.version.version
        return None

    def get_xtradb_version(self) -> str | None:
        """The XtraDB release (``-rel`` in ``@@innodb_version``, Percona Server), else None:
        MariaDB 10.11 has plain InnoDB."""
        version = self.get_innodb_version()
        return version if version and "rel" in version else None

    def get_bzr_info(self) -> tuple[int, str]:
        """(revision number, comment) of the server's source, as 2012's sysbench reports
        recorded them: a packaged server has no bzr revision (0); the comment is its
        version and build comment (``10.11.19-MariaDB (Debian 12)``)."""
        version = self._server.tree.version
        comment = f"{version.version}{version.suffix} {version.comment}".strip() if version else ""
        return 0, comment

    def get_pid(self) -> int | None:
        """The server's pid: the process's when running, else the pid file's, else None."""
        if self._server.pid is not None:
            return self._server.pid
        try:
            with open(self._server.paths.pid_file) as fh:
                return int(fh.read().strip() or 0) or None
        except (OSError, ValueError):
            return None

    def die(self) -> int:
        """kill -9 the server (kewpie 2012's ``die``); 0."""
        self._server.kill()
        return 0

    def dump_errlog(self) -> str:
        """The whole error log, as text ('' if there is none yet)."""
        try:
            with open(self._server.paths.error_log, errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""

    def restore_snapshot(self) -> None:
        """Give the server a fresh copy of its pristine datadir (stopping it first), as
        kewpie 2012 did from the snapshot taken after bootstrap."""
        if self._restore_pristine is None:
            raise RuntimeError(f"server {self._server.name} has no pristine datadir to restore")
        if self._server.is_alive():
            self._server.stop()
        self._restore_pristine(self._server)

    def slave_stop(self) -> tuple[int, Any]:
        """``STOP SLAVE``; (retcode, result)."""
        return query_2012(self._server, "STOP SLAVE")

    def slave_start(self) -> tuple[int, Any]:
        """``START SLAVE``; (retcode, result)."""
        return query_2012(self._server, "START SLAVE")

    def slave_ready(self) -> bool:
        """Both replication threads run."""
        try:
            rows = self._server.sql.query_dicts("SHOW SLAVE STATUS")
        except QueryError:
            return False
        return bool(rows) and rows[0].get("Slave_IO_Running") == "Yes" and \
            rows[0].get("Slave_SQL_Running") == "Yes"

    def get_binlog_info(self) -> tuple[int, str, int]:
        """(0, binlog file, position) from SHOW MASTER STATUS; (1, error, 0) without binlog."""
        return binlog_info(self._server)

    def set_master(self, master_server: Any, get_cur_log_pos: bool = True) -> tuple[int, Any]:
        """Point this server at master_server by binlog file and position (its current
        one, or the start of its current binlog); (retcode, message)."""
        master = unwrap(master_server)
        retcode, log_file, log_pos = binlog_info(master)
        if retcode:
            return retcode, log_file
        if not get_cur_log_pos:
            log_pos = 4
        query = (f"CHANGE MASTER TO MASTER_HOST='{master.host}', MASTER_USER='root', "
                 f"MASTER_PASSWORD='', MASTER_PORT={master.port}, "
                 f"MASTER_LOG_FILE='{log_file}', MASTER_LOG_POS={log_pos}, "
                 f"MASTER_CONNECT_RETRY=1")
        return query_2012(self._server, query)

    def wait_sync_with_slaves(self, slave_servers: list[Any], timeout: float = 60) -> None:
        """Wait until every slave has applied this master's binlog up to now (GTID
        position); ReplicationError naming the slave when one falls short in timeout."""
        retcode, rows = query_2012(self._server, "SELECT @@GLOBAL.gtid_binlog_pos")
        position = rows[0][0] if retcode == 0 and rows else ""
        deadline = time.monotonic() + timeout
        for slave in map(unwrap, slave_servers):
            if not position:
                return
            remaining = max(1.0, deadline - time.monotonic())
            retcode, result = query_2012(
                slave, f"SELECT MASTER_GTID_WAIT('{position}', {remaining:.0f})")
            if retcode or result[0][0] != 0:
                raise ReplicationError(f"slave {slave.name} did not reach {self._server.name}'s "
                                       f"position {position} within {timeout:g}s ({result})")


class ServerWrappers:
    """One :class:`Kewpie2012Server` per modern server (identity for 2012 code that
    compares servers or looks one up in a list); restore_pristine is the manager's
    copy of a server's pristine datadir (``restore_snapshot``)."""

    def __init__(self, restore_pristine: Callable[[Server], None] | None = None) -> None:
        self._restore_pristine = restore_pristine
        self._made: dict[int, Kewpie2012Server] = {}
        self.manager: Any = None  # the 2012 server_manager (set by it): server.server_manager

    def wrap(self, server: Any) -> Kewpie2012Server:
        """The 2012 wrapper of server (server itself when it already is one)."""
        if isinstance(server, Kewpie2012Server):
            return server
        made = self._made.get(id(server))
        if made is None:  # the wrapper holds the server, so its id is not reused meanwhile
            made = self._made[id(server)] = Kewpie2012Server(server, self._restore_pristine,
                                                             self)
        return made

    def wrap_all(self, servers: Any) -> list[Kewpie2012Server]:
        """The wrappers of servers, in order."""
        return [self.wrap(s) for s in servers]
