"""One managed MySQL-family server: the composition of its parts.

A :class:`Server` puts together its files (:attr:`Server.paths`, a
:class:`~lib.servers.layout.ServerLayout`), its my.cnf (the rule tables of
:mod:`lib.servers.cnf_rules` with the suite's options layered over them), its
SQL client (``server.sql``, :mod:`lib.servers.sql`), its error log
(``server.errlog``, :mod:`lib.servers.logs`), a port lease and a
:class:`~lib.platform.process.ProcessExecutor`, and implements the lifecycle
protocols of :mod:`lib.servers.lifecycle`: ``start`` (pre-start port check,
launch, readiness by a real SQL ping, fail fast on exit), ``stop`` (the
platform's one stop policy, with SQL ``SHUTDOWN`` as its request to exit),
``discard``, ``kill``, ``pause``/``resume``/``paused`` and ``restart``.
``with server:`` starts it and stops it.  Its public names are few (a test of
tests/unit/servers/test_server_api_size.py counts them): what a test or a tool uses;
the steps of a start are the subclasses' hooks (``_launch``, ``_ready``...).
kewpie 2012's names are not here: 2012 tests get servers wrapped by
:mod:`lib.kewpie2012.server_compat`.
"""
from __future__ import annotations

import os
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, NoReturn


from ..errors import ServerStartError
from ..platform.launcher import Launcher
from ..platform.lifecycle import ReadyWait, StopResult
from ..platform.logsetup import get_logger
from ..platform.netns import NetHost
from ..platform.netrules import NetworkControl
from ..platform.ports import PortLease, port_is_free
from ..platform.process import ProcessExecutor, TAG_NAME, stop_tagged
from .cnf import Rule, run_rules, write_cnf
from .cnf_rules import CLIENT_RULES, SERVER_RULES
from .codetree import CodeTree
from .faultwindows import FaultWindows
from .health import Health, HealthState, unanswered_health
from .layout import HOST, SOCKET_PATH_MAX, ServerLayout, write_private_file
from .logs import ErrorLog
from .options import Option, merge, parse_options
from .sql import SqlClient, handshake_wait
from .trees import TreeSet, resolve_tree, switch_tree

if TYPE_CHECKING:
    import pymysql
    from .wrappers import ServerWrapper

# Names other modules import from here (they moved to the parts above).
__all__ = ("HOST", "SOCKET_PATH_MAX", "Health", "Server", "ServerSettings", "launch_env",
           "write_files", "write_private_file")
HELPER_GRACE = 1.0   # seconds a stopped server's helpers get between SIGTERM and SIGKILL
FAST_STOP = 5.0      # seconds a server stopped on an interrupt gets before SIGKILL


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


def launch_env(server: "Server") -> dict[str, str]:
    """The environment of the server process and of everything it runs (SST scripts,
    mariabackup, rsync, socat, its mariadb-upgrade): the run's tags, the server's tag,
    and ``TMPDIR`` inside the vardir so no tool falls back to /tmp."""
    env = dict(server.settings.env)
    env[TAG_NAME] = server.paths.vardir
    env["TMPDIR"] = server.paths.tmpdir
    if server.tree.bin_dirs():  # a relocated tree's SST scripts and tools come first
        env["PATH"] = os.pathsep.join([*server.tree.bin_dirs(), env.get("PATH", "")])
    return env


def write_files(server: "Server") -> None:
    """Make the server's vardir tree and write its my.cnf without starting it (a tool
    reads its options: a backup restored into a server that never ran)."""
    server.paths.make_dirs()
    server._write_cnf()


class Server:
    """A MySQL-family server managed by kewpie (Startable, Stoppable, Killable,
    Pausable, HasLogs; a context manager that starts and stops it)."""

    server_type = "mysql"
    _mysqld_rules: tuple[Rule[Any], ...] = SERVER_RULES   # kewpie's [mysqld] (cnf_rules)
    _extra_dirs: tuple[str, ...] = ()   # vardir subdirectories besides log, tmp, run

    def __init__(self, name: str, index: int, tree: CodeTree, vardir: str, lease: PortLease,
                 options: list[Option], settings: ServerSettings,
                 on_change: Callable[["Server"], None] | None = None,
                 net: "tuple[NetHost, NetworkControl] | None" = None) -> None:
        """net: with network = 'namespaces', the server's namespace and address, and the
        set's network fault control (lib.platform.netns, lib.platform.netrules)."""
        self.name: str = name
        self.index: int = index
        self.tree: CodeTree = tree
        self.lease: PortLease = lease
        self.user_options: list[Option] = list(options)
        self.harness_options: list[Option] = []
        self.settings: ServerSettings = settings
        self._on_change = on_change
        self.net: NetHost | None = net[0] if net else None
        self.network: NetworkControl | None = net[1] if net else None
        self.host = self.net.address if self.net else HOST
        self._layout = ServerLayout.under(vardir, settings.socket_fallback_dir, lease.first,
                                          tuple(os.path.join(vardir, d) for d in self._extra_dirs),
                                          settings.user)
        self.errlog = ErrorLog(self.paths.error_log)
        self.sql = SqlClient(name, self.paths.socket_file, self.port, self.is_alive,
                             self.errlog.tail)
        self.executor: ProcessExecutor | None = None
        self.start_count = 0
        self._launched_at = 0.0  # time.monotonic() of the latest launch
        self._ready_by = 0.0     # time.monotonic() when the readiness wait gives up
        self.stop_requested = False
        self.fault_windows = FaultWindows()  # recorded by faults, read by the warnings check
        self._log = get_logger()

    @property
    def paths(self) -> ServerLayout:
        """Where its files are: ``vardir``, ``datadir``, ``logdir``, ``tmpdir``,
        ``rundir``, ``cnf_path``, ``error_log``, ``stdout_log``, ``pid_file``,
        ``socket_file`` (lib.servers.layout)."""
        return self._layout

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
            with open(self.paths.pid_file) as fh:
                return int(fh.read().strip())
        except (OSError, ValueError):
            return pid

    # ------------------------------------------------------------ config file
    def effective_options(self) -> list[Option]:
        """kewpie's rules (lib/servers/cnf_rules.py), then settings' extras, then the
        harness's per-role ones, then the suite's, then --mysqld's: a later option of the
        same name wins."""
        return merge(run_rules(self._mysqld_rules, self), self.settings.extra_defaults,
                     self.harness_options, self.user_options, self.settings.final_options)

    def _cnf_sections(self) -> dict[str, list[Option]]:
        """my.cnf: [mysqld] (effective_options), [client] (CLIENT_RULES), and the
        subclasses' groups (Galera's [sst])."""
        return {"mysqld": self.effective_options(), "client": run_rules(CLIENT_RULES, self)}

    def _write_cnf(self) -> None:
        """Write ``my.cnf``, private (lib/servers/cnf.py)."""
        write_cnf(self.paths.cnf_path, self._cnf_sections(), self.settings.user)

    def _start_args(self) -> list[str]:
        """Extra command-line arguments for every start (subclasses add theirs)."""
        return []

    def _changed(self) -> None:
        """Tell the owner (the state file) that this server started or stopped."""
        if self._on_change:
            self._on_change(self)

    # ------------------------------------------------------------ starting
    def start(self, timeout: float | None = None, wait: bool = True,
              extra_args: list[str] | tuple[str, ...] = ()) -> None:
        """Launch the server unless running: the pre-start check (the port is free), the
        launch, and with wait the readiness poll, which fails fast when the process exits.
        A failed start raises ServerStartError with the error log's tail."""
        if self.is_alive():
            return
        if not port_is_free(self.port):
            raise ServerStartError(f"server {self.name}: port {self.port} is already in use by "
                                   f"another process (pre-start check)")
        self._launch(tuple(extra_args))
        if wait:
            self._await_ready(timeout or self.settings.start_timeout)

    def _launch(self, extra_args: tuple[str, ...] = ()) -> ProcessExecutor:
        """Write my.cnf and start mariadbd (as the server user, holding the lease fd)."""
        if os.path.exists(self.paths.socket_file):
            os.unlink(self.paths.socket_file)
        self._write_cnf()
        argv = [self.tree.server, f"--defaults-file={self.paths.cnf_path}", *self._start_args(),
                *extra_args]
        if self.settings.wrapper is not None:  # valgrind, rr, gdb... (lib.servers.wrappers)
            argv = self.settings.wrapper.wrap(self, argv)
        self.executor = ProcessExecutor(argv, launch_env(self), self.paths.stdout_log,
                                        user=self.settings.user,
                                        pass_fds=(self.lease.fd,) if self.lease.fd >= 0 else (),
                                        die_with_parent=self.settings.die_with_parent,
                                        cwd=self.paths.vardir, launcher=self.settings.launcher,
                                        netns=self.net.namespace if self.net else None)
        self.stop_requested = False
        self.sql.close()
        self.executor.start()
        self._launched_at = time.monotonic()
        self.start_count += 1
        self._changed()
        return self.executor

    def _ready(self) -> bool:
        """The readiness check polled after launch: a real SQL ping here, whose handshake
        may take until the wait's deadline (never abandoned while the server is busy
        starting: lib/servers/sql.py ``handshake_wait``)."""
        return self.sql.ping(handshake_wait(self._ready_by))

    def wait_ready(self, timeout: float | None = None, since_launch: bool = False) -> None:
        """Wait for a server started with wait=False: ready, or ServerStartError.
        since_launch: the timeout counts from its launch, not from now (a set launched
        ahead of its test); a server not seen answering within it has timed out."""
        if self.executor is None:
            raise ServerStartError(f"server {self.name} was never started")
        timeout = timeout or self.settings.start_timeout
        left = timeout - (time.monotonic() - self._launched_at) if since_launch else timeout
        if left <= 0:
            self._start_failed(ReadyWait.TIMEOUT, timeout)
        self._await_ready(left)

    def _await_ready(self, timeout: float) -> None:
        """Poll _ready until it is true; _start_failed raises when the process exits or
        timeout passes first."""
        assert self.executor is not None
        self._ready_by = time.monotonic() + timeout
        ok, why = self.executor.wait_ready(self._ready, timeout)
        if not ok:
            self._start_failed(ReadyWait(why), timeout)

    def _start_failed(self, why: ReadyWait, timeout: float) -> NoReturn:
        """Raise ServerStartError with the error log's tail (killing a server that hangs)."""
        assert self.executor is not None
        if why is ReadyWait.EXITED:
            rc = self.executor.returncode()
            self._changed()
            raise ServerStartError(f"server {self.name} exited with status {rc} while starting "
                                   f"(error log: {self.paths.error_log})",
                                   self.errlog.tail_or_note())
        self.executor.kill()
        self._changed()
        raise ServerStartError(f"server {self.name} did not answer within {timeout:g}s "
                               f"(error log: {self.paths.error_log})", self.errlog.tail_or_note())

    # ------------------------------------------------------------- stopping
    def stop(self, timeout: float | None = None, clean: bool = True) -> StopResult:
        """Stop by the platform's one policy (lib/platform/process.py): SIGCONT, SQL
        ``SHUTDOWN`` (SIGTERM when it is not taken -- a joiner in SST -- or without
        clean), a bounded wait, then SIGKILL; then what it left behind.  Says how it ended."""
        timeout = timeout or self.settings.shutdown_timeout
        self.sql.close()
        self.stop_requested = True
        if self.executor is None:
            return StopResult.GONE
        how = self.executor.stop(timeout, request=self.sql.shutdown if clean else None)
        if how is not StopResult.GONE:
            self._reap_helpers(HELPER_GRACE)
        self._changed()
        return how

    def discard(self, fast: bool = False) -> None:
        """Stop a server whose datadir will not be used again: a clean stop here (fast,
        on an interrupt: SIGTERM, SIGKILL after FAST_STOP seconds)."""
        if fast:
            self.stop(FAST_STOP, clean=False)
        else:
            self.stop()

    def kill(self) -> None:
        """kill -9 the server and what it started, and reap it (a kill asked for is not
        a crash): the stop policy's last step alone.  The kept connection is closed
        after the kill: a thread blocked reading it (a test's query, when the watchdog
        kills from its own thread) holds its reader's lock until the server's death ends
        the read."""
        self.stop_requested = True
        if self.executor is not None:
            self.executor.kill()
        self.sql.close()
        self._reap_helpers(0)
        self._changed()

    def _reap_helpers(self, grace: float) -> None:
        """Stop what the server started and left behind (SST scripts, rsync, socat...)
        by the stop policy, with grace seconds between SIGTERM and SIGKILL (0: SIGKILL).

        They inherit the server's tag, so they are found even when they left its
        process group.
        """
        stop_tagged(TAG_NAME, self.paths.vardir, grace)

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
        tree = resolve_tree(self, basedir) if basedir is not None else None
        self.stop()
        if options is not None:
            self.user_options = parse_options(options)
        if tree is not None:
            switch_tree(self, tree)
        self.start(timeout=timeout)

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
        if self.executor.running() and self.sql.ping():
            return Health(HealthState.OK, "")
        self.executor.wait(exit_wait)
        return unanswered_health(self.name, self.executor.pid, self.executor.running(),
                                 self.stop_requested, self.executor.returncode())

    def reuse_problem(self) -> str | None:
        """Why this running server should not be handed to the next test (None: fine)."""
        return None

    # ------------------------------------------------------------- SQL (sql.py)
    def connect(self, db: str | None = None, autocommit: bool = True,
                **kwargs: Any) -> pymysql.Connection:
        """A new PyMySQL connection as root through the unix socket (``server.sql``
        has more: ``connect_tcp``, ``ping``, ``query_dicts``)."""
        return self.sql.connect(db, autocommit, **kwargs)

    def execute(self, sql: str, args: Any = None, db: str | None = None) -> list[tuple[Any, ...]]:
        """Run one statement (autocommit) and return its rows; QueryError on failure."""
        return self.sql.execute(sql, args, db)

    def variable(self, name: str) -> str | None:
        """A global variable's value."""
        return self.sql.variable(name)

    def status_var(self, name: str) -> str | None:
        """A global status value."""
        return self.sql.status_var(name)

    # ------------------------------------------------------------- reporting
    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description (pid, ports, paths)."""
        create_time = self.executor.create_time if self.pid is not None and self.executor else None
        paths = self.paths
        return {
            "name": self.name, "type": self.server_type, "pid": self.pid,
            "create_time": create_time, "host": HOST, "port": self.port,
            **({"netns": self.net.namespace, "address": self.net.address} if self.net else {}),
            "ports": self.lease.ports, "socket": paths.socket_file, "vardir": paths.vardir,
            "datadir": paths.datadir, "cnf": paths.cnf_path, "error_log": paths.error_log,
            "pid_file": paths.pid_file, "lease": self.lease.lock_path,
            "basedir": self.tree.basedir, "server": self.tree.server,
            "options": [o.as_arg() for o in self.user_options], "status": int(self.is_alive()),
        }

    def status_report(self) -> str:
        """A short status summary for failure reports ('' when nothing to add)."""
        return ""

    def __repr__(self) -> str:
        return f"<Server {self.name} port={self.port} pid={self.pid}>"
