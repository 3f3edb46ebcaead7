"""One managed MySQL-family server: the composition of its parts.

A :class:`Server` puts together its files (:mod:`lib.servers.layout`), its
SQL client (:mod:`lib.servers.sql`), its error log (:mod:`lib.servers.logs`),
a port lease and a :class:`~lib.platform.process.ProcessExecutor`, and
implements the lifecycle protocols of :mod:`lib.servers.lifecycle`: ``start``
(the template: pre-start port check, launch, readiness by a real SQL ping,
fail fast on exit), ``stop`` (SHUTDOWN, then SIGTERM, then SIGKILL, bounded),
``signal_stop``/``wait_exit`` (the interrupt path), ``kill``,
``pause``/``resume``/``paused`` and ``restart``.  ``with server:`` starts it
and stops it.  kewpie 2012's names are not here: 2012 tests get servers
wrapped by :mod:`lib.util.server_compat`.
"""
from __future__ import annotations

import os
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, NoReturn


from ..errors import ServerDiedError, ServerStartError
from ..platform.launcher import Launcher
from ..platform.lifecycle import ReadyWait, StopResult
from ..platform.logsetup import get_logger
from ..platform.netns import NetHost
from ..platform.netrules import NetworkControl
from ..platform.ports import PortLease, port_is_free
from ..platform.process import ProcessExecutor, TAG_NAME, tagged_processes
from .codetree import CodeTree
from .faultwindows import FaultWindows
from .health import Health, HealthState, unanswered_health
from .layout import HOST, SOCKET_PATH_MAX, LayoutPath, ServerLayout, write_private_file
from .lifecycle import await_ready, start_process
from .logs import ErrorLog
from .options import Option, merge, parse_options
from .sql import SqlClient
from .trees import TreeSet

if TYPE_CHECKING:
    import pymysql
    from .wrappers import ServerWrapper

# Names other modules import from here (they moved to the parts above).
__all__ = ("HOST", "SOCKET_PATH_MAX", "Health", "Server", "ServerSettings", "write_private_file")


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
    wrapper: ServerWrapper | None = None  # valgrind, rr, gdb... (None: bare)
    final_options: list[Option] = field(default_factory=list)  # --mysqld: after the suite's
    trees: TreeSet | None = None  # the run's code trees (restart(basedir=...) resolves here)

    @property
    def timeout_factor(self) -> float:
        """How much slower servers (and so tests) are under the wrapper; 1 without one."""
        return self.wrapper.timeout_factor if self.wrapper else 1.0


class Server:
    """A MySQL-family server managed by kewpie (Startable, Stoppable, Killable,
    Pausable, HasLogs; a context manager that starts and stops it)."""

    server_type = "mysql"
    clean_stop_when_discarded = True  # Galera nodes are killed instead (see discard)
    # Session settings under which a statement changes this server only (the reuse
    # rule empties `test` so): no binlog event, so no GTID position moves.
    unreplicated_session: tuple[str, ...] = ("SET SESSION sql_log_bin = 0",)

    vardir = LayoutPath()
    datadir = LayoutPath()
    logdir = LayoutPath()
    tmpdir = LayoutPath()
    rundir = LayoutPath()
    cnf_path = LayoutPath()
    error_log = LayoutPath()
    stdout_log = LayoutPath()
    pid_file = LayoutPath()
    socket_file = LayoutPath()

    def __init__(self, name: str, index: int, tree: CodeTree, vardir: str, lease: PortLease,
                 options: list[Option], settings: ServerSettings,
                 on_change: Callable[["Server"], None] | None = None) -> None:
        self.name = name
        self.index = index
        self.tree = tree
        self.lease = lease
        self.user_options = list(options)
        self.harness_options: list[Option] = []
        self.settings = settings
        self.on_change = on_change
        self.host = HOST
        # With network = 'namespaces': the server's namespace and address, and the
        # set's network fault control (lib.platform.netns, lib.platform.netrules).
        self.net: NetHost | None = None
        self.network: NetworkControl | None = None
        self.layout = ServerLayout.under(vardir, settings.socket_fallback_dir, lease.first)
        self.errlog = ErrorLog(self.layout.error_log)
        self.sql = SqlClient(name, self.layout.socket_file, self.port, self.is_alive,
                             self.error_log_tail)
        self.executor: ProcessExecutor | None = None
        self.start_count = 0
        self.launched_at = 0.0  # time.monotonic() of the latest launch
        self.stop_requested = False
        self.fault_windows = FaultWindows()  # recorded by faults, read by the warnings check
        self.log = get_logger()

    @property
    def port(self) -> int:
        """The client port: the lease's first."""
        return self.lease.port(0)

    @property
    def pid(self) -> int | None:
        """The server process id while running, else None."""
        return self.executor.pid if self.executor is not None and self.executor.running() else None

    @property
    def server_pid(self) -> int | None:
        """The mariadbd process itself: under a wrapper that is its parent (gdb, rr,
        gdbserver, strace...) it is read from the pid file; else :attr:`pid`.  Signal
        this one to make the server (not its debugger) crash or freeze."""
        pid = self.pid
        wrapper = self.settings.wrapper
        if pid is None or wrapper is None or wrapper.server_is_process:
            return pid
        try:
            with open(self.pid_file) as fh:
                return int(fh.read().strip())
        except (OSError, ValueError):
            return pid

    # ------------------------------------------------------------ config file
    def base_options(self) -> list[Option]:
        """The options kewpie sets for every server (the suite's come after); ``user=root``
        when it runs as root itself (``--server-user=root``: mysqld refuses root otherwise)."""
        version = self.tree.version
        opts = self.layout.base_options(self.port, self.index + 1,
                                        mariadb=not version or version.flavor == "mariadb")
        if self.net is not None:  # also on its namespace's address, for replicas
            opts = [Option("bind-address", f"{HOST},{self.net.address}")
                    if o.name == "bind-address" else o for o in opts]
        if self.settings.user is None and os.geteuid() == 0:
            opts.append(Option("user", "root"))
        opts += [Option(name, value) for name, value in self.tree.server_path_options()]
        return opts

    def place_on(self, host: NetHost, network: NetworkControl) -> None:
        """Run this server in host's network namespace (peers reach it at its address)."""
        self.net = host
        self.network = network
        self.host = host.address

    def effective_options(self) -> list[Option]:
        """Base options, then settings' extras, then the harness's per-role ones, then the suite's."""
        return merge(self.base_options(), self.settings.extra_defaults,
                     self.harness_options, self.user_options, self.settings.final_options)

    def extra_cnf_sections(self) -> dict[str, list[Option]]:
        """More my.cnf sections (Galera's [sst]); none for a plain server."""
        return {}

    def write_cnf(self) -> None:
        """Write ``my.cnf`` ([mysqld], [client], extra sections), private (see layout)."""
        self.layout.write_cnf({"mysqld": self.effective_options(),
                               "client": self.layout.client_options(self.port),
                               **self.extra_cnf_sections()}, self.settings.user)

    def make_dirs(self) -> None:
        """Create the vardir tree, owned by the server user."""
        self.layout.make_dirs(self.settings.user)

    def launch_env(self) -> dict[str, str]:
        """The environment of the server process and of everything it runs (SST
        scripts, mariabackup, rsync, socat): the run's tags, this server's tag,
        and ``TMPDIR`` inside the vardir so no tool falls back to /tmp."""
        env = dict(self.settings.env)
        env[TAG_NAME] = self.vardir
        env["TMPDIR"] = self.tmpdir
        if self.tree.bin_dirs():  # a relocated tree's SST scripts and tools come first
            env["PATH"] = os.pathsep.join([*self.tree.bin_dirs(), env.get("PATH", "")])
        return env

    def start_args(self) -> list[str]:
        """Extra command-line arguments for every start (subclasses add theirs)."""
        return []

    # ------------------------------------------------- start (template hooks)
    def start(self, timeout: float | None = None, wait: bool = True,
              extra_args: list[str] | tuple[str, ...] = ()) -> None:
        """Launch the server unless running; with wait, block until ready (see ready()).
        A failed start raises ServerStartError with the error log's tail."""
        if self.is_alive():
            return
        start_process(self, timeout or self.settings.start_timeout, wait, tuple(extra_args))

    def pre_start_check(self) -> None:
        """Refuse to start when a foreign process listens on our port."""
        if not port_is_free(self.port):
            raise ServerStartError(f"server {self.name}: port {self.port} is already in use by "
                                   f"another process (pre-start check)")

    def launch(self, extra_args: tuple[str, ...] = ()) -> ProcessExecutor:
        """Write my.cnf and start mariadbd (as the server user, holding the lease fd)."""
        if os.path.exists(self.socket_file):
            os.unlink(self.socket_file)
        self.write_cnf()
        argv = [self.tree.server, f"--defaults-file={self.cnf_path}", *self.start_args(),
                *extra_args]
        if self.settings.wrapper is not None:  # valgrind, rr, gdb... (lib.servers.wrappers)
            argv = self.settings.wrapper.wrap(self, argv)
        self.executor = ProcessExecutor(argv, self.launch_env(), self.stdout_log,
                                        user=self.settings.user,
                                        pass_fds=(self.lease.fd,) if self.lease.fd >= 0 else (),
                                        die_with_parent=self.settings.die_with_parent,
                                        cwd=self.vardir, launcher=self.settings.launcher,
                                        netns=self.net.namespace if self.net else None)
        self.stop_requested = False
        self.sql.close()
        self.executor.start()
        self.launched_at = time.monotonic()
        self.start_count += 1
        self.notify_changed()
        return self.executor

    def ready(self) -> bool:
        """The readiness check polled after launch: a real SQL ping here."""
        return self.ping()

    def wait_ready(self, timeout: float | None = None, since_launch: bool = False) -> None:
        """Wait for a server started with wait=False: ready, or ServerStartError.
        since_launch: the timeout counts from its launch, not from now (a set launched
        ahead of its test); a server not seen answering within it has timed out."""
        if self.executor is None:
            raise ServerStartError(f"server {self.name} was never started")
        timeout = timeout or self.settings.start_timeout
        if since_launch:
            left = timeout - (time.monotonic() - self.launched_at)
            if left <= 0:
                self.start_failed(ReadyWait.TIMEOUT, timeout)
            await_ready(self, self.executor, left)
            return
        await_ready(self, self.executor, timeout)

    def start_failed(self, why: ReadyWait, timeout: float) -> NoReturn:
        """Raise ServerStartError with the error log's tail (killing a server that hangs)."""
        assert self.executor is not None
        if why is ReadyWait.EXITED:
            rc = self.executor.returncode()
            self.notify_changed()
            raise ServerStartError(f"server {self.name} exited with status {rc} while starting "
                                   f"(error log: {self.error_log})", self.errlog.tail_or_note())
        self.executor.kill()
        self.notify_changed()
        raise ServerStartError(f"server {self.name} did not answer within {timeout:g}s "
                               f"(error log: {self.error_log})", self.errlog.tail_or_note())

    # ------------------------------------------------------------- stopping
    def stop(self, timeout: float | None = None) -> StopResult:
        """SHUTDOWN, then SIGTERM, then SIGKILL with bounded waits; says how it ended."""
        timeout = timeout or self.settings.shutdown_timeout
        self.sql.close()
        self.stop_requested = True
        if self.executor is None:
            return StopResult.GONE
        how = StopResult.GONE
        if self.executor.running():
            how = StopResult.SHUTDOWN
            if not self.sql.shutdown(timeout):  # not taking SQL (a joiner in SST): SIGTERM
                how = StopResult.TERMINATED
                self.executor.send(signal.SIGTERM)
            if not self.executor.wait(timeout):
                self.executor.kill()
                how = StopResult.KILLED
            self.reap_helpers()
        self.notify_changed()
        return how

    def signal_stop(self) -> None:
        """Begin stopping without waiting (interrupts): SIGTERM, or kill -9 for a
        server whose datadir is thrown away (``clean_stop_when_discarded`` false)."""
        self.stop_requested = True
        if not self.clean_stop_when_discarded:
            self.kill()
        elif self.executor is not None:
            self.executor.send(signal.SIGTERM)

    def wait_exit(self, timeout: float) -> bool:
        """Wait up to timeout for the process to exit; True when it is gone."""
        return self.executor is None or self.executor.wait(timeout)

    def discard(self) -> None:
        """Stop a server whose datadir will not be used again (a clean stop here)."""
        self.stop()

    def kill(self) -> None:
        """kill -9 the server and reap it (a kill asked for is not a crash).  The kept
        connection is closed after the kill: a thread blocked reading it (a test's query,
        when the watchdog kills from its own thread) holds its reader's lock until the
        server's death ends the read."""
        self.stop_requested = True
        if self.executor is not None:
            self.executor.kill()
        self.sql.close()
        self.reap_helpers()
        self.notify_changed()

    def reap_helpers(self) -> None:
        """Kill what the server started and left behind (SST scripts, rsync, socat...).

        They inherit the server's tag, so they are found even when they left its
        process group.
        """
        for proc in tagged_processes(TAG_NAME, self.vardir):
            import psutil  # loaded by tagged_processes for what it found
            try:
                proc.kill()
            except psutil.Error:
                pass

    def pause(self) -> None:
        """SIGSTOP the server's process group."""
        if self.executor is not None:
            self.executor.send(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT the server's process group."""
        if self.executor is not None:
            self.executor.send(signal.SIGCONT)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Frozen (SIGSTOP) inside the with block, resumed (SIGCONT) however it ends."""
        self.pause()
        try:
            yield
        finally:
            self.resume()

    def restart(self, options: list[str] | None = None, timeout: float | None = None,
                basedir: "str | CodeTree | None" = None) -> None:
        """Stop and start again; with options, replace the suite's options first; with
        basedir (a tree label such as 'new', a version, a path, or a CodeTree), start
        on that code tree, keeping the datadir (an upgrade or a downgrade)."""
        from .option_safety import check_restart_options  # before the server stops
        check_restart_options(self, options)
        tree = self.resolve_tree(basedir) if basedir is not None else None
        self.stop()
        if options is not None:
            self.user_options = parse_options(options)
        if tree is not None:
            self.use_tree(tree)
        self.start(timeout=timeout)

    def resolve_tree(self, basedir: "str | CodeTree") -> CodeTree:
        """The code tree basedir names (through the run's trees; a CodeTree as is)."""
        if isinstance(basedir, CodeTree):
            return basedir
        trees = self.settings.trees or TreeSet([self.tree.given or self.tree.basedir])
        return trees.resolve(basedir)

    def use_tree(self, tree: CodeTree) -> None:
        """Run on tree from the next start on (the server must be stopped)."""
        if self.is_alive():
            raise ServerStartError(f"stop {self.name} before switching it to {tree.basedir}")
        if tree is not self.tree:
            self.log.info(f"{self.name}: code tree {self.tree.label} -> {tree.label} "
                          f"({tree.basedir})")
        self.tree = tree

    def upgrade(self, force: bool = False, timeout: float = 300.0) -> str:
        """Run the code tree's mariadb-upgrade (mysql_upgrade) against this running
        server; its output (ServerError with it when it fails)."""
        from .upgrade import run_upgrade
        return run_upgrade(self, force=force, timeout=timeout)

    def running_version(self) -> str:
        """The running server's ``SELECT VERSION()``."""
        return str(self.execute("SELECT VERSION()")[0][0])

    def __enter__(self) -> "Server":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- health
    def is_alive(self) -> bool:
        """True when the server process is running."""
        return self.pid is not None

    def shares_group(self, other: "Server") -> bool:
        """True when other is a member of the same group (a Galera cluster), so that a
        fault acting on one is seen by the other as a peer's (plain servers: never)."""
        return False

    def health(self, exit_wait: float = 3.0) -> Health:
        """Is the server running and answering SQL?  ok, stopped, crashed or hung.

        A server that does not answer is given exit_wait seconds to finish
        dying (SIGKILL is delivered asynchronously), so a crash is reported as
        a crash rather than as a hang.  A server stopped through this object
        (stop/kill) is 'stopped', not 'crashed'.
        """
        if self.executor is None:
            return Health(HealthState.STOPPED, f"server {self.name} is not running")
        if self.executor.running() and self.ping():
            return Health(HealthState.OK, "")
        self.executor.wait(exit_wait)
        return unanswered_health(self.name, self.executor.pid, self.executor.running(),
                                 self.stop_requested, self.executor.returncode())

    def assert_alive(self) -> None:
        """Raise ServerDiedError with the log tail if the server is gone."""
        if not self.is_alive():
            rc = self.executor.returncode() if self.executor else None
            how = f" (exit status {rc})" if rc is not None else ""
            raise ServerDiedError(f"server {self.name} is not running{how}", self.error_log_tail())

    def reuse_problem(self) -> str | None:
        """Why this running server should not be handed to the next test (None: fine)."""
        return None

    def notify_changed(self) -> None:
        """Tell the owner (the state file) that this server started or stopped."""
        if self.on_change:
            self.on_change(self)

    # ------------------------------------------------------------- SQL (sql.py)
    def connect(self, db: str | None = None, autocommit: bool = True,
                **kwargs: Any) -> pymysql.Connection:
        """A new PyMySQL connection as root through the unix socket."""
        return self.sql.connect(db, autocommit, **kwargs)

    def connect_tcp(self, db: str | None = None, **kwargs: Any) -> pymysql.Connection:
        """A new PyMySQL connection as root over TCP to 127.0.0.1:port."""
        return self.sql.connect_tcp(db, **kwargs)

    def ping(self) -> bool:
        """True when the server answers ``SELECT 1`` right now (the check never logs)."""
        return self.sql.ping()

    def execute(self, sql: str, args: Any = None, db: str | None = None) -> list[tuple[Any, ...]]:
        """Run one statement (autocommit) and return its rows; QueryError on failure."""
        return self.sql.execute(sql, args, db)

    def query_dicts(self, sql: str, args: Any = None) -> list[dict[str, Any]]:
        """Run a statement and return rows as dicts."""
        return self.sql.query_dicts(sql, args)

    def variable(self, name: str) -> str | None:
        """A global variable's value."""
        return self.sql.variable(name)

    def status_var(self, name: str) -> str | None:
        """A global status value."""
        return self.sql.status_var(name)

    # ------------------------------------------------------------ logs (logs.py)
    def error_log_size(self) -> int:
        """The error log's current size (a mark for error_log_since)."""
        return self.errlog.size()

    def error_log_since(self, mark: int) -> str:
        """What the error log gained since error_log_size() returned mark."""
        return self.errlog.since(mark)

    def stdout_tail(self, lines: int = 400) -> str:
        """The last lines of the server's stdout/stderr (a wrapper's output, e.g. gdb's)."""
        from ..platform.logtail import tail_file
        return tail_file(self.stdout_log, lines)

    def error_log_tail(self, lines: int = 30) -> str:
        """The last lines of the error log."""
        return self.errlog.tail(lines)

    # ------------------------------------------------------------- reporting
    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description (pid, ports, paths)."""
        create_time = self.executor.create_time if self.pid is not None and self.executor else None
        return {
            "name": self.name, "type": self.server_type, "pid": self.pid,
            "create_time": create_time, "host": HOST, "port": self.port,
            **({"netns": self.net.namespace, "address": self.net.address} if self.net else {}),
            "ports": self.lease.ports, "socket": self.socket_file, "vardir": self.vardir,
            "datadir": self.datadir, "cnf": self.cnf_path, "error_log": self.error_log,
            "pid_file": self.pid_file, "lease": self.lease.lock_path,
            "basedir": self.tree.basedir, "server": self.tree.server,
            "options": [o.as_arg() for o in self.user_options], "status": int(self.is_alive()),
        }

    def info_block(self) -> list[str]:
        """kewpie's per-server block (NAME, MASTER_PORT, SOCKET_FILE, VARDIR, STATUS)."""
        return [f"NAME: {self.name}", f"MASTER_PORT: {self.port}", *self.extra_info(),
                f"SOCKET_FILE: {self.socket_file}", f"VARDIR: {self.vardir}",
                f"STATUS: {int(self.is_alive())}"]

    def extra_info(self) -> list[str]:
        """Type-specific lines of the info block (Galera ports...)."""
        return []

    def status_report(self) -> str:
        """A short status summary for failure reports ('' when nothing to add)."""
        return ""

    def __repr__(self) -> str:
        return f"<Server {self.name} port={self.port} pid={self.pid}>"
