"""One managed MySQL-family server: its files, its process, and SQL access.

A :class:`Server` owns a vardir (``data/ log/ tmp/ run/`` plus ``my.cnf``),
a port lease and a :class:`~lib.platform.process.ProcessExecutor`.  Lifecycle:
``start`` (fail fast, readiness by a real SQL ping, error-log tail on
failure), ``stop`` (SHUTDOWN, then SIGTERM, then SIGKILL, bounded), ``kill``
(kill -9), ``pause``/``resume`` (SIGSTOP/SIGCONT) and ``restart``.
"""
from __future__ import annotations

import grp
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import psutil
import pymysql

from lib.servers.codetree import CodeTree
from lib.errors import QueryError, ServerDiedError, ServerStartError
from lib.platform.logsetup import get_logger
from lib.platform.logtail import tail_file
from lib.servers.options import Option, merge, parse_options, render_cnf
from lib.platform.ports import PortLease, port_is_free
from lib.platform.launcher import Launcher
from lib.platform.process import (ProcessExecutor, TAG_NAME, group_of, pid_alive, stop_foreign,
                         tagged_processes)

HOST = "127.0.0.1"
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes; keep a margin


@dataclass(frozen=True)
class Health:
    """A server's health: state is ok, stopped, crashed or hung."""

    state: str
    message: str

    @property
    def ok(self) -> bool:
        """True when running and answering SQL."""
        return self.state == "ok"


@dataclass
class ServerSettings:
    """Run-wide settings every server shares."""

    user: str | None
    env: dict[str, str]
    die_with_parent: bool
    start_timeout: float = 60.0
    shutdown_timeout: float = 10.0
    socket_fallback_dir: str = "/tmp"
    extra_defaults: list[Option] = field(default_factory=list)
    wsrep_provider: str = "/usr/lib/galera/libgalera_smm.so"
    wsrep_sst_method: str = "rsync"
    cluster_snapshots: bool = True
    launcher: Launcher = field(default_factory=Launcher)


class CompatLogger:
    """kewpie 2012's logging object (``test_debug``, ``info``...) over our logger."""

    def __init__(self, logger: Any) -> None:
        self._logger = logger

    def test_debug(self, msg: str) -> None:
        """Debug output from a test."""
        self._logger.debug(msg)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


class Server:
    """A MySQL-family server managed by kewpie."""

    server_type = "mysql"
    clean_stop_when_discarded = True  # Galera nodes are killed instead (see discard)

    def __init__(self, name: str, index: int, tree: CodeTree, vardir: str, lease: PortLease,
                 options: list[Option], settings: ServerSettings,
                 on_change: Callable[["Server"], None] | None = None) -> None:
        self.name = name
        self.index = index
        self.tree = tree
        self.vardir = vardir
        self.lease = lease
        self.user_options = list(options)
        self.harness_options: list[Option] = []
        self.settings = settings
        self.on_change = on_change
        self.host = HOST
        self.datadir = os.path.join(vardir, "data")
        self.logdir = os.path.join(vardir, "log")
        self.tmpdir = os.path.join(vardir, "tmp")
        self.rundir = os.path.join(vardir, "run")
        self.cnf_path = os.path.join(vardir, "my.cnf")
        self.error_log = os.path.join(self.logdir, "error.log")
        self.stdout_log = os.path.join(self.logdir, "stdout.log")
        self.pid_file = os.path.join(self.rundir, "my.pid")
        self.socket_file = self._socket_path()
        self.executor: ProcessExecutor | None = None
        self.adopted_pid: int | None = None
        self.adopted_create_time: float | None = None
        self.start_count = 0
        self.stop_requested = False
        self._conn: pymysql.connections.Connection | None = None
        self.log = get_logger()
        self.logging = CompatLogger(self.log)
        self.client_init_command: str | None = None

    # ------------------------------------------------------------------ paths
    def _socket_path(self) -> str:
        path = os.path.join(self.vardir, "my.sock")
        if len(path) <= SOCKET_PATH_MAX:
            return path
        fallback = self.settings.socket_fallback_dir
        return os.path.join(fallback, f"kw-{self.lease.first}.sock")

    @property
    def port(self) -> int:
        """The client port (kewpie called it MASTER_PORT)."""
        return self.lease.port(0)

    master_port = port

    @property
    def cnf_file(self) -> str:
        """kewpie 2012 name of the server's option file (``cnf_path``)."""
        return self.cnf_path

    @property
    def type(self) -> str:
        """kewpie 2012 name for the server type."""
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
    def pid(self) -> int | None:
        """The server process id while running."""
        if self.executor is not None:
            return self.executor.pid if self.executor.running() else None
        if self.adopted_pid and pid_alive(self.adopted_pid, self.adopted_create_time):
            return self.adopted_pid
        return None

    @property
    def status(self) -> int:
        """1 when running, 0 otherwise (kewpie's STATUS)."""
        return 1 if self.is_alive() else 0

    # ------------------------------------------------------------ config file
    def base_options(self) -> list[Option]:
        """The options kewpie sets for every server (the suite's come after)."""
        opts = [
            Option("datadir", self.datadir), Option("port", str(self.port)),
            Option("bind-address", HOST), Option("socket", self.socket_file),
            Option("pid-file", self.pid_file), Option("log-error", self.error_log),
            Option("tmpdir", self.tmpdir), Option("secure-file-priv", self.vardir),
            Option("server-id", str(self.index + 1)), Option("skip-name-resolve"),
            Option("innodb-log-file-size", "16M"), Option("innodb-buffer-pool-size", "128M"),
            Option("core-file"),
        ]
        if self.tree.version and self.tree.version.flavor != "mariadb":
            opts += [Option("mysqlx", "OFF", loose=True), Option("admin-address", HOST, loose=True)]
        return opts

    def effective_options(self) -> list[Option]:
        """Base options, then settings' extras, then the harness's per-role ones, then the suite's."""
        return merge(self.base_options(), self.settings.extra_defaults,
                     self.harness_options, self.user_options)

    def write_cnf(self) -> None:
        """Write ``my.cnf`` for this server: it may hold passwords (Galera's SST
        account), so it is 0640 root:<server group> when kewpie runs as root for
        a server user (mariadbd and the tools run as that user read it through
        the group), else 0600 owned by whoever runs kewpie."""
        client = [Option("host", HOST), Option("port", str(self.port)),
                  Option("socket", self.socket_file), Option("user", "root")]
        text = render_cnf({"mysqld": self.effective_options(), "client": client,
                           **self.extra_cnf_sections()})
        write_private_file(self.cnf_path, text, self.settings.user)

    def launch_env(self) -> dict[str, str]:
        """The environment of the server process and of everything it runs (SST
        scripts, mariabackup, rsync, socat): the run's tags, this server's tag,
        and ``TMPDIR`` inside the vardir so no tool falls back to /tmp."""
        env = dict(self.settings.env)
        env[TAG_NAME] = self.vardir
        env["TMPDIR"] = self.tmpdir
        return env

    def extra_cnf_sections(self) -> dict[str, list[Option]]:
        """More my.cnf sections (Galera's [sst]); none for a plain server."""
        return {}

    def make_dirs(self) -> None:
        """Create the vardir tree, owned by the server user."""
        os.makedirs(self.vardir, mode=0o755, exist_ok=True)
        for d in (self.logdir, self.tmpdir, self.rundir):
            os.makedirs(d, mode=0o750, exist_ok=True)
        if self.settings.user:
            for d in (self.vardir, self.logdir, self.tmpdir, self.rundir):
                shutil.chown(d, self.settings.user, self.settings.user)

    # -------------------------------------------------------------- lifecycle
    def start(self, timeout: float | None = None, wait: bool = True,
              extra_args: list[str] | tuple[str, ...] = ()) -> None:
        """Launch the server; with wait, block until it is ready (see ready())."""
        if self.is_alive():
            return
        if not port_is_free(self.port):
            raise ServerStartError(f"server {self.name}: port {self.port} is already in use by "
                                   f"another process (pre-start check)")
        if os.path.exists(self.socket_file):
            os.unlink(self.socket_file)
        self.write_cnf()
        env = self.launch_env()
        argv = [self.tree.server, f"--defaults-file={self.cnf_path}", *self.start_args(),
                *extra_args]
        self.executor = ProcessExecutor(argv, env, self.stdout_log, user=self.settings.user,
                                        pass_fds=(self.lease.fd,) if self.lease.fd >= 0 else (),
                                        die_with_parent=self.settings.die_with_parent,
                                        cwd=self.vardir, launcher=self.settings.launcher)
        self.adopted_pid = None
        self.stop_requested = False
        self._drop_conn()
        self.executor.start()
        self.start_count += 1
        self.notify_changed()
        if wait:
            self.wait_ready(timeout)

    def wait_ready(self, timeout: float | None = None) -> None:
        """Poll a real SQL ping until it answers; fail fast on exit, or on timeout."""
        assert self.executor is not None
        timeout = timeout or self.settings.start_timeout
        ok, reason = self.executor.wait_ready(self.ready, timeout)
        if ok:
            return
        if reason == "exited":
            rc = self.executor.returncode()
            self.notify_changed()
            raise ServerStartError(f"server {self.name} exited with status {rc} while starting "
                                   f"(error log: {self.error_log})", self._tail_or_note())
        self.executor.kill()
        self.notify_changed()
        raise ServerStartError(f"server {self.name} did not answer within {timeout:g}s "
                               f"(error log: {self.error_log})", self._tail_or_note())

    def stop(self, timeout: float | None = None) -> str:
        """SHUTDOWN, then SIGTERM, then SIGKILL with bounded waits."""
        timeout = timeout or self.settings.shutdown_timeout
        self._drop_conn()
        self.stop_requested = True
        if self.executor is None:
            if self.adopted_pid:
                how = stop_foreign(self.adopted_pid, self.adopted_create_time, timeout)
                self.adopted_pid = None
                self.notify_changed()
                return how
            return "gone"
        if not self.executor.running():
            self.notify_changed()
            return "gone"
        how = "shutdown"
        try:
            conn = self.connect(connect_timeout=2, read_timeout=timeout)
            with conn.cursor() as cur:
                cur.execute("SHUTDOWN")
            conn.close()
        except pymysql.MySQLError:
            # Not answering SQL (e.g. a joiner waiting for a state transfer):
            # go straight to SIGTERM.
            how = "terminated"
            self.executor.send(signal.SIGTERM)
        if not self.executor.wait(timeout):
            self.executor.kill()
            how = "killed"
        self.reap_helpers()
        self.notify_changed()
        return how

    def discard(self) -> None:
        """Stop a server whose datadir will not be used again (a clean stop here)."""
        self.stop()

    def kill(self) -> None:
        """kill -9 the server and reap it (a kill asked for is not a crash)."""
        self._drop_conn()
        self.stop_requested = True
        if self.executor is not None:
            self.executor.kill()
        elif self.adopted_pid:
            os.kill(self.adopted_pid, signal.SIGKILL)
        self.reap_helpers()
        self.notify_changed()

    def reap_helpers(self) -> None:
        """Kill what the server started and left behind (SST scripts, rsync, socat...).

        They inherit the server's tag, so they are found even when they left its
        process group.
        """
        for proc in tagged_processes(TAG_NAME, self.vardir):
            try:
                proc.kill()
            except psutil.Error:
                pass

    def pause(self) -> None:
        """SIGSTOP the server."""
        if self.executor is not None:
            self.executor.send(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT the server."""
        if self.executor is not None:
            self.executor.send(signal.SIGCONT)

    def restart(self, options: list[str] | None = None, timeout: float | None = None) -> None:
        """Stop and start again; with options, replace the suite's options first."""
        from lib.servers.option_safety import check_restart_options  # before the server stops
        check_restart_options(self, options)
        self.stop()
        if options is not None:
            self.user_options = parse_options(options)
        self.start(timeout=timeout)

    def is_alive(self) -> bool:
        """True when the server process is running."""
        return self.pid is not None

    def health(self, exit_wait: float = 3.0) -> "Health":
        """Is the server running and answering SQL?  ok, stopped, crashed or hung.

        A server that does not answer is given exit_wait seconds to finish
        dying (SIGKILL is delivered asynchronously), so a crash is reported as
        a crash rather than as a hang.  A server stopped through this object
        (stop/kill) is 'stopped', not 'crashed'.
        """
        if self.executor is None:
            if self.is_alive():
                return Health("ok", "")
            return Health("stopped", f"server {self.name} is not running")
        if self.executor.running() and self.ping():
            return Health("ok", "")
        self.executor.wait(exit_wait)
        if self.executor.running():
            return Health("hung", f"server {self.name} (pid {self.executor.pid}) is running but "
                                  f"does not answer SQL")
        if self.stop_requested:
            return Health("stopped", f"server {self.name} was stopped by the test")
        rc = self.executor.returncode()
        how = f"killed by signal {-rc}" if rc is not None and rc < 0 else f"exit status {rc}"
        return Health("crashed", f"server {self.name} died during the test ({how})")

    def notify_changed(self) -> None:
        """Tell the owner (the state file) that this server started or stopped."""
        if self.on_change:
            self.on_change(self)

    # ------------------------------------------------------------------- SQL
    def connect(self, db: str | None = None, autocommit: bool = True, **kwargs: Any) -> pymysql.Connection:
        """A new PyMySQL connection as root through the unix socket."""
        params: dict[str, Any] = dict(unix_socket=self.socket_file, user="root", password="",
                                      database=db, autocommit=autocommit, connect_timeout=10)
        params.update(kwargs)
        return pymysql.connect(**params)

    def connect_tcp(self, db: str | None = None, **kwargs: Any) -> pymysql.Connection:
        """A new PyMySQL connection as root over TCP to 127.0.0.1:port."""
        return self.connect(db=db, unix_socket=None, host=HOST, port=self.port, **kwargs)

    def start_args(self) -> list[str]:
        """Extra command-line arguments for every start (subclasses add theirs)."""
        return []

    def ready(self) -> bool:
        """The readiness check polled after launch: a real SQL ping here."""
        return self.ping()

    def reuse_problem(self) -> str | None:
        """Why this running server should not be handed to the next test (None: fine)."""
        return None

    def ping(self) -> bool:
        """True when the server answers ``SELECT 1`` right now."""
        if not os.path.exists(self.socket_file):
            return False
        try:
            conn = self.connect(connect_timeout=2, read_timeout=5)
        except pymysql.MySQLError:
            return False
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT 1")
                return cur.fetchone() == (1,)
        except pymysql.MySQLError:
            return False
        finally:
            conn.close()

    def _drop_conn(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
            self._conn = None

    def _connection(self) -> pymysql.Connection:
        if self._conn is not None:
            try:
                self._conn.ping(reconnect=False)
                return self._conn
            except pymysql.MySQLError:
                self._drop_conn()
        if not self.is_alive():
            raise ServerDiedError(f"server {self.name} is not running", self.error_log_tail())
        self._conn = self.connect()
        return self._conn

    def execute(self, sql: str, args: Any = None, db: str | None = None) -> list[tuple]:
        """Run one statement (autocommit) and return its rows; QueryError on failure."""
        try:
            conn = self._connection()
            if db:
                conn.select_db(db)
            with conn.cursor() as cur:
                cur.execute(sql, args)
                rows = list(cur.fetchall()) if cur.description else []
            return rows
        except pymysql.MySQLError as exc:
            code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
            message = exc.args[1] if len(exc.args) > 1 else str(exc)
            if code in (2006, 2013, 2003, 2002):
                self._drop_conn()
            raise QueryError(code, message, sql, self.name) from exc

    def query_dicts(self, sql: str, args: Any = None) -> list[dict[str, Any]]:
        """Run a statement and return rows as dicts."""
        conn = self._connection()
        try:
            with conn.cursor(pymysql.cursors.DictCursor) as cur:
                cur.execute(sql, args)
                return list(cur.fetchall()) if cur.description else []
        except pymysql.MySQLError as exc:
            code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
            raise QueryError(code, str(exc.args[-1]), sql, self.name) from exc

    def variable(self, name: str) -> str | None:
        """A global variable's value."""
        rows = self.execute("SHOW GLOBAL VARIABLES LIKE %s", (name,))
        return rows[0][1] if rows else None

    def status_var(self, name: str) -> str | None:
        """A global status value."""
        rows = self.execute("SHOW GLOBAL STATUS LIKE %s", (name,))
        return rows[0][1] if rows else None

    # ------------------------------------------------------------- reporting
    def _tail_or_note(self) -> str:
        return self.error_log_tail() or f"(the error log {self.error_log} is empty)"

    def error_log_size(self) -> int:
        """The error log's current size (a mark for error_log_since)."""
        try:
            return os.path.getsize(self.error_log)
        except OSError:
            return 0

    def error_log_since(self, mark: int) -> str:
        """What the error log gained since error_log_size() returned mark."""
        try:
            with open(self.error_log, "rb") as fh:
                fh.seek(mark)
                return fh.read().decode(errors="replace")
        except OSError:
            return ""

    def error_log_tail(self, lines: int = 30) -> str:
        """The last lines of the error log."""
        return tail_file(self.error_log, lines)

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description (pid, ports, paths)."""
        create_time = None
        if self.executor is not None and self.executor.running():
            create_time = self.executor.create_time
        elif self.adopted_pid:
            create_time = self.adopted_create_time
        return {
            "name": self.name, "type": self.server_type, "pid": self.pid,
            "create_time": create_time, "host": HOST, "port": self.port,
            "ports": self.lease.ports, "socket": self.socket_file, "vardir": self.vardir,
            "datadir": self.datadir, "cnf": self.cnf_path, "error_log": self.error_log,
            "pid_file": self.pid_file, "lease": self.lease.lock_path,
            "basedir": self.basedir, "server": self.tree.server,
            "options": self.server_options, "status": self.status,
        }

    def info_block(self) -> list[str]:
        """kewpie's per-server block (NAME, MASTER_PORT, SOCKET_FILE, VARDIR, STATUS)."""
        return [f"NAME: {self.name}", f"MASTER_PORT: {self.port}", *self.extra_info(),
                f"SOCKET_FILE: {self.socket_file}", f"VARDIR: {self.vardir}",
                f"STATUS: {self.status}"]

    def extra_info(self) -> list[str]:
        """Type-specific lines of the info block (Galera ports...)."""
        return []

    def status_report(self) -> str:
        """A short status summary for failure reports ('' when nothing to add)."""
        return ""

    def __repr__(self) -> str:
        return f"<Server {self.name} port={self.port} pid={self.pid}>"

    def assert_alive(self) -> None:
        """Raise ServerDiedError with the log tail if the server is gone."""
        if not self.is_alive():
            rc = self.executor.returncode() if self.executor else None
            how = f" (exit status {rc})" if rc is not None else ""
            raise ServerDiedError(f"server {self.name} is not running{how}", self.error_log_tail())


def write_private_file(path: str, text: str, user: str | None = None) -> None:
    """Atomically write a file that may hold secrets, never readable by others.

    With user and kewpie running as root: 0640 root:<user's group>; otherwise
    0600 owned by the caller.  The file is created with its final mode and
    owner before any byte is written, then renamed over path.
    """
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.")
    try:
        if user and os.geteuid() == 0:
            os.fchown(fd, 0, grp.getgrnam(group_of(user)).gr_gid)
            os.fchmod(fd, 0o640)
        else:
            os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as fh:
            fd = -1
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll predicate until it is true or timeout passes; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
