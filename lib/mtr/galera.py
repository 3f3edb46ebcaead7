"""mysql-test's Galera suites under kewpie: their skip lists and how their clusters form.

**Skips.** The ``skip_combinations`` of ``suite/galera/suite.pm`` and
``suite/galera_3nodes/suite.pm`` for this machine (:func:`galera_skip_rules`):
tests that need stunnel, qpress or pkill skip without them, as under mtr.

**Clusters.** A set's Galera nodes are nodes of the one node type
(``lib.mtr.server.MtrGaleraServer``) and form by the one formation of
:mod:`lib.servers.galera_cluster`, in mtr's shape (:class:`MtrFormation`):
fresh datadirs; the bootstrap nodes (``wsrep_cluster_address=gcomm://``)
first, until Synced; then the others in the config's order, each launched once
the one before it is in the group, joining by a full state transfer.  mtr
launches the joiners at once; two nodes joining one group together make its
membership protocol start over until both are seen (5-8 s of reconnects
here), so kewpie staggers them; they still take their state transfers side by
side, and the cluster they form is the one mtr's forms.

A set of a shape formed before starts from a copy of that formation's datadirs
instead (the one snapshot store, :mod:`lib.servers.galera_snapshots`): the
bootstrap nodes marked safe to bootstrap and no saved view, so it starts as mtr
starts a set.  Each configuration change takes a seqno of its own (Galera 4
orders them with the write sets): the bootstrap node's new component is the
snapshot's seqno + 1, and the k-th joiner joins a group at seqno + k.  So the
k-th joiner's ``grastate.dat`` says seqno + k (:func:`joiner_seqnos`): it finds
the group at its own position and joins without any state transfer ("state
transfer needed: no"); the changes it skips carry no data.  Saved at the
snapshot's seqno instead, every joiner needed an IST of those changes, and a
joiner whose donor had only just joined could fail it.  What a test could tell
apart is the error log: a set formed from a snapshot logs no state transfer,
so a case whose test reads error logs or names SST
(:func:`formation_sensitive`) gets a set formed by state transfers, as under
mtr (``Requirements.snapshot_formation``).

Between cases the set is kept only while every node is Synced in a Primary
component of the size it had (:func:`reuse_problem`): mtr's check-testcase does
not look at wsrep, so a node a test left Desynced or alone would fail the next
case under mtr.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from typing import TYPE_CHECKING

from ..servers.galera import GaleraServer, GraState
from ..servers.galera_cluster import ClusterFormation, Pace
from ..servers.requirements import Requirements
from ..servers.server import Server
from .server import is_wsrep

if TYPE_CHECKING:
    from ..servers.manager import ServerManager


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
MTR_START_TIMEOUT = 180.0   # mtr's --start-timeout
WARM_START_TIMEOUT = 60.0   # a set formed from a snapshot (no full state transfer)
FORMAT = "mtr-2"   # bump when what a formation leaves in the datadirs changes
SENSITIVE_RE = re.compile(r"sst|\.err\b|search_file|assert_file|assert_grep", re.IGNORECASE)
PORT_RE = re.compile(r"(?<!\d)\d{4,5}(?!\d)")


def wsrep_state(server: Server, keys: tuple[str, ...] = WSREP_KEYS) -> dict[str, str]:
    """The node's status variables keys, by default its readiness, state, component and
    cluster size ({} when it is no Galera node or does not answer): asked as mtr asks,
    on a connection closed afterwards (GaleraServer.wsrep_status)."""
    if not isinstance(server, GaleraServer):
        return {}
    try:
        return server.wsrep_status(keys)
    except Exception:  # noqa: BLE001 - not answering (yet): the callers wait or judge
        return {}


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


def joiner_seqnos(seqno: int, bootstrap: list[bool]) -> list[int]:
    """The seqno each node's ``grastate.dat`` gets in a snapshot taken at seqno, right
    after a formation from fresh datadirs: the bootstrap node's own, and seqno + k for
    the k-th other node in the order they are launched (the config's), the position
    of the group it joins.  A formation that left a seqno below one per node was not
    counting its configuration changes (an older Galera): every node keeps seqno."""
    if seqno < len(bootstrap):
        return [seqno] * len(bootstrap)
    found, joiners = [], 0
    for boots in bootstrap:
        joiners += 0 if boots else 1
        found.append(seqno if boots else seqno + joiners)
    return found


def formation_sensitive(test_file: str) -> bool:
    """True when the case's test reads error logs or names SST (e.g. counts the state
    transfers its log holds): it runs on a set formed by state transfers."""
    try:
        with open(test_file, errors="replace") as fh:
            return SENSITIVE_RE.search(fh.read()) is not None
    except OSError:
        return True


def normalized_args(server: Server, bot_dir: str, port_names: dict[int, str]) -> list[str]:
    """The server's options with its bot's directory and its leased ports named, not
    spelled (two bots, or two runs, start the same shape on other ports and paths)."""
    def port(match: re.Match[str]) -> str:
        """A leased port's name (any other number as it is)."""
        return port_names.get(int(match.group(0)), match.group(0))
    args = [o.as_arg() for o in server.effective_options()] + \
        [o.name for o in server.user_options if o.name.startswith("-")]
    return [PORT_RE.sub(port, arg.replace(bot_dir, "@BOT@")) for arg in args]


def provider_identity(args: list[str]) -> str:
    """Each wsrep provider library the options name, with its size and time."""
    found = []
    for arg in args:
        name, _, value = arg.lstrip("-").partition("=")
        if name.replace("_", "-") == "wsrep-provider" and value:
            try:
                st = os.stat(value)
                found.append(f"{os.path.realpath(value)}|{st.st_size}|{int(st.st_mtime)}")
            except OSError:
                found.append(value)
    return ";".join(found)


def formation_key(manager: "ServerManager", servers: list[Server]) -> str:
    """Same code trees, pristine datadirs, server user and options (ports and paths of
    the bot aside) give the same key."""
    port_names = {p: f"@P{i}.{j}@" for i, lease in enumerate(manager.leases)
                  for j, p in enumerate(lease.ports)}
    parts = [FORMAT, manager.settings.user or ""]
    for server in servers:
        args = normalized_args(server, manager.bot_dir, port_names)
        parts += [server.tree.binary_fingerprint(), server.tree.basedir,
                  os.path.relpath(manager.pristine_template(server), manager.cache.cache_dir),
                  provider_identity(args), "\n".join(args)]
    return hashlib.sha1("\n--\n".join(parts).encode()).hexdigest()[:16]


class MtrFormation(ClusterFormation):
    """A mysql-test set's Galera formation, in mtr's shape (see the module): servers in
    the config's order; snapshots only for a set of Galera nodes alone (one with plain
    servers beside is formed as mtr does) and when the case allows one."""

    cold_pace = Pace.IN_GROUP
    warm_pace = Pace.ORDERED
    cold_timeout = MTR_START_TIMEOUT
    warm_timeout = WARM_START_TIMEOUT
    dropped = ("gvwstate.dat",)   # no saved view: the bootstrap node forms the cluster anew

    def __init__(self, manager: "ServerManager", servers: list[Server], reqs: Requirements
                 ) -> None:
        super().__init__(manager, servers, reqs.snapshot_formation
                         and all(is_wsrep(s) for s in servers))
        self.size = None   # the config decides which nodes form which cluster

    def key(self) -> str:
        """:func:`formation_key` of the set."""
        return formation_key(self.manager, self.servers)

    def bootstraps(self, node: GaleraServer, warm: bool) -> bool:
        """Its config's ``gcomm://`` (:func:`bootstraps`)."""
        return bootstraps(node)

    def cold_datadirs(self) -> None:
        """Fresh datadirs for every server (the pristine copies)."""
        for server in self.servers:
            self.manager.copy_pristine(server)

    def cold_reset(self, node: GaleraServer) -> None:
        """The pristine datadir again (not copy_pristine: the set's datadirs are already
        counted for the next run's spares)."""
        self.manager.cache.copy_to(self.manager.pristine_template(node), node.paths.datadir)

    def saved_state(self, index: int, uuid: str, seqno: int) -> GraState:
        """Each bootstrap node marked safe to bootstrap at seqno, each joiner at the
        position of the group it will join (:func:`joiner_seqnos`)."""
        flags = [bootstraps(n) for n in self.nodes]
        return GraState(uuid, joiner_seqnos(seqno, flags)[index], int(flags[index]))


def start_mtr_set(manager: "ServerManager", servers: list[Server],
                  reqs: "Requirements") -> bool:
    """The mtr server kind's start (lib.run.environment's SERVER_KINDS): fresh datadirs;
    plain servers start all at once; a set with Galera nodes by :class:`MtrFormation`
    (from the snapshot of an earlier formation when it may).  True when formed from a
    snapshot."""
    if any(is_wsrep(s) for s in servers):
        return MtrFormation(manager, servers, reqs).form()
    for server in servers:
        manager.copy_pristine(server)
    for server in servers:
        server.start(wait=False)
    for server in servers:
        server.wait_ready()
    return False
