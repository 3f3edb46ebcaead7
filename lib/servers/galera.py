"""Galera nodes: a Server with wsrep settings, four ports, and wsrep status.

Ports of a node's lease: 0 client, 1 group communication
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
from typing import TYPE_CHECKING, Any

from ..errors import QueryError, ServerStartError
from ..platform.logtail import tail_file
from .options import Option
from ..platform.tools import run_tool
from .layout import HOST
from .faultwindows import TARGET, FaultWindow, FaultWindows
from .logs import LogWatch
from .server import Server

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
SYNCED_LINE = b"WSREP: Synchronized with group"   # a node's error log as it reaches Synced
JOIN_FAILED_LINE = b"node restart required"  # a joiner whose state transfer failed says so
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


class GaleraServer(Server):
    """A MariaDB Galera node managed by kewpie."""

    server_type = "galera"
    unreplicated_session = ("SET SESSION sql_log_bin = 0", "SET SESSION wsrep_on = OFF")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cluster_peers: list[str] = []
        self.new_cluster_next_start = False
        self.start_position: str | None = None
        self.sst_dir = os.path.join(self.vardir, "sst")
        self.sst_log_dir = os.path.join(self.vardir, "sst_log")
        self.synced_watch: LogWatch | None = None   # the error log since the last launch
        # the same, for a failed join (lib.servers.galera_cluster.join_failed)
        self.join_failed_watch: LogWatch | None = None
        self.stop_window: FaultWindow | None = None  # opened by stop(), closed when Synced

    # ------------------------------------------------------------ ports
    @property
    def gmcast_port(self) -> int:
        """Group communication port (GALERA_LISTEN_PORT)."""
        return self.lease.port(1)

    @property
    def ist_port(self) -> int:
        """IST receive port (GALERA_RECV_PORT)."""
        return self.lease.port(2)

    @property
    def sst_port(self) -> int:
        """SST receive port."""
        return self.lease.port(3)

    @property
    def gmcast_address(self) -> str:
        """``127.0.0.1:<gmcast port>`` for other nodes' cluster address."""
        return f"{self.host}:{self.gmcast_port}"

    # ------------------------------------------------------------ config
    def base_options(self) -> list[Option]:
        """kewpie's options plus everything Galera needs."""
        user_provider = next((o.value for o in self.user_options
                              if o.name == "wsrep-provider-options"), None)
        provider_opts = merge_provider_options(
            [f"gmcast.listen_addr=tcp://{self.host}:{self.gmcast_port}",
             f"ist.recv_addr={self.host}:{self.ist_port}", *PROVIDER_DEFAULTS], user_provider)
        peers = ",".join(self.cluster_peers or [self.gmcast_address])
        return super().base_options() + [
            Option("binlog-format", "ROW"), Option("innodb-autoinc-lock-mode", "2"),
            Option("wsrep-on", "ON"), Option("wsrep-provider", self.settings.wsrep_provider),
            Option("wsrep-cluster-name", "kewpie"),
            Option("wsrep-cluster-address", f"gcomm://{peers}"),
            Option("wsrep-node-address", self.host), Option("wsrep-node-name", self.name),
            Option("wsrep-node-incoming-address", f"{HOST}:{self.port}"),
            Option("wsrep-provider-options", provider_opts),
            Option("wsrep-sst-receive-address", f"{self.host}:{self.sst_port}"),
            Option("wsrep-sst-method", self.settings.wsrep_sst_method),
            Option("wsrep-sst-auth", f"{SST_USER}:{SST_PASSWORD}"),
        ]

    def effective_options(self) -> list[Option]:
        """As for any server, except the merged provider options are kept."""
        opts = super().effective_options()
        merged = next(o for o in self.base_options() if o.name == "wsrep-provider-options")
        return [merged if o.name == "wsrep-provider-options" else o for o in opts]

    def extra_cnf_sections(self) -> dict[str, list[Option]]:
        """The SST scripts' [sst] section: their temp files and logs stay in the
        vardir, socat listens (and connects from) 127.0.0.1 only, and a
        joiner's socat orphaned before its donor connected gives up after
        SST_INITIAL_TIMEOUT seconds.

        wsrep_sst_mariabackup appends ``,<sockopt>`` to both
        ``TCP-LISTEN:<port>,reuseaddr`` (joiner) and ``TCP:<host>:<port>``
        (donor); without it the joiner's socat binds 0.0.0.0.
        """
        return {"sst": [Option("tmpdir", self.sst_dir),
                        Option("sst-log-archive-dir", self.sst_log_dir),
                        Option("sockopt", sst_sockopt(self.host)),
                        Option("sst-initial-timeout", str(SST_INITIAL_TIMEOUT))]}

    def make_dirs(self) -> None:
        """The vardir tree plus the SST directories."""
        self.layout.make_dirs(self.settings.user, extra=(self.sst_dir, self.sst_log_dir))

    def start_args(self) -> list[str]:
        """``--wsrep-new-cluster`` for a bootstrap, a recovered start position after a crash."""
        args = []
        if self.new_cluster_next_start:
            args.append("--wsrep-new-cluster")
            self.new_cluster_next_start = False
        if self.start_position:
            args.append(f"--wsrep-start-position={self.start_position}")
            self.start_position = None
        return args

    # ------------------------------------------------------------ lifecycle
    def start(self, timeout: float | None = None, wait: bool = True,
              extra_args: list[str] | tuple[str, ...] = (), new_cluster: bool = False) -> None:
        """Start the node (bootstrapping a new cluster when asked).

        After a crash (grastate seqno -1 with data present), the position is
        first recovered with ``--wsrep-recover`` so the node can rejoin by IST.
        """
        if self.is_alive():
            return
        self.new_cluster_next_start = new_cluster
        if not new_cluster:
            self.start_position = self.recover_position()
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

    def grastate(self) -> GraState | None:
        """The node's saved Galera state."""
        return read_grastate(os.path.join(self.datadir, "grastate.dat"))

    def recover_position(self) -> str | None:
        """``uuid:seqno`` from InnoDB when grastate.dat says -1 after a crash, else None."""
        state = self.grastate()
        if state is None or state.seqno != -1 or not os.path.exists(os.path.join(self.datadir, "ibdata1")):
            return None
        self.write_cnf()
        log = os.path.join(self.logdir, "wsrep-recover.log")
        argv = [self.tree.server, f"--defaults-file={self.cnf_path}", "--wsrep-recover",
                f"--log-error={log}"]
        try:
            ran = run_tool(argv, timeout=120, user=self.settings.user, env=self.launch_env(),
                           cwd=self.vardir)
        except OSError as exc:
            raise ServerStartError(f"wsrep recovery of {self.name} failed: {exc}",
                                   tail_file(log)) from exc
        if ran.timed_out:
            raise ServerStartError(f"wsrep recovery of {self.name} failed: it did not finish "
                                   f"within 120s", tail_file(log))
        match = None
        for match in RECOVERED_RE.finditer(tail_file(log, 200)):
            pass
        return f"{match.group(1)}:{match.group(2)}" if match else None

    def saved_position(self) -> tuple[str, int] | None:
        """(cluster uuid, seqno) the stopped node holds: from grastate.dat after a
        clean stop, recovered from InnoDB after a crash; None without data."""
        recovered = self.recover_position()
        if recovered:
            uuid, _, seqno = recovered.rpartition(":")
            return uuid, int(seqno)
        state = self.grastate()
        if state is None or state.seqno < 0:
            return None
        return state.uuid, state.seqno

    def prepare_bootstrap(self, uuid: str, seqno: int) -> None:
        """Mark the stopped node as the one a new cluster starts from (at uuid:seqno)."""
        path = os.path.join(self.datadir, "grastate.dat")
        with open(path, "w") as fh:
            fh.write(GraState(uuid, seqno, safe_to_bootstrap=1).render())
        if self.settings.user:
            shutil.chown(path, self.settings.user, self.settings.user)

    def forget_primary_view(self) -> None:
        """Remove the saved primary component (gvwstate.dat) so the node joins normally."""
        try:
            os.unlink(os.path.join(self.datadir, "gvwstate.dat"))
        except FileNotFoundError:
            pass

    def wipe_datadir(self) -> None:
        """Empty the datadir (the node is stopped): its next start needs a full SST."""
        if self.is_alive():
            raise ServerStartError(f"stop {self.name} before wiping its datadir")
        shutil.rmtree(self.datadir, ignore_errors=True)
        os.makedirs(self.datadir, mode=0o750)
        if self.settings.user:
            shutil.chown(self.datadir, self.settings.user, self.settings.user)

    # ------------------------------------------------------------ status
    def wsrep_status(self) -> dict[str, str]:
        """The node's wsrep status variables of interest."""
        marks = ", ".join(["%s"] * len(WSREP_STATUS_KEYS))
        rows = self.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({marks})",
                            WSREP_STATUS_KEYS)
        return {name.lower(): value for name, value in rows}

    def is_synced(self, cluster_size: int | None = None) -> bool:
        """wsrep_ready=ON, Synced, and (if given) the expected cluster size."""
        try:
            status = self.wsrep_status()
        except QueryError:
            return False
        if status.get("wsrep_ready") != "ON" or status.get("wsrep_local_state_comment") != "Synced":
            return False
        return cluster_size is None or int(status.get("wsrep_cluster_size") or 0) == cluster_size

    def launch(self, extra_args: tuple[str, ...] = ()) -> ProcessExecutor:
        """Launch, watching the error log from here for the node's first Synced."""
        self.synced_watch = LogWatch(self.error_log, SYNCED_LINE, self.error_log_size())
        self.join_failed_watch = LogWatch(self.error_log, JOIN_FAILED_LINE, self.error_log_size())
        return super().launch(extra_args)

    def synced_in_log(self) -> bool:
        """True once the error log says the node reached Synced since its launch (True
        too when kewpie cannot watch it: a suite's own ``log-error``, no log file).

        No SQL reaches a starting node before: at the end of its state transfer
        (IST received, JOINER -> JOINED) a joiner was seen to close a new client
        connection before sending its handshake, and logged it as ``Aborted
        connection ... 'unauthenticated' ... closed normally without authentication``,
        which the warnings check rightly fails (test_security_sst, under load: the
        probe read EOF where the server's greeting should be)."""
        watch = self.synced_watch
        if watch is None or any(o.name == "log-error" for o in self.user_options) \
                or not watch.exists():
            return True
        return watch.seen()

    def ready(self) -> bool:
        """The log says Synced, then it answers SQL and is Synced (the cluster size is
        checked by the caller)."""
        if not (self.synced_in_log() and self.ping() and self.is_synced()):
            return False
        if self.stop_window is not None:
            FaultWindows.close(self.stop_window)
            self.stop_window = None
        return True

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

    def extra_info(self) -> list[str]:
        """Galera's lines of kewpie's block."""
        return [f"GALERA_LISTEN_PORT: {self.gmcast_port}", f"GALERA_RECV_PORT: {self.ist_port}",
                f"GALERA_SST_PORT: {self.sst_port}"]

    def describe(self) -> dict[str, Any]:
        """The JSON description plus Galera's ports and addresses."""
        data = super().describe()
        data.update({"galera_listen_port": self.gmcast_port, "galera_recv_port": self.ist_port,
                     "galera_sst_port": self.sst_port,
                     "wsrep_cluster_address": f"gcomm://{','.join(self.cluster_peers)}"})
        return data

    def sst_log_tail(self, lines: int = 25) -> str:
        """WSREP_SST lines of the error log plus the SST scripts' archived logs."""
        sst_lines = [l for l in tail_file(self.error_log, 2000).splitlines() if "WSREP_SST" in l
                     or "State transfer" in l or "SST" in l.split("]", 1)[-1][:40]]
        parts = []
        if sst_lines:
            parts.append("\n".join(sst_lines[-lines:]))
        for directory in (self.sst_log_dir, self.datadir):
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
