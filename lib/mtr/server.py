"""A server started for mysql-test cases: its options in mysql-test-run's order.

mysqld applies options in the order it reads them, and some depend on that
order (``log-basename`` sets the default log names, so a ``log-error`` after
it wins).  kewpie's own servers merge the suite's options into kewpie's rules
(first position kept); a mysql-test server takes kewpie's rules
(:data:`~lib.servers.cnf_rules.SERVER_RULES`) only where the test's config says
nothing, then every option of the config and command line in mtr's order.  A
server whose options switch wsrep on is a Galera node, :class:`MtrGaleraServer`
(:func:`mtr_server` picks the class).
"""
from __future__ import annotations

import os
import re
import shutil
import socket
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from .cnf import MtrConfig
from ..platform.ports import PortLease
from ..platform.process import ProcessExecutor
from ..servers.cnf import Rule, run_rules
from ..servers.cnf_rules import CLIENT_RULES, SERVER_RULES
from ..servers.codetree import CodeTree
from ..servers.galera import GaleraServer, JoinWatch
from ..servers.layout import ServerLayout
from ..servers.options import Option
from ..servers.server import Server, ServerSettings

if TYPE_CHECKING:
    from ..platform.netns import NetHost
    from ..platform.netrules import NetworkControl


MYSQLTEST_CHARSET = "latin1"   # mariadb-test's default character set
MARK_ENV = "KEWPIE_MTR_MARK"  # set while a test's servers start: the CURRENT_TEST to write
READY_LINE = re.compile(rb"\nVersion: '[^']*'\s+Socket: '")


class MtrServer(Server):
    """A plain server whose user options keep their own order (``mtr`` server kind)."""

    server_type = "mtr"
    _mysqld_rules: tuple[Rule[Any], ...] = SERVER_RULES   # kewpie's where the config is silent
    # (not Galera's: a node's wsrep options are its config's)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # kewpie's own connections (Galera's state, the suppressions' cleanup) speak
        # mariadb-test's latin1, so they add no collation a test can see (the feedback
        # plugin counts each one used: plugins.feedback_plugin_load), and are closed
        # after kewpie's reads
        self.sql.charset = MYSQLTEST_CHARSET
        self.sql.socket_file = self.paths.socket_file
        self.sql.keep = False
        self.ready_mark = 0

    @property
    def paths(self) -> ServerLayout:
        """Its layout, with the socket the test's config gives it (mtr's
        ``tmp/mysqld.N.sock``) and its output in the error log its config names."""
        layout = self._layout
        socket = next((o.value for o in reversed(self.user_options)
                       if o.name == "socket" and o.value), layout.socket_file)
        return replace(layout, socket_file=socket, stdout_log=self._configured_log())

    def effective_options(self) -> list[Option]:
        """kewpie's rules the config does not set, then the config's, in its order
        (repeats kept: mysqld applies them in turn)."""
        own = {o.name for o in self.user_options}
        base = [o for o in [*run_rules(self._mysqld_rules, self), *self.settings.extra_defaults,
                            *self.harness_options] if o.name not in own]
        return base + [o for o in self.user_options if not o.name.startswith("-")]

    def _start_args(self) -> list[str]:
        """Short options of the test (``-V...``): on the command line, as mtr passes them."""
        return [o.name for o in self.user_options if o.name.startswith("-")]

    @property
    def port(self) -> int:
        """The client port the test's config gave it (mtr numbers a set's servers'
        ports consecutively, and include files rely on it); its lease's first otherwise."""
        for opt in reversed(self.user_options):
            if opt.name == "port" and (opt.value or "").isdigit():
                return int(opt.value or 0)
        return self.lease.port(0)

    def _launch(self, extra_args: tuple[str, ...] = ()) -> ProcessExecutor:
        """Launch, remembering where the error log ends (readiness is read from it)."""
        configured, path = self._configured_log(), self._mysqld_log()
        for log in {configured, path}:
            if not os.path.exists(log) and os.path.isdir(os.path.dirname(log)):
                with open(log, "ab"):
                    pass
                if self.settings.user:
                    shutil.chown(log, self.settings.user, self.settings.user)
        mark = self.settings.env.get(MARK_ENV)
        if mark:  # started for a test: mtr's mark_log comes before the server's startup lines
            try:
                with open(configured, "a") as fh:
                    fh.write(f"CURRENT_TEST: {mark}\n")
            except OSError:
                pass
        self.ready_mark = _size(path)
        return super()._launch(extra_args)

    def _ready(self) -> bool:
        """Ready when the error log says so -- no connection of kewpie's own, so
        connection and thread ids in results are as under mtr (which waits for the
        pid file and lets the test retry its connection); a ping when the log is
        somewhere else or not readable."""
        try:
            with open(self._mysqld_log(), "rb") as fh:
                fh.seek(self.ready_mark)
                text = fh.read()
        except OSError:
            return self.sql.ping()
        # the line after "ready for connections" (which --lc-messages translates)
        return b"ready for connections" in text or READY_LINE.search(text) is not None

    def _configured_log(self) -> str:
        """The first ``log-error`` with a value -- the config's, where mtr sends the
        server's output and its CURRENT_TEST mark; a test's own ``--log-error=NAME`` comes
        after it and moves only mysqld's log (sys_vars.myisam_data_pointer_size_func) --
        in the datadir when relative, as mysqld would put it (never kewpie's working
        directory); else the layout's."""
        for opt in self.user_options:
            if opt.name == "log-error" and opt.value:
                return os.path.join(self._layout.datadir, opt.value)  # an absolute one stays
        return self._layout.error_log

    def _mysqld_log(self) -> str:
        """The file mysqld writes its log to (:func:`mysqld_error_log`)."""
        return mysqld_error_log(self.user_options, self._layout.datadir) or self._layout.error_log

    def _cnf_sections(self) -> dict[str, list[Option]]:
        """my.cnf as kewpie writes it (the client's socket the config's), with the test
        config's tool groups (:data:`TOOL_GROUPS`: Galera's SST scripts and the mariabackup
        they run read the server's my.cnf), taken from the bot's mtr ``my.cnf`` next to
        the vardir."""
        client = [Option("socket", self.paths.socket_file) if o.name == "socket" else o
                  for o in run_rules(CLIENT_RULES, self)]
        path = os.path.join(os.path.dirname(self._layout.vardir), "my.cnf")
        tools = tool_sections(MtrConfig.read(path)) if os.path.isfile(path) else {}
        return {"mysqld": self.effective_options(), "client": client, **tools}


class MtrGaleraServer(MtrServer, GaleraServer):
    """A mysql-test case's Galera node: a node of the one node type
    (:class:`~lib.servers.galera.GaleraServer`: its readiness by its log, the watch for
    a failed join, its wsrep status, the one formation of lib/servers/galera_cluster.py)
    with the options, order, log and readiness of an mtr server: its config's wsrep
    options, not kewpie's, and started as mtr starts it."""

    server_type = "mtr"
    _extra_dirs: tuple[str, ...] = ()   # its SST scripts' directories are its config's

    def start(self, timeout: float | None = None, wait: bool = True,
              extra_args: list[str] | tuple[str, ...] = (), new_cluster: bool = False) -> None:
        """As mtr starts a server: no ``--wsrep-new-cluster`` (its config's ``gcomm://``
        bootstraps) and no ``--wsrep-recover`` (the server recovers its position)."""
        Server.start(self, timeout=timeout, wait=wait, extra_args=extra_args)

    def discard(self, fast: bool = False) -> None:
        """As mtr stops a server: cleanly (not kill -9 as a native node)."""
        Server.discard(self, fast)

    def _join_watch(self, path: str, mark: int) -> JoinWatch:
        """Its log's watch, Synced only once the log also says ready for connections
        (no SQL of kewpie's before: connection ids as under mtr)."""
        return JoinWatch(path, mark, gate=self._ready)


def mtr_server(name: str, index: int, tree: CodeTree, vardir: str, lease: PortLease,
               options: list[Option], settings: ServerSettings,
               on_change: Callable[[Server], None] | None = None,
               net: "tuple[NetHost, NetworkControl] | None" = None) -> Server:
    """The mtr kind's server: a Galera node (:class:`MtrGaleraServer`) when its options
    switch wsrep on, else an :class:`MtrServer`."""
    cls = MtrGaleraServer if wsrep_on(options) else MtrServer
    return cls(name, index, tree, vardir, lease, options, settings, on_change, net)


TOOL_GROUPS = ("sst", "xtrabackup", "mariabackup", "mariadb-backup")
"""Groups of an mtr config that tools started by the server read from its my.cnf: the SST
scripts' ``[sst]`` and mariabackup's own (``galera.galera_sst_mariabackup_use_memory`` sets
``[mariabackup] use_memory``). mtr hands the server its whole my.cnf; kewpie writes a file
per server, so these groups are copied into it."""


def tool_sections(config: MtrConfig) -> dict[str, list[Option]]:
    """The config's :data:`TOOL_GROUPS` that hold options, in that order, ``#`` lines out."""
    sections: dict[str, list[Option]] = {}
    for name in TOOL_GROUPS:
        group = config.group(name)
        options = [] if group is None else group.as_options()
        if options:
            sections[name] = options
    return sections


def mysqld_error_log(options: list[Option], datadir: str, host: str = "") -> str:
    """Where mysqld writes its error log with these options ('' when no ``log-error``):
    the last ``log-error``'s value (in the datadir when relative, ``.err`` added when it
    has no extension) or, for a bare ``--log-error`` (binlog.binlog_stm_unsafe_warning),
    mysqld's default: the pid file's name up to its first ``.`` with ``.err``
    (``fn_format(pidfile_name, datadir, ".err", MY_REPLACE_EXT)``: ``run/mysqld.1.pid``
    gives ``run/mysqld.err``), in the datadir when the name has no directory."""
    def last(name: str) -> str | None:
        """The value of the last option called name (None: not given or bare)."""
        for opt in reversed(options):
            if opt.name == name:
                return opt.value or None
        return None
    datadir = last("datadir") or datadir
    for opt in reversed(options):
        if opt.name != "log-error":
            continue
        if opt.value:
            path = opt.value if "." in os.path.basename(opt.value) else opt.value + ".err"
            return os.path.join(datadir, path)   # an absolute value stays as it is
        pid = last("pid-file") or (last("log-basename")
                                   or (host or socket.gethostname()).split(".")[0]) + ".pid"
        head, name = os.path.split(pid)   # MY_REPLACE_EXT: from the name's first '.'
        return os.path.join(datadir, head, name.split(".", 1)[0] + ".err")
    return ""


def wsrep_on(options: list[Option]) -> bool:
    """The options switch Galera replication on (a galera suite's node)."""
    for opt in options:
        if opt.name == "wsrep-on" and (opt.value or "1").lower() in ("1", "on", "true"):
            return True
    return False


def is_wsrep(server: Server) -> bool:
    """The server is a Galera node of a mysql-test case."""
    return isinstance(server, GaleraServer)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
