"""A server started for mysql-test cases: its options in mysql-test-run's order.

mysqld applies options in the order it reads them, and some depend on that
order (``log-basename`` sets the default log names, so a ``log-error`` after
it wins).  kewpie's own servers merge the suite's options into kewpie's
(first position kept); a mysql-test server takes kewpie's base options only
where the test's config says nothing, then every option of the config and
command line in mtr's order.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import time
from typing import TYPE_CHECKING, Any

from .cnf import MtrConfig
from ..platform.process import ProcessExecutor
from ..servers.layout import write_private_file
from ..servers.logs import LogWatch
from ..servers.options import Option, render_cnf
from ..servers.server import Server

if TYPE_CHECKING:
    from ..servers.manager import ServerManager
    from ..servers.requirements import Requirements


MYSQLTEST_CHARSET = "latin1"   # mariadb-test's default character set
MARK_ENV = "KEWPIE_MTR_MARK"  # set while a test's servers start: the CURRENT_TEST to write
READY_LINE = re.compile(rb"\nVersion: '[^']*'\s+Socket: '")


class MtrServer(Server):
    """A plain server whose user options keep their own order (``mtr`` server kind)."""

    server_type = "mtr"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # kewpie's own connections (Galera's state, the suppressions' cleanup) speak
        # mariadb-test's latin1, so they add no collation a test can see (the feedback
        # plugin counts each one used: plugins.feedback_plugin_load)
        self.sql.charset = MYSQLTEST_CHARSET
        self.sql.socket_file = self.socket_file

    @property
    def socket_file(self) -> str:  # type: ignore[override]  # Server's is its layout's path
        """The socket the test's config gives it (mtr's ``tmp/mysqld.N.sock``)."""
        for opt in reversed(self.user_options):
            if opt.name == "socket" and opt.value:
                return opt.value
        return self.layout.socket_file

    def effective_options(self) -> list[Option]:
        """kewpie's base options the config does not set, then the config's, in its order
        (repeats kept: mysqld applies them in turn)."""
        own = {o.name for o in self.user_options}
        base = [o for o in [*self.base_options(), *self.settings.extra_defaults,
                            *self.harness_options] if o.name not in own]
        return base + [o for o in self.user_options if not o.name.startswith("-")]

    def start_args(self) -> list[str]:
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

    @property
    def stdout_log(self) -> str:  # type: ignore[override]  # Server's is its layout's path
        """The server's stdout and stderr go to the error log its config names, as under
        mtr (what it prints before opening the log, e.g. option warnings, is there too;
        a test's bare ``--log-error`` sends the server's own lines elsewhere)."""
        return self._configured_log()

    def launch(self, extra_args: tuple[str, ...] = ()) -> ProcessExecutor:
        """Launch, remembering where the error log ends (readiness is read from it)."""
        configured, path = self._configured_log(), self._log_error()
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
        return super().launch(extra_args)

    def ready(self) -> bool:
        """Ready when the error log says so -- no connection of kewpie's own, so
        connection and thread ids in results are as under mtr (which waits for the
        pid file and lets the test retry its connection); a ping when the log is
        somewhere else or not readable."""
        path = self._log_error()
        try:
            with open(path, "rb") as fh:
                fh.seek(getattr(self, "ready_mark", 0))
                text = fh.read()
        except OSError:
            return self.ping()
        # the line after "ready for connections" (which --lc-messages translates)
        return b"ready for connections" in text or READY_LINE.search(text) is not None

    def log_watch(self, needle: bytes) -> LogWatch:
        """A watch for needle in what the server's error log gained since its launch."""
        return LogWatch(self._log_error(), needle, getattr(self, "ready_mark", 0))

    def _configured_log(self) -> str:
        """The first ``log-error`` with a value -- the config's, where mtr sends the
        server's output and its CURRENT_TEST mark; a test's own ``--log-error=NAME`` comes
        after it and moves only mysqld's log (sys_vars.myisam_data_pointer_size_func) --
        in the datadir when relative, as mysqld would put it (never kewpie's working
        directory); else the layout's."""
        for opt in self.user_options:
            if opt.name == "log-error" and opt.value:
                return os.path.join(self.datadir, opt.value)  # an absolute value stays
        return self.error_log

    def _log_error(self) -> str:
        """The file mysqld writes its log to (:func:`mysqld_error_log`)."""
        return mysqld_error_log(self.user_options, self.datadir) or self.error_log

    def write_cnf(self) -> None:
        """my.cnf as kewpie writes it, except that bytes a test's .opt holds in another
        encoding than UTF-8 (kept as surrogates) reach the server unchanged."""
        client = [Option("socket", self.socket_file) if o.name == "socket" else o
                  for o in self.layout.client_options(self.port)]
        text = render_cnf({"mysqld": self.effective_options(), "client": client,
                           **self.extra_cnf_sections()})
        try:
            text.encode()
        except UnicodeEncodeError:
            data = text.encode("utf-8", "surrogateescape")
            write_private_file(self.cnf_path, "", self.settings.user)
            with open(self.cnf_path, "wb") as fh:  # the file exists with its final mode
                fh.write(data)
            return
        write_private_file(self.cnf_path, text, self.settings.user)

    def extra_cnf_sections(self) -> dict[str, list[Option]]:
        """The test config's tool groups (:data:`TOOL_GROUPS`: Galera's SST scripts and
        the mariabackup they run read the server's my.cnf), taken from the bot's mtr
        ``my.cnf`` next to the vardir."""
        path = os.path.join(os.path.dirname(self.vardir), "my.cnf")
        if not os.path.isfile(path):
            return {}
        return tool_sections(MtrConfig.read(path))


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
        options = [] if group is None else [
            Option(str(n).replace("_", "-"), v) for n, v in group.options
            if not str(n).startswith("#")]
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


def is_wsrep(server: Server) -> bool:
    """The server's options switch Galera replication on (a galera suite's node)."""
    for opt in server.user_options:
        if opt.name == "wsrep-on" and (opt.value or "1").lower() in ("1", "on", "true"):
            return True
    return False


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
