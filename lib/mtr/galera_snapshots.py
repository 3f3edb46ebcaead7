"""mysql-test's Galera clusters formed again from a copy of their first formation.

mtr forms each Galera set the same way: the bootstrap node from a fresh
datadir, then every other node by a full state transfer (about 10 s for three
nodes on 2 cores).  The datadirs that leaves depend only on the code tree, the
pristine datadir and the set's options, ports and paths aside.  So the first
time kewpie forms a set of a given shape it freezes the idle cluster, copies
its datadirs into ``cache/mtr-clusters/<key>/`` (as the native snapshots of
:mod:`lib.servers.galera_cluster`) and lets it go on; a later set of that shape,
in this run or the next, gets those datadirs back, bootstrap nodes marked safe
to bootstrap and no saved view.  It then starts as mtr starts a set, the
bootstrap node first, then each other node once the one before it is in the
group.

Each configuration change takes a seqno of its own (Galera 4 orders them with
the write sets): the bootstrap node's new component is the snapshot's seqno
+ 1, and the k-th joiner joins a group at seqno + k.  So the k-th joiner's
``grastate.dat`` says seqno + k (:func:`joiner_seqnos`): it finds the group at
its own position and joins without any state transfer ("state transfer
needed: no"); the changes it skips carry no data.  Saved at the snapshot's
seqno instead, every joiner needed an IST of those changes, through the SST
script (rsync's waits), and a joiner whose donor had only just joined could
fail it.

What a test could tell apart is the error log: a set formed from a snapshot
logs no state transfer.  A case whose test reads error logs or names SST
(:func:`formation_sensitive`) gets a set formed by state transfers, as under
mtr, and never one formed from a snapshot.  Snapshots are kept least recently
used first, at most :data:`KEEP` of them.
"""
from __future__ import annotations

import hashlib
import os
import re
from typing import TYPE_CHECKING, Callable

from ..platform.logsetup import get_logger

if TYPE_CHECKING:   # Galera's modules load when a Galera set forms, not with mtr mode
    from ..servers.manager import ServerManager
    from ..servers.server import Server

FORMAT = "mtr-2"   # bump when what a formation leaves in the datadirs changes
KEEP = 12          # snapshots kept (~113 MB each for three mtr datadirs here)
SENSITIVE_RE = re.compile(r"sst|\.err\b|search_file|assert_file|assert_grep", re.IGNORECASE)
PORT_RE = re.compile(r"(?<!\d)\d{4,5}(?!\d)")
DROPPED = ("gvwstate.dat",)   # no saved view: the bootstrap node forms the cluster anew


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


def snapshot_root(manager: "ServerManager") -> str:
    """Where the snapshots live: next to the bootstrap cache, shared by every workdir."""
    return os.path.join(os.path.dirname(manager.cache.cache_dir), "mtr-clusters")


def formation_sensitive(test_file: str) -> bool:
    """True when the case's test reads error logs or names SST (e.g. counts the state
    transfers its log holds): it runs on a set formed by state transfers."""
    try:
        with open(test_file, errors="replace") as fh:
            return SENSITIVE_RE.search(fh.read()) is not None
    except OSError:
        return True


def normalized_args(server: "Server", bot_dir: str, port_names: dict[int, str]) -> list[str]:
    """The server's options with its bot's directory and its leased ports named, not
    spelled (two bots, or two runs, start the same shape on other ports and paths)."""
    def port(match: re.Match[str]) -> str:
        """A leased port's name (any other number as it is)."""
        return port_names.get(int(match.group(0)), match.group(0))
    args = [o.as_arg() for o in server.effective_options()] + server.start_args()
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


def formation_key(manager: "ServerManager", servers: "list[Server]") -> str:
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


class MtrClusterSnapshots:
    """The snapshot of one set shape: taken after a formation, restored for a later one."""

    def __init__(self, manager: "ServerManager", servers: "list[Server]") -> None:
        self.manager = manager
        self.servers = servers
        self.path = os.path.join(snapshot_root(manager), formation_key(manager, servers))

    def available(self) -> bool:
        """True when a whole snapshot of this shape exists."""
        return os.path.isfile(os.path.join(self.path, "meta.json"))

    def restore(self) -> None:
        """Give each server its datadir from the snapshot (vardirs made; the servers are
        not started).  Marks it used, for pruning."""
        from ..servers.galera_cluster import restore_snapshot
        for server in self.servers:
            server.make_dirs()
        restore_snapshot(self.manager, self.servers, self.path)
        try:
            os.utime(os.path.join(self.path, "meta.json"))
        except OSError:
            pass

    def restore_node(self, server: "Server") -> None:
        """Give one (stopped) server of the set its datadir from the snapshot again."""
        from ..servers.galera_cluster import restore_snapshot
        restore_snapshot(self.manager, [server], self.path, self.servers.index(server))

    def drop(self) -> None:
        """Remove the snapshot (its formation failed: the next one is formed afresh)."""
        from ..servers.galera_cluster import drop_snapshot
        drop_snapshot(self.path)

    def take(self, bootstrap: list[bool], status: "Callable[[Server], dict[str, str]]") -> None:
        """Snapshot the set's nodes right after their formation, each bootstrap node
        (bootstrap[i]) marked safe to bootstrap and each joiner at the position of the
        group it will join (:func:`joiner_seqnos`); then prune."""
        from ..servers.galera import GraState
        from ..servers.galera_cluster import save_snapshot
        save_snapshot(self.servers, self.path, status,
                      lambda i, uuid, seqno: GraState(uuid, joiner_seqnos(seqno, bootstrap)[i],
                                                      int(bootstrap[i])), DROPPED)
        prune(snapshot_root(self.manager), KEEP)


def prune(root: str, keep: int) -> None:
    """Remove all but the keep most recently used snapshots under root (skipping any that
    another run holds)."""
    from ..servers.galera_cluster import drop_snapshot
    try:
        names = [n for n in os.listdir(root)
                 if os.path.isfile(os.path.join(root, n, "meta.json"))]
    except OSError:
        return
    def used(name: str) -> float:
        """When the snapshot was last taken or restored."""
        try:
            return os.path.getmtime(os.path.join(root, name, "meta.json"))
        except OSError:
            return 0.0
    for name in sorted(names, key=used, reverse=True)[keep:]:
        if drop_snapshot(os.path.join(root, name), wait=False):
            get_logger().debug("pruned the mtr cluster snapshot %s", name)
