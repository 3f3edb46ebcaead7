"""Galera nodes: a Server with wsrep settings, four ports, and wsrep status.

:class:`GaleraServer` is the one node type: kewpie's own Galera suites' nodes
and mysql-test's (``lib.mtr.server.MtrGaleraServer`` is one, with the options
of its test's config instead of :data:`GALERA_RULES`).  What every node does
the same way lives here: its readiness (no SQL before its log says Synced),
the watch of its log for a failed join (:class:`JoinWatch`), its saved state
(``grastate.dat``, :func:`saved_position`), a stop's fault window, its wsrep
status.  Forming clusters of them is :mod:`lib.servers.galera_cluster`'s.

Ports of a native node's lease: 0 client, 1 group communication
(``gmcast.listen_addr``), 2 IST (``ist.recv_addr``), 3 SST
(``wsrep_sst_receive_address``), all on 127.0.0.1.  The SST scripts keep their
temporary files and log archive inside the node's vardir (``[sst]`` section,
plus ``TMPDIR`` in the node's environment: the joiner's ``mktemp -d`` and
``mariabackup --prepare`` read only that), and their socat binds 127.0.0.1
(``[sst] sockopt``), as the rsync daemon does for a local address.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..errors import QueryError, ServerStartError
from ..platform.logtail import tail_file
from ..platform.tools import run_tool
from .cnf import Rule, run_rules
from .cnf_rules import SERVER_RULES
from .faultwindows import TARGET, FaultWindow, FaultWindows
from .layout import HOST
from .logs import LogWatch
from .options import Option
from .server import Server, launch_env

if TYPE_CHECKING:
    from ..platform.lifecycle import StopResult
    from ..platform.process import ProcessExecutor

SST_USER = "kewpie_sst"
SST_PASSWORD = "kewpie-sst-pw"
SST_GRANTS = "RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR, REPLICA MONITOR"
# How long a mariabackup joiner's socat waits for the donor's first byte
# (upstream: 300 s).  Its listener is the one helper that can outlive a
# SIGKILLed kewpie (the later stage watches its mariadbd and exits with it).
SST_INITIAL_TIMEOUT = 120
# Faster membership rounds than Galera's 1 s defaults; the failure-detection
# timeouts (evs.suspect_timeout, evs.inactive_timeout) stay at their defaults.
# evs.keepalive_period: an idle node is noticed by a peer only through its next
# message, so nodes that came up in separate views (a warm start's nodes do, about
# one time in two) waited up to 1 s for a keepalive before merging; 0.1 s is
# Galera's lower bound for it and for evs.join_retrans_period.
PROVIDER_DEFAULTS = ("gcache.size=10M", "evs.join_retrans_period=PT0.1S",
                     "evs.keepalive_period=PT0.1S", "evs.inactive_check_period=PT0.2S")
WSREP_STATUS_KEYS = ("wsrep_ready", "wsrep_connected", "wsrep_local_state_comment",
                     "wsrep_cluster_size", "wsrep_cluster_status", "wsrep_last_committed",
                     "wsrep_local_state_uuid", "wsrep_local_recv_queue",
                     "wsrep_local_bf_aborts", "wsrep_local_cert_failures")
POSITION_KEYS = ("wsrep_local_state_uuid", "wsrep_last_committed")
SYNCED_LINE = b"WSREP: Synchronized with group"   # a node's error log as it reaches Synced
GROUP_JOINED_LINE = b"WSREP: gcomm: connected"     # ... as it is in its group
# A joiner whose state transfer failed stays up, out of its group, until restarted:
# ``Receiving IST failed, node restart required: ... 'IST didn't contain all write sets,
# expected last: 6 last received: 5'`` (its donor had only just finished its own IST, or
# an IST was cut short by a fault).
JOIN_FAILED_LINE = b"node restart required"
RECOVERED_RE = re.compile(r"Recovered position:?\s+([0-9a-f-]{36}):(-?\d+)")


@dataclass(frozen=True)
class GraState:
    """The contents of a node's grastate.dat."""

    uuid: str
    seqno: int
    safe_to_bootstrap: int = 0

    def render(self) -> str:
        """grastate.dat text."""
        return ("# GALERA saved state\nversion: 2.1\n"
                f"uuid:    {self.uuid}\nseqno:   {self.seqno}\n"
                f"safe_to_bootstrap: {self.safe_to_bootstrap}\n")


def read_grastate(path: str) -> GraState | None:
    """Parse grastate.dat (None if missing or unreadable)."""
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError:
        return None
    fields = dict(re.findall(r"^(\w+):\s*(\S+)", text, re.M))
    try:
        return GraState(fields["uuid"], int(fields["seqno"]), int(fields.get("safe_to_bootstrap", 0)))
    except (KeyError, ValueError):
        return None


def sst_sockopt(host: str = HOST) -> str:
    """socat address options for the mariabackup SST: bind to host (loopback)."""
    return f"bind={host}"


def merge_provider_options(ours: list[str], theirs: str | None) -> str:
    """Join provider options; a key the suite sets replaces ours."""
    merged: dict[str, str] = {}
    for item in ours + [p for p in (theirs or "").split(";")]:
        item = item.strip()
        if not item:
            continue
        key = item.split("=", 1)[0].strip()
        merged[key] = item
    return ";".join(merged.values())


def _provider_options(node: "GaleraServer") -> str:
    """kewpie's provider options (the node's ports on its address, faster membership
    rounds) with the suite's merged in (a key the suite sets replaces ours)."""
    theirs = next((o.value for o in node.user_options if o.name == "wsrep-provider-options"),
                  None)
    return merge_provider_options(
        [f"gmcast.listen_addr=tcp://{node.host}:{node.lease.port(1)}",
         f"ist.recv_addr={node.host}:{node.lease.port(2)}", *PROVIDER_DEFAULTS], theirs)


GALERA_RULES: tuple[Rule["GaleraServer"], ...] = (
    Rule("binlog-format", "ROW"),
    Rule("innodb-autoinc-lock-mode", "2"),
    Rule("wsrep-on", "ON"),
    Rule("wsrep-provider", lambda n: n.settings.wsrep_provider),
    Rule("wsrep-cluster-name", "kewpie"),
    Rule("wsrep-cluster-address",
         lambda n: f"gcomm://{','.join(n.cluster_peers or [n.gmcast_address])}"),
    Rule("wsrep-node-address", lambda n: n.host),
    Rule("wsrep-node-name", lambda n: n.name),
    Rule("wsrep-node-incoming-address", lambda n: f"{HOST}:{n.port}"),
    Rule("wsrep-provider-options", _provider_options),
    Rule("wsrep-sst-receive-address", lambda n: f"{n.host}:{n.lease.port(3)}"),
    Rule("wsrep-sst-method", lambda n: n.settings.wsrep_sst_method),
    Rule("wsrep-sst-auth", f"{SST_USER}:{SST_PASSWORD}"),
)
"""kewpie's [mysqld] options of a native node, after :data:`SERVER_RULES`."""

SST_RULES: tuple[Rule["GaleraServer"], ...] = (
    Rule("tmpdir", lambda n: n.sst_dir),
    Rule("sst-log-archive-dir", lambda n: n.sst_log_dir),
    Rule("sockopt", lambda n: sst_sockopt(n.host)),
    Rule("sst-initial-timeout", str(SST_INITIAL_TIMEOUT)),
)
"""The SST scripts' [sst] group: their temp files and logs stay in the vardir, socat
listens (and connects from) the node's address only, and a joiner's socat orphaned
before its donor connected gives up after SST_INITIAL_TIMEOUT seconds.
wsrep_sst_mariabackup appends ``,<sockopt>`` to both ``TCP-LISTEN:<port>,reuseaddr``
(joiner) and ``TCP:<host>:<port>`` (donor); without it the joiner's socat binds 0.0.0.0."""


class JoinWatch:
    """What a node's error log said since its launch: Synced, in its group, or that its
    state transfer failed (Galera then leaves it running, out of its group, for good).
    A log kewpie cannot read (not there yet, or elsewhere) says Synced: SQL decides.
    gate, when given, must say yes too before the node counts as Synced (a mysql-test
    node's log saying ready for connections)."""

    def __init__(self, path: str, mark: int, gate: Callable[[], bool] | None = None) -> None:
        self.synced_watch = LogWatch(path, SYNCED_LINE, mark)
        self.group_watch = LogWatch(path, GROUP_JOINED_LINE, mark)
        self.failed_watch = LogWatch(path, JOIN_FAILED_LINE, mark)
        self.gate = gate

    def readable(self) -> bool:
        """True when the log is there to be watched."""
        return self.synced_watch.exists()

    def synced(self) -> bool:
        """The log says the node reached Synced (True when it cannot be read)."""
        return (not self.readable() or self.synced_watch.seen()) and \
            (self.gate is None or self.gate())

    def in_group(self) -> bool:
        """The log says the node is connected to its group."""
        return self.group_watch.seen()

    def failed(self) -> bool:
        """The log says the node's state transfer failed (node restart required)."""
        return self.failed_watch.seen()


class GaleraServer(Server):
    """A MariaDB Galera node managed by kewpie."""

    server_type = "galera"
    _mysqld_rules: tuple[Rule[Any], ...] = (*SERVER_RULES, *GALERA_RULES)
    _extra_dirs: tuple[str, ...] = ("sst", "sst_log")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cluster_peers: list[str] = []   # its cluster's gmcast addresses (formation)
        self.sst_dir: str = os.path.join(self.paths.vardir, "sst")
        self.sst_log_dir: str = os.path.join(self.paths.vardir, "sst_log")
        self.sql.unreplicated_session += ("SET SESSION wsrep_on = OFF",)
        self.joining = JoinWatch(self._mysqld_log(), 0)   # renewed at each launch
        self.stop_window: FaultWindow | None = None  # opened by stop(), closed when Synced
        self._new_cluster_next_start = False
        self._start_position: str | None = None

    @property
    def gmcast_address(self) -> str:
        """``host:<group communication port>`` for other nodes' cluster address."""
        return f"{self.host}:{self.lease.port(1)}"

    # ------------------------------------------------------------ config
    def effective_options(self) -> list[Option]:
        """As for any server, except the provider options: kewpie's with the suite's
        merged in (:data:`GALERA_RULES`), not the suite's alone."""
        opts = super().effective_options()
        merged = Option("wsrep-provider-options", _provider_options(self))
        return [merged if o.name == "wsrep-provider-options" else o for o in opts]

    def _cnf_sections(self) -> dict[str, list[Option]]:
        """[mysqld], [client] and the SST scripts' [sst] (:data:`SST_RULES`)."""
        return {**super()._cnf_sections(), "sst": run_rules(SST_RULES, self)}

    def _start_args(self) -> list[str]:
        """``--wsrep-new-cluster`` for a bootstrap, a recovered start position after a crash."""
        args = []
        if self._new_cluster_next_start:
            args.append("--wsrep-new-cluster")
            self._new_cluster_next_start = False
        if self._start_position:
            args.append(f"--wsrep-start-position={self._start_position}")
            self._start_position = None
        return args

    def _mysqld_log(self) -> str:
        """The file mariadbd writes its error log to (watched for Synced)."""
        return self.paths.error_log

    # ------------------------------------------------------------ lifecycle
    def start(self, timeout: float | None = None, wait: bool = True,
              extra_args: list[str] | tuple[str, ...] = (), new_cluster: bool = False) -> None:
        """Start the node (bootstrapping a new cluster when asked).

        After a crash (grastate seqno -1 with data present), the position is
        first recovered with ``--wsrep-recover`` so the node can rejoin by IST.
        """
        if self.is_alive():
            return
        self._new_cluster_next_start = new_cluster
        if not new_cluster:
            self._start_position = recover_position(self)
        super().start(timeout=timeout, wait=wait, extra_args=extra_args)

    def stop(self, timeout: float | None = None, clean: bool = True) -> StopResult:
        """A clean stop.  Stopping a running node opens a ``restart`` fault window on it
        (lib/servers/faultwindows.py), closed once it is Synced again: the others re-form
        their group without it and log lines such as ``Last Applied Action message in
        non-primary configuration``, which the warnings check excuses inside the window,
        read on them as a peer's (:meth:`shares_group`), as it does for a kill."""
        if self.is_alive():
            self.stop_window = self.fault_windows.open(self.name, "restart", TARGET,
                                                       f"stop {self.name}")
        return super().stop(timeout, clean)

    def discard(self, fast: bool = False) -> None:
        """kill -9: nodes leaving together wait on each other for seconds, and the
        datadir is thrown away anyway."""
        self.kill()

    def wipe_datadir(self) -> None:
        """Empty the datadir (the node is stopped): its next start needs a full SST."""
        if self.is_alive():
            raise ServerStartError(f"stop {self.name} before wiping its datadir")
        shutil.rmtree(self.paths.datadir, ignore_errors=True)
        os.makedirs(self.paths.datadir, mode=0o750)
        if self.settings.user:
            shutil.chown(self.paths.datadir, self.settings.user, self.settings.user)

    def _launch(self, extra_args: tuple[str, ...] = ()) -> ProcessExecutor:
        """Launch, watching the error log from here for the node's first Synced."""
        log = self._mysqld_log()
        self.joining = self._join_watch(log, _size(log))
        return super()._launch(extra_args)

    def _join_watch(self, path: str, mark: int) -> JoinWatch:
        """The watch of the node's log from mark on."""
        return JoinWatch(path, mark)

    def _ready(self) -> bool:
        """The log says Synced, then it answers SQL and is Synced (the cluster size is
        checked by the caller).

        No SQL reaches a starting node before its log says Synced: at the end of its
        state transfer (IST received, JOINER -> JOINED) a joiner was seen to close a new
        client connection before sending its handshake, and logged it as ``Aborted
        connection ... 'unauthenticated' ... closed normally without authentication``,
        which the warnings check rightly fails (test_security_sst, under load)."""
        if not (self.joining.synced() and self.sql.ping() and self.is_synced()):
            return False
        if self.stop_window is not None:
            FaultWindows.close(self.stop_window)
            self.stop_window = None
        return True

    # ------------------------------------------------------------ status
    def wsrep_status(self, keys: tuple[str, ...] = WSREP_STATUS_KEYS) -> dict[str, str]:
        """The node's wsrep status variables keys (QueryError when it does not answer).
        A node that keeps no connection (a mysql-test case's) is asked as mtr asks:
        ``wsrep_sync_wait = 0`` (the test's causal reads do not delay it), on a
        connection closed afterwards."""
        marks = ", ".join(["%s"] * len(keys))
        try:
            if not self.sql.keep:   # the kept connection is the tests' too: left as it is
                self.execute("SET SESSION wsrep_sync_wait = 0")
            rows = self.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({marks})", keys)
        finally:
            if not self.sql.keep:
                self.sql.close()
        return {str(name).lower(): str(value) for name, value in rows}

    def is_synced(self, cluster_size: int | None = None) -> bool:
        """wsrep_ready=ON, Synced, and (if given) the expected cluster size."""
        try:
            status = self.wsrep_status()
        except QueryError:
            return False
        if status.get("wsrep_ready", "").upper() != "ON" or \
                status.get("wsrep_local_state_comment") != "Synced":
            return False
        return cluster_size is None or int(status.get("wsrep_cluster_size") or 0) == cluster_size

    def shares_group(self, other: Server) -> bool:
        """True when other is a Galera node of this node's cluster (their addresses meet)."""
        return isinstance(other, GaleraServer) and other is not self and bool(
            {self.gmcast_address, *self.cluster_peers} & {other.gmcast_address, *other.cluster_peers})

    def reuse_problem(self) -> str | None:
        """A node that is not Synced in a primary component is not handed on."""
        try:
            status = self.wsrep_status()
        except QueryError as exc:
            return f"{self.name} does not report wsrep status: {exc}"
        if status.get("wsrep_local_state_comment") != "Synced" or \
                status.get("wsrep_cluster_status") != "Primary":
            return (f"{self.name} is {status.get('wsrep_local_state_comment')} in a "
                    f"{status.get('wsrep_cluster_status')} component")
        return None

    def status_report(self) -> str:
        """One line of wsrep status for failure reports."""
        if not self.is_alive():
            return f"{self.name}: not running"
        try:
            st = self.wsrep_status()
        except QueryError as exc:
            return f"{self.name}: no wsrep status ({exc.message})"
        return (f"{self.name}: {st.get('wsrep_local_state_comment')}, "
                f"cluster {st.get('wsrep_cluster_status')} size {st.get('wsrep_cluster_size')}, "
                f"ready {st.get('wsrep_ready')}, last_committed {st.get('wsrep_last_committed')}, "
                f"recv_queue {st.get('wsrep_local_recv_queue')}, "
                f"cert_failures {st.get('wsrep_local_cert_failures')}")

    def describe(self) -> dict[str, Any]:
        """The JSON description plus Galera's ports and addresses."""
        data = super().describe()
        data.update({"galera_listen_port": self.lease.port(1),
                     "galera_recv_port": self.lease.port(2),
                     "galera_sst_port": self.lease.port(3),
                     "wsrep_cluster_address": f"gcomm://{','.join(self.cluster_peers)}"})
        return data


# ---------------------------------------------------------------- saved state
def grastate(node: Server) -> GraState | None:
    """The node's saved Galera state (its datadir's grastate.dat)."""
    return read_grastate(os.path.join(node.paths.datadir, "grastate.dat"))


def recover_position(node: GaleraServer) -> str | None:
    """``uuid:seqno`` from InnoDB when grastate.dat says -1 after a crash, else None
    (``mariadbd --wsrep-recover`` on the node's my.cnf)."""
    state = grastate(node)
    if state is None or state.seqno != -1 or \
            not os.path.exists(os.path.join(node.paths.datadir, "ibdata1")):
        return None
    node._write_cnf()
    log = os.path.join(node.paths.logdir, "wsrep-recover.log")
    argv = [node.tree.server, f"--defaults-file={node.paths.cnf_path}", "--wsrep-recover",
            f"--log-error={log}"]
    try:
        ran = run_tool(argv, timeout=120, user=node.settings.user, env=launch_env(node),
                       cwd=node.paths.vardir)
    except OSError as exc:
        raise ServerStartError(f"wsrep recovery of {node.name} failed: {exc}",
                               tail_file(log)) from exc
    if ran.timed_out:
        raise ServerStartError(f"wsrep recovery of {node.name} failed: it did not finish "
                               f"within 120s", tail_file(log))
    match = None
    for match in RECOVERED_RE.finditer(tail_file(log, 200)):
        pass
    return f"{match.group(1)}:{match.group(2)}" if match else None


def saved_position(node: GaleraServer) -> tuple[str, int] | None:
    """(cluster uuid, seqno) the stopped node holds: from grastate.dat after a clean
    stop, recovered from InnoDB after a crash; None without data."""
    recovered = recover_position(node)
    if recovered:
        uuid, _, seqno = recovered.rpartition(":")
        return uuid, int(seqno)
    state = grastate(node)
    if state is None or state.seqno < 0:
        return None
    return state.uuid, state.seqno


def prepare_bootstrap(node: Server, uuid: str, seqno: int) -> None:
    """Mark the stopped node as the one a new cluster starts from (at uuid:seqno)."""
    path = os.path.join(node.paths.datadir, "grastate.dat")
    with open(path, "w") as fh:
        fh.write(GraState(uuid, seqno, safe_to_bootstrap=1).render())
    if node.settings.user:
        shutil.chown(path, node.settings.user, node.settings.user)


def forget_primary_view(node: Server) -> None:
    """Remove the saved primary component (gvwstate.dat) so the node joins normally."""
    try:
        os.unlink(os.path.join(node.paths.datadir, "gvwstate.dat"))
    except FileNotFoundError:
        pass


def sst_log_tail(node: GaleraServer, lines: int = 25) -> str:
    """WSREP_SST lines of the node's error log plus the SST scripts' archived logs."""
    sst_lines = [l for l in tail_file(node.paths.error_log, 2000).splitlines()
                 if "WSREP_SST" in l or "State transfer" in l or "SST" in l.split("]", 1)[-1][:40]]
    parts = []
    if sst_lines:
        parts.append("\n".join(sst_lines[-lines:]))
    for directory in (node.sst_log_dir, node.paths.datadir):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if name.endswith(".log") and ("sst" in name or "backup" in name):
                text = tail_file(os.path.join(directory, name), 10)
                if text:
                    parts.append(f"[{os.path.join(directory, name)}]\n{text}")
    return "\n".join(parts)


def _size(path: str) -> int:
    """A file's size (0 when missing)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
