"""Forming Galera clusters: the one formation, for kewpie's own suites and mysql-test's.

A cluster forms from the snapshot of an earlier formation of its shape when
there is one (:mod:`lib.servers.galera_snapshots`: one store), else from
pristine datadirs by state transfers, and is snapshotted right after, while it
is idle, for the next time; a snapshot that does not start is dropped and the
cluster forms by state transfers.  :class:`ClusterFormation` is that skeleton
and the one start order: the nodes that bootstrap first, each until Synced;
then the others at the formation's :class:`Pace`; then every node Synced by
:func:`wait_cluster`.  Its two shapes differ by data and a few hooks:

* :class:`NativeFormation` (the galera kind): node 0 of each cluster
  bootstraps from the pristine datadir (``--wsrep-new-cluster``), the SST user
  is created, the joiners start one after another from empty datadirs, each
  Synced (a full SST, rsync by default) before the next.  Its snapshot holds
  every node at the cluster's real position with its saved primary component
  (``gvwstate.dat``, ``pc.recovery``), so a warm start launches every node at
  once and they re-form the cluster by themselves, none needing a state
  transfer (docs/galera.md).
* ``lib.mtr.galera.MtrFormation`` (mysql-test's sets): the formation mtr
  makes, and a snapshot whose joiners join without any state transfer.

One join-failure handling for both: :func:`wait_cluster` kills a joiner whose
state transfer failed (its log: ``node restart required``; Galera leaves it
out of its group until restarted), gives it its datadir back when the
formation can and launches it once more; a second failure is a
:class:`GaleraJoinError` with every node's evidence.  The same wait heals
faults (lib/consistency/faults.py) and a cluster's restart
(:func:`restart_cluster`).
"""
from __future__ import annotations

import hashlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..errors import QueryError, ServerError, ServerStartError
from .galera import (POSITION_KEYS, SST_GRANTS, SST_PASSWORD, SST_USER, GaleraServer,
                     GraState, forget_primary_view, prepare_bootstrap, saved_position, sst_log_tail)
from .galera_snapshots import SnapshotStore
from .garbd import Arbitrator
from ..platform.logsetup import get_logger
from .judging import JUDGING_BOUND, retry_transient
from .options import bootstrap_subset
from .server import Server

if TYPE_CHECKING:
    from .manager import ServerManager
    from .requirements import Requirements

SNAPSHOT_FORMAT = "2"  # bump when what a native cold start creates changes
WARM_START_TIMEOUT = 30.0
JOIN_TIMEOUT = 180.0
JOIN_STAGGER = 5.0   # seconds a joiner may take to reach its group before the next is launched
SYNC_READ_TIMEOUT = 300.0  # causal reads wait at most repl.causal_read_timeout (30 s) themselves


class GaleraJoinError(ServerStartError):
    """A node could not join its cluster: carries the nodes' status, joiner, donor and
    SST log tails."""

    evidence_title = "cluster evidence"


class Pace(StrEnum):
    """How a formation launches its joiners once its bootstrap nodes are Synced."""

    TOGETHER = "together"   # all at once (a warm start: the saved view re-forms the cluster)
    SYNCED = "synced"       # each once the one before it is Synced (one donor at a time)
    IN_GROUP = "in group"   # each once the one before it is in the group, or JOIN_STAGGER
    ORDERED = "ordered"     # each once the one before it is in the group or Synced


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


# ---------------------------------------------------------------- waiting
def join_failed(node: GaleraServer) -> bool:
    """True once the node's error log says, since its launch, that its state transfer
    failed and it must be restarted (``Receiving IST failed, node restart required``:
    Galera leaves such a joiner running, out of its group, for good)."""
    return node.is_alive() and node.joining.failed()


def wait_cluster(nodes: Sequence[GaleraServer], timeout: float,
                 arbitrators: "list[Arbitrator] | tuple[Arbitrator, ...]" = (),
                 reset: Callable[[GaleraServer], None] | None = None,
                 size: int | None = -1) -> None:
    """Wait until every node is Synced (its log says so, then SQL) in a cluster of the
    nodes and the arbitrators (size: of that many members; None: any); explain failures.

    A joiner whose state transfer failed (its log says ``node restart required``:
    Galera leaves it out of the group until it is restarted) is killed, given its
    datadir back by reset(node) when given, and started again, once per node; a
    second failure is a :class:`GaleraJoinError`."""
    deadline = time.monotonic() + timeout
    if size == -1:
        size = len(nodes) + len(arbitrators)
    restarted: set[str] = set()
    while True:
        for node in nodes:
            if join_failed(node):
                _relaunch(node, nodes, restarted, reset)
        _check_running(nodes, arbitrators)
        if all(n.joining.synced() and n.is_synced(size) for n in nodes):
            return
        if time.monotonic() >= deadline:
            raise GaleraJoinError(f"cluster of {size or len(nodes)} did not reach Synced within "
                                  f"{timeout:.0f}s",
                                  cluster_evidence(list(nodes), arbitrators=arbitrators))
        time.sleep(0.02)


def committed_positions(nodes: Sequence[GaleraServer]) -> dict[str, int]:
    """Per cluster (state UUID): the highest seqno any of the answering nodes has
    committed -- what each node of that cluster must have applied to be caught up."""
    targets: dict[str, int] = {}
    for pos in map(_position, nodes):
        if pos is not None:   # one not answering is waited for as Synced, not as a source
            targets[pos[0]] = max(pos[1], targets.get(pos[0], -1))
    return targets


def wait_applied(nodes: Sequence[GaleraServer], targets: dict[str, int], timeout: float,
                 arbitrators: "list[Arbitrator] | tuple[Arbitrator, ...]" = ()) -> None:
    """Wait until every node has applied its cluster's target seqno (targets from
    :func:`committed_positions`); a node that cannot apply a write set leaves its
    cluster as inconsistent or exits: GaleraJoinError at once, quoting its error."""
    deadline = time.monotonic() + timeout
    while True:
        _check_running(nodes, arbitrators)
        positions = [(n, _position(n)) for n in nodes]
        behind = [(n, pos) for n, pos in positions if not _has_applied(targets, pos)]
        if not behind:
            return
        if time.monotonic() >= deadline:
            node, pos = behind[0]
            raise GaleraJoinError(
                f"node {node.name} did not apply its cluster's write sets within {timeout:.0f}s "
                f"(it is at {pos[1] if pos else 'an unknown position'}, the cluster at "
                f"{targets.get(pos[0], '?') if pos else max(targets.values(), default='?')})",
                cluster_evidence(list(nodes), arbitrators=arbitrators))
        time.sleep(0.02)


def _position(node: GaleraServer) -> tuple[str, int] | None:
    """The node's (state UUID, last committed seqno); None when it does not answer."""
    try:
        status = node.wsrep_status(POSITION_KEYS)
        return status["wsrep_local_state_uuid"], int(status["wsrep_last_committed"])
    except (QueryError, KeyError, ValueError):
        return None


def _has_applied(targets: dict[str, int], pos: tuple[str, int] | None) -> bool:
    """Whether a node at pos has reached its cluster's target (a cluster no target was
    read for has nothing to wait for; None: the node did not answer)."""
    if pos is None:
        return False
    return pos[1] >= targets.get(pos[0], -1)


def _relaunch(node: GaleraServer, nodes: Sequence[GaleraServer], restarted: set[str],
              reset: Callable[[GaleraServer], None] | None) -> None:
    """The one handling of a failed join: kill the node, reset its datadir, launch it
    again -- once; GaleraJoinError the second time."""
    if node.name in restarted:
        raise GaleraJoinError(f"node {node.name}'s state transfer failed again "
                              f"(node restart required)", cluster_evidence(list(nodes)))
    get_logger().info(f"node {node.name}'s state transfer failed (its log: node restart "
                      f"required): starting it again")
    restarted.add(node.name)
    node.kill()
    if reset is not None:
        reset(node)
    node.start(wait=False)


def _check_running(nodes: Sequence[GaleraServer],
                   arbitrators: "list[Arbitrator] | tuple[Arbitrator, ...]") -> None:
    """GaleraJoinError when a node or an arbitrator has exited, or a node left its
    cluster as inconsistent: at once, quoting the node's last [ERROR] line."""
    dead = [n for n in nodes if not n.is_alive()]
    if dead:
        raise GaleraJoinError(f"node {dead[0].name} exited while the cluster formed"
                              f"{_quoted_error(dead[0])}", cluster_evidence(list(nodes)))
    broken = [n for n in nodes if n.joining.inconsistent()]
    if broken:
        raise GaleraJoinError(f"node {broken[0].name} is inconsistent and leaves its cluster"
                              f"{_quoted_error(broken[0])}", cluster_evidence(list(nodes)))
    gone = [a for a in arbitrators if not a.is_alive()]
    if gone:
        raise GaleraJoinError(f"{gone[0].name} exited while the cluster formed",
                              cluster_evidence(list(nodes), arbitrators=arbitrators))


def _quoted_error(node: GaleraServer) -> str:
    """': <the node's last [ERROR] line since its launch>' ('' when it logged none)."""
    line = node.joining.error_line()
    return f": {line}" if line else ""


def in_group(node: GaleraServer, timeout: float) -> bool:
    """Wait until a joiner's error log says it is connected to its group (False after
    timeout, or when it exits, its log says its state transfer failed, or its log is
    not where kewpie can read it)."""
    if not node.joining.readable():
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and node.is_alive():
        if node.joining.in_group():
            return True
        if node.joining.failed():
            return False
        time.sleep(0.02)
    return False


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
        parts.append(f"--- {role} {node.name} error log ({node.paths.error_log}) ---")
        parts.append(node.errlog.tail(15))
        sst = sst_log_tail(node)
        if sst:
            parts.append(f"--- {role} {node.name} SST log ---")
            parts.append(sst)
    if joiner is None and donor is None:
        for node in nodes:
            parts.append(f"--- {node.name} error log ({node.paths.error_log}) ---")
            parts.append(node.errlog.tail(8))
    return "\n".join(parts)


# ---------------------------------------------------------------- forming
class ClusterFormation:
    """One cluster of a set formed (see the module): from its shape's snapshot when there
    is one, else by state transfers, snapshotted for the next time.  servers: the set's
    servers this formation starts, in their start order (a mysql-test set may hold plain
    servers beside its nodes: started with the joiners, waited for until ready)."""

    cold_pace = Pace.SYNCED
    warm_pace = Pace.TOGETHER
    cold_timeout = JOIN_TIMEOUT
    warm_timeout = WARM_START_TIMEOUT
    dropped: tuple[str, ...] = ()   # files a snapshot leaves out of the datadirs

    def __init__(self, manager: "ServerManager", servers: Sequence[Server],
                 snapshots: bool) -> None:
        self.manager = manager
        self.servers = list(servers)
        self.nodes = [s for s in self.servers if isinstance(s, GaleraServer)]
        self.store = SnapshotStore(manager.cache) if snapshots else None
        self.size: int | None = len(self.nodes)   # the cluster's size (None: not checked)

    # ------------------------------------------------------------ hooks
    def key(self) -> str:
        """The snapshot key of this cluster's shape."""
        raise NotImplementedError

    def bootstraps(self, node: GaleraServer, warm: bool) -> bool:
        """Whether node starts first, a new cluster."""
        raise NotImplementedError

    def cold_datadirs(self) -> None:
        """Give the servers their datadirs for a formation by state transfers."""
        raise NotImplementedError

    def cold_reset(self, node: GaleraServer) -> None:
        """Give a node whose state transfer failed its datadir back (formed cold)."""
        raise NotImplementedError

    def after_bootstrap(self, node: GaleraServer, warm: bool) -> None:
        """What follows a bootstrap node's start (nothing here)."""

    def saved_state(self, index: int, uuid: str, seqno: int) -> GraState:
        """Node index's grastate.dat in a snapshot taken at uuid:seqno."""
        return GraState(uuid, seqno)

    # ------------------------------------------------------------ the skeleton
    def form(self) -> bool:
        """Form the cluster; True when it formed from a snapshot."""
        for server in self.servers:
            server.paths.make_dirs()
        key = self.key() if self.store is not None else ""
        if self.store is not None and self.store.available(key):
            if self._warm(self.store, key):
                return True
        self.cold_datadirs()
        self.start(warm=False, reset=self.cold_reset)
        if self.store is not None:
            self.store.take(key, self.nodes, self.saved_state, self.dropped)
        return False

    def _warm(self, store: SnapshotStore, key: str) -> bool:
        """Form from the snapshot; False (the snapshot dropped) when that fails."""
        log, started = get_logger(), time.monotonic()
        names = "+".join(s.name for s in self.servers)
        try:
            store.restore(key, self.nodes)
            copied = time.monotonic()
            self.start(warm=True, reset=lambda node: store.restore(
                key, [node], self.nodes.index(node)))
        except ServerError as exc:
            log.debug("%s", getattr(exc, "log_tail", "") or "")
            log.warning(f"forming cluster {names} from its snapshot {store.path(key)} failed, "
                        f"forming it by state transfers: {str(exc).splitlines()[0]}")
            for server in self.servers:
                server.kill()
            store.drop(key)
            return False
        log.debug("cluster %s formed from the snapshot %s: datadirs copied in %.0f ms, "
                  "Synced %.0f ms later", names, store.path(key), (copied - started) * 1000,
                  (time.monotonic() - copied) * 1000)
        return True

    def start(self, warm: bool, reset: Callable[[GaleraServer], None]) -> None:
        """The one start order: bootstrap nodes first, each until Synced; the others at
        the pace; then every node Synced and every other server ready.  Every server is
        killed when one fails (a joiner left waiting for its donor would wait on)."""
        timeout = max(self.warm_timeout if warm else self.cold_timeout,
                      self.servers[0].settings.start_timeout if self.servers else 0.0)
        try:
            first = [n for n in self.nodes if self.bootstraps(n, warm)]
            for node in first:
                node.start(wait=False, new_cluster=True)
                wait_cluster([node], timeout, reset=reset, size=None)
                self.after_bootstrap(node, warm)
            self._launch_others([s for s in self.servers if s not in first],
                                self.warm_pace if warm else self.cold_pace, timeout, reset)
            wait_cluster(self.nodes, timeout, reset=reset, size=self.size)
            for server in self.servers:
                if not isinstance(server, GaleraServer):
                    server.wait_ready(timeout)
        except BaseException:
            for server in self.servers:
                server.kill()
            raise

    def _launch_others(self, servers: list[Server], pace: Pace, timeout: float,
                       reset: Callable[[GaleraServer], None]) -> None:
        """Launch the servers that do not bootstrap, in order, at pace."""
        for server in servers:
            server.start(wait=False)
            if not isinstance(server, GaleraServer):
                continue
            if pace is Pace.SYNCED:
                members = self.nodes[:self.nodes.index(server) + 1]
                self._wait_joined(server, members, timeout, reset)
            elif server is servers[-1]:
                continue
            elif pace is Pace.IN_GROUP:
                in_group(server, JOIN_STAGGER)
            elif pace is Pace.ORDERED and not in_group(server, timeout):
                wait_cluster([server], timeout, reset=reset, size=None)

    def _wait_joined(self, joiner: GaleraServer, members: list[GaleraServer], timeout: float,
                     reset: Callable[[GaleraServer], None]) -> None:
        """Until joiner and the members before it are Synced; explain a failure."""
        try:
            wait_cluster(members, timeout, reset=reset, size=len(members))
        except ServerStartError as exc:
            donor = members[0]
            raise GaleraJoinError(f"node {joiner.name} could not join the cluster through "
                                  f"{donor.name}: {str(exc).splitlines()[0]}",
                                  cluster_evidence(members, joiner, donor)) from None


class NativeFormation(ClusterFormation):
    """A cluster of kewpie's galera kind (see the module): group is its nodes' indexes
    in the set (bootstrap node first), reqs the set's requirements."""

    def __init__(self, manager: "ServerManager", nodes: list[GaleraServer], group: list[int],
                 reqs: "Requirements") -> None:
        super().__init__(manager, nodes, manager.settings.cluster_snapshots and len(nodes) > 1)
        self.group = group
        self.reqs = reqs
        peers = [n.gmcast_address for n in nodes]
        for node in nodes:
            node.cluster_peers = peers

    def key(self) -> str:
        """Same code tree, user, provider, topology and options give the same key.

        Nothing of a workdir goes in, and nothing of one is in a snapshot: the
        datadirs hold no vardir path (kewpie gives datadir, tmpdir, sockets and
        SST dirs in my.cnf) and no port (the cluster address and ports come
        from my.cnf; a warm start re-forms the primary component from the
        saved view's node UUIDs, and bots of one workdir already start one
        snapshot on different ports and vardirs).  So workdirs share them.
        """
        tree = self.nodes[0].tree
        settings = self.manager.settings
        parts = [SNAPSHOT_FORMAT, tree.binary_fingerprint(), tree.basedir, settings.user or "",
                 os.path.realpath(settings.wsrep_provider), repr(self.group),
                 repr([p for p in self.reqs.pairs if p[1] in self.group])]
        for node in self.nodes:  # the SST method only matters to later joins, not the datadirs
            parts.append("|".join(o.as_arg() for o in node.user_options
                                  if o.name != "wsrep-sst-method"))
            if node.tree is not tree:  # a mixed-version cluster
                parts.append(f"tree {node.tree.binary_fingerprint()} {node.tree.basedir}")
        return "native-" + hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]

    def bootstraps(self, node: GaleraServer, warm: bool) -> bool:
        """Cold: the group's first node; warm: none (the saved view re-forms the cluster)."""
        return not warm and node is self.nodes[0]

    def cold_datadirs(self) -> None:
        """The bootstrap node gets the pristine datadir, the joiners empty ones (SST)."""
        first = self.nodes[0]
        cache = self.manager.cache_for(first.tree)
        cache.copy_to(cache.template(bootstrap_subset(first.effective_options())),
                      first.paths.datadir)
        for joiner in self.nodes[1:]:
            joiner.wipe_datadir()

    def cold_reset(self, node: GaleraServer) -> None:
        """A joiner whose state transfer failed starts from an empty datadir again."""
        if node is not self.nodes[0]:
            node.wipe_datadir()

    def after_bootstrap(self, node: GaleraServer, warm: bool) -> None:
        """Create the SST user on the bootstrap node (socket, and TCP as my.cnf's
        [client] says)."""
        try:
            for host in ("localhost", "127.0.0.1"):
                node.execute(f"CREATE USER IF NOT EXISTS '{SST_USER}'@'{host}' "
                             f"IDENTIFIED BY '{SST_PASSWORD}'")
                node.execute(f"GRANT {SST_GRANTS} ON *.* TO '{SST_USER}'@'{host}'")
        except QueryError as exc:
            raise ServerStartError(f"cannot create the SST user on {node.name}: {exc}",
                                   node.errlog.tail()) from exc


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
            zip([n.name for n in nodes], pool.map(saved_position, nodes)))
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
        forget_primary_view(node)
    prepare_bootstrap(first, uuid, seqno)
    first.start(new_cluster=True, timeout=timeout)
    for node in nodes:
        if node is not first:
            node.start(wait=False)
    wait_cluster(nodes, timeout)
    return first


def form_galera_set(manager: "ServerManager", servers: list[Server], reqs: "Requirements") -> bool:
    """The galera kind's start: form the set's clusters (:class:`NativeFormation`, warm
    from snapshots when allowed), then start the arbitrator the requirements ask for in
    the cluster of node 0.  True when every cluster formed from a snapshot."""
    nodes = [s for s in servers if isinstance(s, GaleraServer)]
    warm = []
    for group in cluster_groups(len(nodes), reqs.pairs):
        members = [nodes[i] for i in group]
        formation = NativeFormation(manager, members, group, reqs)
        warm.append(formation.form())
    if reqs.arbitrator:
        members = [nodes[i] for i in cluster_groups(len(nodes), reqs.pairs)[0]]
        start_arbitrator(manager, members, len(servers))
    return all(warm)


def start_arbitrator(manager: "ServerManager", members: list[GaleraServer],
                     index: int) -> Arbitrator:
    """A garbd joining the cluster of members (its lease: the set's index-th), recorded
    with the set; returns once every member sees it (GaleraJoinError otherwise)."""
    vardir = os.path.join(manager.bot_dir, "var_garbd")
    arbitrator = Arbitrator("garbd", vardir, manager.lease_extra(index), manager.settings,
                            [n.gmcast_address for n in members])
    manager.add_arbitrator(arbitrator)
    arbitrator.start()
    get_logger().debug("%s: %s started (pid %s, port %d)", manager.bot_name, arbitrator.name,
                       arbitrator.pid, arbitrator.port)
    wait_cluster(members, JOIN_TIMEOUT, arbitrators=[arbitrator])
    return arbitrator


def cluster_arbitrators(manager: "ServerManager", group: list[int]) -> list[Arbitrator]:
    """The running arbitrators of the cluster of group (node 0's cluster has them)."""
    return [a for a in manager.arbitrators if a.is_alive()] if 0 in group else []


def wait_galera_applied(manager: "ServerManager", timeout: float) -> None:
    """galera kind: every node Synced and caught up (a causal read with wsrep_sync_wait)."""
    nodes = [s for s in manager.servers if isinstance(s, GaleraServer)]
    for group in cluster_groups(len(nodes), manager.current.pairs if manager.current else ()):
        members = [nodes[i] for i in group]
        wait_cluster(members, timeout, size=len(members),
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
