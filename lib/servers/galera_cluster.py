"""Forming Galera clusters: cold by SST, warm from a snapshot of a formed cluster.

Cold: node 0 of each cluster bootstraps a new cluster from the pristine
datadir, the SST user is created, and the joiners start one after another
from empty datadirs, each getting a full SST (rsync by default).  Right after
that, while the cluster is idle, kewpie freezes every node (SIGSTOP), copies
the datadirs into ``cache/galera/<key>/`` with a grastate.dat holding the
cluster's real position, and lets the nodes go on (SIGCONT).

Warm: later clusters of the same shape (same code tree, options, topology)
start every node at once from its snapshot.  Galera's saved primary
component (``gvwstate.dat``, ``pc.recovery``) lets the nodes re-form the
cluster by themselves, and since all of them are at the same position none
needs a state transfer.  If a warm start fails, kewpie drops the snapshot
and forms the cluster cold.  See docs/galera.md.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

from ..platform import safedirs
from ..errors import QueryError, ServerError, ServerStartError
from .galera import SST_GRANTS, SST_PASSWORD, SST_USER, GaleraServer, GraState
from .garbd import Arbitrator
from ..platform.logsetup import get_logger
from ..platform.tools import run_tool
from .judging import JUDGING_BOUND, retry_transient
from .options import bootstrap_subset
from .server import Server

if TYPE_CHECKING:
    from .manager import ServerManager
    from .requirements import Requirements

NodeT = TypeVar("NodeT", bound=Server)
SNAPSHOT_FORMAT = "2"  # bump when what a cold start creates changes
WARM_START_TIMEOUT = 30.0
JOIN_TIMEOUT = 180.0
SYNC_READ_TIMEOUT = 300.0  # causal reads wait at most repl.causal_read_timeout (30 s) themselves


class GaleraJoinError(ServerStartError):
    """A node could not join its cluster: carries joiner, donor and SST log tails."""

    evidence_title = "cluster evidence"


def cluster_groups(count: int, pairs: tuple[tuple[int, int], ...]) -> list[list[int]]:
    """Split node indexes into clusters: each group starts with its bootstrap node,
    then the joiners in the order of the join_cluster pairs.  A node in no
    pair is a cluster of its own."""
    root = list(range(count))

    def find(i: int) -> int:
        """Union-find root of node i."""
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for a, b in pairs:
        root[find(b)] = find(a)
    joiners = [b for _, b in pairs]
    groups: dict[int, list[int]] = {}
    for i in range(count):
        groups.setdefault(find(i), [])
    for r in groups:
        members = [i for i in range(count) if find(i) == r]
        boot = next(i for i in members if i not in joiners)
        order = [boot] + [b for _, b in pairs if b in members]
        groups[r] = order
    return sorted(groups.values(), key=lambda g: g[0])


def join_failed(node: GaleraServer) -> bool:
    """True once the node's error log says, since its launch, that its state transfer
    failed and it must be restarted (``Receiving IST failed, node restart required``:
    Galera leaves such a joiner running, out of its group, for good)."""
    watch = node.join_failed_watch
    return watch is not None and node.is_alive() and watch.seen()


def wait_cluster(nodes: list[GaleraServer], timeout: float,
                 arbitrators: "list[Arbitrator] | tuple[Arbitrator, ...]" = ()) -> None:
    """Wait until every node is Synced in a cluster of the nodes and the arbitrators;
    explain failures.

    A joiner whose state transfer failed (its log says ``node restart required``:
    Galera leaves it out of the group until it is restarted) is killed and started
    again, once per node; a second failure is a :class:`GaleraJoinError`."""
    deadline = time.monotonic() + timeout
    size = len(nodes) + len(arbitrators)
    restarted: set[str] = set()
    while True:
        for node in nodes:
            if join_failed(node):
                if node.name in restarted:
                    raise GaleraJoinError(f"node {node.name}'s state transfer failed again "
                                          f"(node restart required)", cluster_evidence(nodes))
                get_logger().info(f"node {node.name}'s state transfer failed (its log: node "
                                  f"restart required): starting it again")
                restarted.add(node.name)
                node.kill()
                node.start(wait=False)
        dead = [n for n in nodes if not n.is_alive()]
        if dead:
            raise GaleraJoinError(f"node {dead[0].name} exited while the cluster formed",
                                  cluster_evidence(nodes))
        gone = [a for a in arbitrators if not a.is_alive()]
        if gone:
            raise GaleraJoinError(f"{gone[0].name} exited while the cluster formed",
                                  cluster_evidence(nodes, arbitrators=arbitrators))
        if all(n.synced_in_log() and n.is_synced(size) for n in nodes):
            return
        if time.monotonic() >= deadline:
            raise GaleraJoinError(f"cluster of {size} did not reach Synced within {timeout:.0f}s",
                                  cluster_evidence(nodes, arbitrators=arbitrators))
        time.sleep(0.02)


def cluster_evidence(nodes: list[GaleraServer], joiner: GaleraServer | None = None,
                     donor: GaleraServer | None = None,
                     arbitrators: "list[Arbitrator] | tuple[Arbitrator, ...]" = ()) -> str:
    """Status of every node, then joiner's and donor's error-log and SST log tails (and
    each arbitrator's output)."""
    parts = ["wsrep status:"] + [f"  {n.status_report()}" for n in nodes]
    for arbitrator in arbitrators:
        state = "running" if arbitrator.is_alive() else "not running"
        parts.append(f"  {arbitrator.name}: {state}")
        parts.append(f"--- {arbitrator.name} output ({arbitrator.log_file}) ---")
        parts.append(arbitrator.log_tail(10))
    for role, node in (("joiner", joiner), ("donor", donor)):
        if node is None:
            continue
        parts.append(f"--- {role} {node.name} error log ({node.error_log}) ---")
        parts.append(node.error_log_tail(15))
        sst = node.sst_log_tail()
        if sst:
            parts.append(f"--- {role} {node.name} SST log ---")
            parts.append(sst)
    if joiner is None and donor is None:
        for node in nodes:
            parts.append(f"--- {node.name} error log ({node.error_log}) ---")
            parts.append(node.error_log_tail(8))
    return "\n".join(parts)


class ClusterFormer:
    """Forms the Galera clusters of one server set."""

    def __init__(self, manager: "ServerManager", use_snapshots: bool = True) -> None:
        self.manager = manager
        self.use_snapshots = use_snapshots
        self.log = get_logger()
        # Next to the bootstrap cache: in /dev/shm/kewpie-<uid>/cache/, shared by every
        # workdir of the user (see snapshot_key and snapshot_lock on why that is safe).
        self.snapshot_root = os.path.join(os.path.dirname(manager.cache.cache_dir), "galera")

    # ------------------------------------------------------------ entry
    def form(self, servers: list[GaleraServer], reqs: "Requirements") -> None:
        """Start every cluster of the set and wait until all are Synced."""
        for server in servers:
            server.make_dirs()
        for group in cluster_groups(len(servers), reqs.pairs):
            nodes = [servers[i] for i in group]
            peers = [n.gmcast_address for n in nodes]
            for node in nodes:
                node.cluster_peers = peers
            key = self.snapshot_key(nodes, group, reqs)
            snap = os.path.join(self.snapshot_root, key)
            if self.use_snapshots and len(nodes) > 1 and os.path.isfile(os.path.join(snap, "meta.json")):
                try:
                    self.warm(nodes, snap)
                    continue
                except ServerError as exc:
                    self.log.warning(f"warm start of cluster {'+'.join(n.name for n in nodes)} "
                                     f"failed, forming it by SST instead: {str(exc).splitlines()[0]}")
                    for node in nodes:
                        node.kill()
                    drop_snapshot(snap)
            self.cold(nodes)
            if self.use_snapshots and len(nodes) > 1:
                self.snapshot(nodes, snap)

    def snapshot_key(self, nodes: list[GaleraServer], group: list[int], reqs: "Requirements") -> str:
        """Same code tree, user, provider, topology and options give the same key.

        Nothing of a workdir goes in, and nothing of one is in a snapshot: the
        datadirs hold no vardir path (kewpie gives datadir, tmpdir, sockets and
        SST dirs in my.cnf) and no port (the cluster address and ports come
        from my.cnf; a warm start re-forms the primary component from the
        saved view's node UUIDs, and bots of one workdir already start one
        snapshot on different ports and vardirs).  So workdirs share them.
        """
        tree = nodes[0].tree
        parts = [SNAPSHOT_FORMAT, tree.binary_fingerprint(), tree.basedir, self.manager.settings.user or "",
                 os.path.realpath(self.manager.settings.wsrep_provider), repr(group),
                 repr([p for p in reqs.pairs if p[1] in group])]
        for node in nodes:  # the SST method only matters to later joins, not to the datadirs
            parts.append("|".join(o.as_arg() for o in node.user_options
                                  if o.name != "wsrep-sst-method"))
            if node.tree is not tree:  # a mixed-version cluster
                parts.append(f"tree {node.tree.binary_fingerprint()} {node.tree.basedir}")
        return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]

    # ------------------------------------------------------------ cold
    def cold(self, nodes: list[GaleraServer]) -> None:
        """Bootstrap the first node, create the SST user, join the rest by SST."""
        first = nodes[0]
        cache = self.manager.cache_for(first.tree)
        template = cache.template(bootstrap_subset(first.effective_options()))
        cache.copy_to(template, first.datadir)
        first.start(new_cluster=True)
        try:
            for host in ("localhost", "127.0.0.1"):  # socket, and TCP as my.cnf's [client] says
                first.execute(f"CREATE USER IF NOT EXISTS '{SST_USER}'@'{host}' "
                              f"IDENTIFIED BY '{SST_PASSWORD}'")
                first.execute(f"GRANT {SST_GRANTS} ON *.* TO '{SST_USER}'@'{host}'")
        except QueryError as exc:
            raise ServerStartError(f"cannot create the SST user on {first.name}: {exc}",
                                   first.error_log_tail()) from exc
        for i, joiner in enumerate(nodes[1:], start=2):
            joiner.wipe_datadir()
            self.join(joiner, nodes[:i], donor=first)

    def join(self, joiner: GaleraServer, members: list[GaleraServer], donor: GaleraServer,
             timeout: float = JOIN_TIMEOUT) -> None:
        """Start joiner and wait until all members are Synced; explain a failure."""
        try:
            joiner.start(timeout=timeout)
            wait_cluster(members, timeout)
        except ServerStartError as exc:
            raise GaleraJoinError(f"node {joiner.name} could not join the cluster through "
                                  f"{donor.name}: {str(exc).splitlines()[0]}",
                                  cluster_evidence(members, joiner, donor)) from None

    # ------------------------------------------------------------ snapshot
    def snapshot(self, nodes: list[GaleraServer], target: str) -> None:
        """Freeze the idle cluster, copy its datadirs with their position, thaw it."""
        save_snapshot(nodes, target, GaleraServer.wsrep_status,
                      lambda i, uuid, seqno: GraState(uuid, seqno))

    # ------------------------------------------------------------ warm
    def warm(self, nodes: list[GaleraServer], snap: str) -> None:
        """Start all nodes together from the snapshot; they re-form the cluster."""
        start = time.monotonic()
        restore_snapshot(self.manager, nodes, snap)
        copied = time.monotonic()
        for node in nodes:
            node.start(wait=False)
        launched = time.monotonic()
        wait_cluster(nodes, WARM_START_TIMEOUT)
        self.log.debug("warm cluster of %d: datadirs copied in %.0f ms, launched in %.0f ms, "
                       "Synced %.0f ms later", len(nodes), (copied - start) * 1000,
                       (launched - copied) * 1000, (time.monotonic() - launched) * 1000)


def save_snapshot(nodes: Sequence[NodeT], target: str, status: Callable[[NodeT], dict[str, str]],
                  grastate: Callable[[int, str, int], GraState],
                  drop: tuple[str, ...] = ()) -> None:
    """Freeze the idle cluster of nodes, copy their datadirs into target (a directory of
    the shared snapshot cache) with grastate(node index, uuid, seqno) as each one's
    grastate.dat and without the files named in drop, and thaw them.  Nothing when
    target exists (another bot made it meanwhile: one in use is never replaced) or the
    nodes are not all at one position (status(node): its wsrep status variables)."""
    log = get_logger()
    start = time.monotonic()
    safedirs.make_dir(os.path.dirname(target), safedirs.TRAVERSE)
    building = f"{target}.building-{os.getpid()}"
    with snapshot_lock(target, fcntl.LOCK_EX):
        try:
            if os.path.isfile(os.path.join(target, "meta.json")):
                return
            states = [status(n) for n in nodes]
            positions = {(s["wsrep_local_state_uuid"], s["wsrep_last_committed"]) for s in states}
            if len(positions) != 1:
                log.debug("cluster not idle (%s); no snapshot taken", positions)
                return
            uuid, seqno = positions.pop()
            shutil.rmtree(building, ignore_errors=True)
            os.makedirs(building, mode=0o755)
            for node in nodes:
                node.pause()  # frozen while their datadirs are copied
            try:
                for i, node in enumerate(nodes):
                    dest = os.path.join(building, f"n{i}")
                    os.makedirs(dest)
                    copied = run_tool(["cp", "-a", node.datadir, os.path.join(dest, "data")])
                    if not copied.ok:
                        raise OSError(f"cp -a {node.datadir}: {copied.stderr.strip()}")
            finally:
                for node in nodes:
                    node.resume()
            for i in range(len(nodes)):
                data = os.path.join(building, f"n{i}", "data")
                with open(os.path.join(data, "grastate.dat"), "w") as fh:
                    fh.write(grastate(i, uuid, int(seqno)).render())
                for name in ("ibtmp1", "mysqld.pid", *drop):
                    if os.path.exists(os.path.join(data, name)):
                        os.unlink(os.path.join(data, name))
            with open(os.path.join(building, "meta.json"), "w") as fh:
                json.dump({"uuid": uuid, "seqno": int(seqno), "nodes": len(nodes)}, fh)
            shutil.rmtree(target, ignore_errors=True)
            os.rename(building, target)
            log.debug("cluster snapshot %s taken in %.0f ms", target,
                      (time.monotonic() - start) * 1000)
        except (OSError, QueryError, KeyError) as exc:
            log.warning(f"could not snapshot the cluster (next start will use SST): {exc}")
            shutil.rmtree(building, ignore_errors=True)


def restore_snapshot(manager: "ServerManager", nodes: Sequence[Server], snap: str,
                     first: int = 0) -> None:
    """Copy each node's datadir from the snapshot snap (nodes[k] gets node first + k's),
    side by side, under its shared lock (no bot deletes it meanwhile); ServerStartError
    when it is gone."""
    with snapshot_lock(snap, fcntl.LOCK_SH):
        if not os.path.isfile(os.path.join(snap, "meta.json")):
            raise ServerStartError(f"cluster snapshot {snap} disappeared")
        with ThreadPoolExecutor(len(nodes)) as pool:  # one cp each, side by side
            copies = [pool.submit(manager.cache.copy_to,
                                  os.path.join(snap, f"n{first + i}", "data"), node.datadir)
                      for i, node in enumerate(nodes)]
            for copy in copies:
                copy.result()   # the first failure is raised, once every copy ended


def drop_snapshot(snap: str, wait: bool = True) -> bool:
    """Remove a snapshot (one that did not start, or one pruned) under its exclusive lock;
    without wait, only when no run holds it now.  True when removed."""
    try:
        with snapshot_lock(snap, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB):
            shutil.rmtree(snap, ignore_errors=True)
    except BlockingIOError:
        return False   # another run copies from it or builds it
    return True


@contextlib.contextmanager
def snapshot_lock(snap: str, mode: int) -> Iterator[None]:
    """Hold the snapshot's lock file: shared to copy from it, exclusive to change it.

    The lock file sits next to the snapshot in the shared cache, so runs of
    different workdirs exclude each other as bots of one workdir do.
    """
    fd = os.open(snap + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)


def has_quorum(alive: int, size: int) -> bool:
    """Whether alive nodes of a cluster of size keep a primary component (a strict majority)."""
    return alive * 2 > size


def restart_cluster(nodes: list[GaleraServer], timeout: float = JOIN_TIMEOUT) -> GaleraServer:
    """Bring back a cluster that lost its quorum or all its nodes; returns the bootstrap node.

    The nodes still running are shut down; every node's position is read
    (recovered from InnoDB after a crash); the most advanced node bootstraps a
    new cluster from its data and the others join it by IST (or SST).  This
    is the documented manual recovery, so no acknowledged commit that reached
    any node's disk is lost.
    """
    log = get_logger()
    for node in nodes:
        if node.is_alive():
            node.stop()
    with ThreadPoolExecutor(len(nodes)) as pool:  # --wsrep-recover runs InnoDB recovery
        positions: dict[str, tuple[str, int] | None] = dict(
            zip([n.name for n in nodes], pool.map(lambda n: n.saved_position(), nodes)))
    held = {name: pos for name, pos in positions.items() if pos is not None}
    candidates = [n for n in nodes if n.name in held]
    if not candidates:
        raise GaleraJoinError("no node of the cluster has data to bootstrap from",
                              cluster_evidence(nodes))
    first = max(candidates, key=lambda n: held[n.name][1])
    uuid, seqno = held[first.name]
    log.info(f"restarting the cluster from {first.name} at {uuid}:{seqno} "
             f"(positions: {', '.join(f'{k}={v[1] if v else None}' for k, v in positions.items())})")
    for node in nodes:
        node.forget_primary_view()
    first.prepare_bootstrap(uuid, seqno)
    first.start(new_cluster=True, timeout=timeout)
    for node in nodes:
        if node is not first:
            node.start(wait=False)
    wait_cluster(nodes, timeout)
    return first


def form_galera_set(manager: "ServerManager", servers: list[Server], reqs: "Requirements") -> None:
    """ServerKind hook: form the set's clusters (warm from snapshots when allowed), then
    start the arbitrator the requirements ask for in the cluster of node 0."""
    nodes = [s for s in servers if isinstance(s, GaleraServer)]
    ClusterFormer(manager, manager.settings.cluster_snapshots).form(nodes, reqs)
    if reqs.arbitrator:
        members = [nodes[i] for i in cluster_groups(len(nodes), reqs.pairs)[0]]
        start_arbitrator(manager, members, len(servers))


def start_arbitrator(manager: "ServerManager", members: list[GaleraServer],
                     index: int) -> Arbitrator:
    """A garbd joining the cluster of members (its lease: the set's index-th), recorded
    with the set; returns once every member sees it (GaleraJoinError otherwise)."""
    vardir = os.path.join(manager.bot_dir, "var_garbd")
    arbitrator = Arbitrator("garbd", vardir, manager.lease_extra(index), manager.settings,
                            [n.gmcast_address for n in members])
    manager.arbitrators.append(arbitrator)
    arbitrator.start()
    manager.log.debug("%s: %s started (pid %s, port %d)", manager.bot_name, arbitrator.name,
                      arbitrator.pid, arbitrator.port)
    if manager.on_change:
        manager.on_change()
    wait_cluster(members, JOIN_TIMEOUT, arbitrators=[arbitrator])
    return arbitrator


def cluster_arbitrators(manager: "ServerManager", group: list[int]) -> list[Arbitrator]:
    """The running arbitrators of the cluster of group (node 0's cluster has them)."""
    return [a for a in manager.arbitrators if a.is_alive()] if 0 in group else []


def wait_galera_applied(manager: "ServerManager", timeout: float) -> None:
    """galera kind: every node Synced and caught up (a causal read with wsrep_sync_wait)."""
    nodes = [s for s in manager.servers if isinstance(s, GaleraServer)]
    for group in cluster_groups(len(nodes), manager.current.pairs if manager.current else ()):
        wait_cluster([nodes[i] for i in group], timeout,
                     arbitrators=cluster_arbitrators(manager, group))
    for node in nodes:
        sync_wait_execute(node, "SELECT 1")


def sync_wait_execute(node: GaleraServer, sql: str, args: object = None,
                      bound: float = JUDGING_BOUND) -> list[tuple[Any, ...]]:
    """Run a statement on node once it has applied everything the cluster committed
    before (``wsrep_sync_wait=15``: reads, updates, deletes, inserts).

    A judging read: a lock wait timeout (what a causal read that waited too long
    returns), a deadlock or certification failure, or a node not ready is retried
    for up to ``bound`` seconds (lib/servers/judging.py), then ReadUnknownError."""
    def attempt() -> list[tuple[Any, ...]]:
        """One causal read on a new connection."""
        conn = node.connect(read_timeout=SYNC_READ_TIMEOUT)  # a hung node is an error, not a hang
        try:
            with conn.cursor() as cur:
                cur.execute("SET SESSION wsrep_sync_wait = 15")
                cur.execute(sql, args)
                return list(cur.fetchall())
        finally:
            conn.close()
    return retry_transient(attempt, f"causal read on {node.name}", bound)
