"""mysql-test's Galera suites under kewpie: their skip lists and how their clusters start.

**Skips.** The ``skip_combinations`` of ``suite/galera/suite.pm`` and
``suite/galera_3nodes/suite.pm`` for this machine (:func:`galera_skip_rules`):
tests that need stunnel, qpress or pkill skip without them, as under mtr.

**Clusters.** A set with Galera nodes starts as mtr starts it (:func:`form_cold`):
fresh datadirs; the bootstrap node (``wsrep_cluster_address=gcomm://``) first,
until it is Synced; then the others, each joining by a full state transfer (each
launched once the one before it is in the group, :func:`start_in_mtr_order`).  A
set of a shape formed before starts from a copy of that formation's datadirs
instead (:func:`form_galera_set`, :mod:`lib.mtr.galera_snapshots`).  Between cases the set is kept only while every node is Synced in a
Primary component of the size it had (:func:`reuse_problem`): mtr's
check-testcase does not look at wsrep, so a node a test left Desynced or alone
would fail the next case under mtr.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from typing import TYPE_CHECKING, Callable

from ..errors import ServerError, ServerStartError
from ..platform.logsetup import get_logger
from ..servers.server import Server
from .server import MtrServer, is_wsrep

if TYPE_CHECKING:
    from ..servers.manager import ServerManager
    from ..servers.requirements import Requirements


def _which(name: str) -> bool:
    return shutil.which(name) is not None


def galera_skip_rules(mtr_root: str, features: dict[str, str]) -> dict[str, object]:
    """The Galera suites' ``skip_combinations`` (suite.pm) for this machine, in the form
    of :func:`lib.mtr.cases.skip_rules`: {combinations path: reason or [combinations]}
    (mtr keys an include file's skip by its name with ``.combinations``)."""
    galera = os.path.join(mtr_root, "suite", "galera")
    rules: dict[str, object] = {}

    def inc(suite_dir: str, name: str) -> str:
        """The key mtr makes of suite.pm's ``include/<name>.inc``."""
        return os.path.join(suite_dir, "include", name + ".combinations")
    if not (_which("lsof") or _which("sockstat") or _which("ss")):
        reason = "Need socket statistics utility"
        rules[inc(galera, "have_mariabackup")] = reason
        rules[inc(os.path.join(mtr_root, "suite", "galera_3nodes"), "have_mariabackup")] = reason
    if not _which("stunnel"):
        rules[inc(galera, "have_stunnel")] = "Need 'stunnel' utility"
        rules[os.path.join(galera, "t", "galera_sst_cn_injection.combinations")] = ["rsync"]
    if not _which("qpress"):
        rules[inc(galera, "have_qpress")] = "Need 'qpress' utility"
    ssl = features.get("version-ssl-library", "")
    found = re.search(r"OpenSSL (\S+)", ssl)
    if not (found and found.group(1) >= "1.1.1"):
        rules[os.path.join(mtr_root, "suite", "encryption", "include",
                           "have_file_key_management_plugin.combinations")] = ["ctr"]
    if not (found and found.group(1) >= "3.0.0"):
        rules[os.path.join(galera, "t", "galera_sst_cn_injection.combinations")] = \
            "does not work with OpenSSL <= 1.1.1"
    if not _which("pkill"):
        rules[inc(galera, "have_pkill")] = "Need 'pkill' utility"
    return rules


# ---------------------------------------------------------------------- clusters
WSREP_KEYS = ("wsrep_ready", "wsrep_local_state_comment", "wsrep_cluster_status",
              "wsrep_cluster_size")
REUSE_WAIT = 30.0   # seconds a node may take to be Synced again after a test
POSITION_KEYS = ("wsrep_local_state_uuid", "wsrep_last_committed")
MTR_START_TIMEOUT = 180.0   # mtr's --start-timeout
WARM_START_TIMEOUT = 60.0   # a set formed from a snapshot (no full state transfer)
JOIN_STAGGER = 5.0   # seconds a joiner may take to reach its group before the next is launched
GROUP_JOINED = b"WSREP: gcomm: connected"   # a node's error log as it is in its group
# A joiner whose state transfer failed stays up, out of its group, until restarted:
# ``Receiving IST failed, node restart required: ... 'IST didn't contain all write sets,
# expected last: 6 last received: 5'`` when its donor was a node that had only just
# finished its own IST (the joiner's first request found the bootstrap node busy).
JOIN_FAILED = b"node restart required"


class JoinFailedError(ServerStartError):
    """A Galera joiner's state transfer failed: it runs, out of its group, until restarted."""


def wsrep_state(server: Server, keys: tuple[str, ...] = WSREP_KEYS) -> dict[str, str]:
    """The node's status variables keys, by default its readiness, state, component and
    cluster size ({} when it does not answer); as mtr asks (``wsrep_sync_wait = 0``),
    on a connection closed afterwards, so tests never see one of kewpie's in their
    process list."""
    try:
        server.execute("SET SESSION wsrep_sync_wait = 0")
        marks = ", ".join(["%s"] * len(keys))
        rows = server.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({marks})", keys)
        return {str(name).lower(): str(value) for name, value in rows}
    except Exception:  # noqa: BLE001 - not answering (yet): the callers wait or judge
        return {}
    finally:
        server.sql.close()


def wsrep_position(server: Server) -> dict[str, str]:
    """The node's position (``wsrep_local_state_uuid``, ``wsrep_last_committed``; {} when
    it does not answer)."""
    return wsrep_state(server, POSITION_KEYS)


def wait_wsrep_ready(server: Server, timeout: float) -> None:
    """Until the node says wsrep_ready ON and Synced (ServerStartError after timeout, or
    at once when it exits; JoinFailedError at once when its log says its state transfer
    failed)."""
    failed = server.log_watch(JOIN_FAILED) if isinstance(server, MtrServer) else None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.is_alive():
            raise ServerStartError(f"server {server.name}: Galera node exited while joining "
                                   f"its cluster", server.error_log_tail(20))
        if failed is not None and failed.seen():
            raise JoinFailedError(f"server {server.name}: Galera node's state transfer "
                                  f"failed (node restart required)", server.error_log_tail(20))
        state = wsrep_state(server)
        if state.get("wsrep_ready", "").upper() == "ON" and \
                state.get("wsrep_local_state_comment") == "Synced":
            return
        time.sleep(0.05)
    raise ServerStartError(f"server {server.name}: Galera node not Synced within {timeout:g}s",
                           server.error_log_tail(20))


def cluster_sizes(servers: list[Server]) -> dict[int, int]:
    """{index: wsrep_cluster_size} of the set's Galera nodes (as a new set is handed over)."""
    sizes = {}
    for index, server in enumerate(servers):
        if is_wsrep(server) and server.is_alive():
            size = wsrep_state(server).get("wsrep_cluster_size", "")
            if size.isdigit():
                sizes[index] = int(size)
    return sizes


def reuse_problem(servers: list[Server], sizes: dict[int, int], timeout: float = REUSE_WAIT
                  ) -> str:
    """Why the set's Galera nodes cannot go to the next case ('' when they can): each
    one Synced in a Primary component of the size it had when the set was handed
    over (waiting up to timeout for a node to get there, e.g. a donor)."""
    deadline = time.monotonic() + timeout
    while True:
        problem = ""
        for index, size in sizes.items():
            if index >= len(servers):
                continue
            server = servers[index]
            state = wsrep_state(server) if server.is_alive() else {}
            seen = (state.get("wsrep_local_state_comment"), state.get("wsrep_cluster_status"),
                    state.get("wsrep_cluster_size"))
            if seen != ("Synced", "Primary", str(size)):
                problem = (f"{server.name} is {seen[0] or 'not answering'} in a {seen[1]} "
                           f"component of {seen[2]} (was Synced, Primary, {size})")
                break
        if not problem or time.monotonic() >= deadline:
            return problem
        time.sleep(0.2)


def bootstraps(server: Server) -> bool:
    """The node starts a new cluster (``wsrep_cluster_address=gcomm://``), as mtr's
    wsrep_is_bootstrap_server says."""
    address = None
    for opt in server.user_options:
        if opt.name == "wsrep-cluster-address":
            address = (opt.value or "").strip().strip("'\"")
    return address == "gcomm://"


def form_cold(manager: "ServerManager", servers: list[Server]) -> None:
    """As mtr starts a set with Galera nodes: fresh datadirs, then
    :func:`start_in_mtr_order` (joiners get a full state transfer meanwhile)."""
    for server in servers:
        manager.copy_pristine(server)
    # a relaunched joiner gets the pristine datadir again (not copy_pristine: the set's
    # datadirs are already counted for the next run's spares)
    start_in_mtr_order(servers, reset=lambda s: manager.cache.copy_to(
        manager.pristine_template(s), s.datadir))


def start_in_mtr_order(servers: list[Server], timeout: float = MTR_START_TIMEOUT,
                       reset: Callable[[Server], None] | None = None,
                       ordered: bool = False) -> None:
    """The servers launched in the config's order, waiting after a bootstrap node
    (``gcomm://``) until it is ready and Synced; then each of the others until it is
    ready and, a Galera node, Synced.  timeout (mtr's --start-timeout, 180 s: a state
    transfer takes long on a loaded machine) bounds each wait.  Every server is killed
    when one fails.

    mtr launches the joiners at once.  Two nodes joining one group together make its
    membership protocol start over until both are seen (5-8 s of reconnects here), so
    each joiner is launched once the one before it is in the group (:func:`in_group`);
    they still take their state transfers side by side, and the cluster they form is
    the one mtr's forms.  A joiner whose state transfer fails is launched once more
    from the datadir reset(server) gives it back (:func:`wait_joined`).

    ordered: the joiners must join in the config's order (a set from a snapshot:
    each one's saved position is that of the group it joins, see
    :mod:`lib.mtr.galera_snapshots`), so the next is launched only once the one
    before it is in the group, however long that takes (or Synced, when its log
    cannot tell)."""
    timeout = max(timeout, servers[0].settings.start_timeout) if servers else 0.0
    waited = []
    try:
        for server in servers:
            if is_wsrep(server) and bootstraps(server):
                server.start(wait=False)
                server.wait_ready(timeout)
                wait_wsrep_ready(server, timeout)
                waited.append(server)
        joining = [s for s in servers if s not in waited]
        for server in joining:
            server.start(wait=False)
            if is_wsrep(server) and server is not joining[-1]:
                if not in_group(server, timeout if ordered else JOIN_STAGGER) and ordered:
                    wait_joined(server, timeout, reset)
        for server in joining:
            wait_joined(server, timeout, reset)
    except BaseException:
        for server in servers:  # a joiner left waiting for its donor would wait on
            server.kill()
        raise


def wait_joined(server: Server, timeout: float,
                reset: Callable[[Server], None] | None = None) -> None:
    """Until a launched joiner is ready and, a Galera node, Synced.  When its state
    transfer fails (:class:`JoinFailedError`) and reset is given, the node is killed,
    given its datadir back by reset(server) and launched once more: the failure is a
    race of the formation (a donor that had only just joined), not of the datadir, and
    its relaunch finds the others Synced.  Its new launch writes the case's marker
    again, so what the failed attempt logged is before it."""
    for attempt in (1, 2):
        server.wait_ready(timeout)
        if not is_wsrep(server):
            return
        try:
            wait_wsrep_ready(server, timeout)
            return
        except JoinFailedError as exc:
            if reset is None or attempt == 2:
                raise
            get_logger().info(f"{exc.args[0]}; launching {server.name} once more")
            server.kill()
            reset(server)
            server.start(wait=False)


def in_group(server: Server, timeout: float) -> bool:
    """Wait until a joiner's error log says it is connected to its group (False after
    timeout, or when it exits, its log says its state transfer failed, or its log is
    not where kewpie can read it)."""
    if not isinstance(server, MtrServer):
        return False
    watch, failed = server.log_watch(GROUP_JOINED), server.log_watch(JOIN_FAILED)
    if not watch.exists():
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.is_alive():
        if watch.seen():
            return True
        if failed.seen():
            return False
        time.sleep(0.02)
    return False


def form_galera_set(manager: "ServerManager", servers: list[Server]) -> None:
    """Form the set from the snapshot of an earlier formation of its shape when there is
    one and the manager allows it (:mod:`lib.mtr.galera_snapshots`), else as mtr forms
    it, snapshotting the result for next time.  A snapshot that does not start is
    dropped and the set formed as mtr forms it."""
    from .galera_snapshots import MtrClusterSnapshots
    manager.formed_from_snapshot = False
    # only sets of Galera nodes alone: one with plain servers beside is formed as mtr does
    copyable = manager.snapshot_formation and all(is_wsrep(s) for s in servers)
    snapshots = MtrClusterSnapshots(manager, servers) if copyable else None
    if snapshots is not None and snapshots.available():
        started = time.monotonic()
        try:
            snapshots.restore()
            start_in_mtr_order(servers, WARM_START_TIMEOUT, reset=snapshots.restore_node,
                               ordered=True)
            manager.formed_from_snapshot = True
            manager.log.debug("%s: cluster formed from the snapshot %s in %.0f ms",
                              manager.bot_name, snapshots.path,
                              (time.monotonic() - started) * 1000)
            return
        except ServerError as exc:
            manager.log.debug("%s", getattr(exc, "log_tail", "") or "")
            manager.log.warning(f"forming the cluster from the snapshot {snapshots.path} "
                                f"failed, forming it as mtr does: {str(exc).splitlines()[0]}")
            snapshots.drop()
    form_cold(manager, servers)
    if snapshots is not None:
        snapshots.take([bootstraps(s) for s in servers], wsrep_position)


def start_mtr_set(manager: "ServerManager", servers: list[Server],
                  reqs: "Requirements") -> None:
    """The mtr server kind's start (lib.run.environment's SERVER_KINDS): fresh datadirs;
    plain servers start all at once; a set with Galera nodes as mtr starts it, or from
    the snapshot of an earlier formation (:func:`form_galera_set`)."""
    if any(is_wsrep(s) for s in servers):
        form_galera_set(manager, servers)
        return
    for server in servers:
        manager.copy_pristine(server)
    for server in servers:
        server.start(wait=False)
    for server in servers:
        server.wait_ready()
