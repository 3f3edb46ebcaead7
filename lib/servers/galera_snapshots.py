"""The one store of formed Galera clusters' datadirs (``cache/galera/<key>/``).

Right after a cluster forms by state transfers, while it is idle, kewpie
freezes its nodes (SIGSTOP), copies their datadirs into the store with each
one's ``grastate.dat`` as its formation says (:meth:`SnapshotStore.take`) and
lets them go on (SIGCONT); a later cluster of the same shape -- the same key,
which its formation computes (:mod:`lib.servers.galera_cluster`) -- gets those
datadirs back (:meth:`SnapshotStore.restore`) and forms without a full state
transfer.  The store sits next to the bootstrap cache in the user's /dev/shm
tree, shared by every workdir and bot: a snapshot holds no vardir path and no
port (my.cnf gives them), and each one has a lock file beside it, held shared
while a bot copies from it and exclusively while one is built, dropped or
pruned.  At most :data:`KEEP` are kept, least recently used first.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from ..errors import QueryError, ServerDiedError, ServerStartError
from ..platform import safedirs
from ..platform.logsetup import get_logger
from ..platform.tools import run_tool
from .galera import POSITION_KEYS, GaleraServer, GraState

if TYPE_CHECKING:
    from .bootstrap import BootstrapCache
    from .server import Server

KEEP = 16   # snapshots kept (~113 MB each for three mtr datadirs, less for kewpie's own)
OBSOLETE_ROOT = "mtr-clusters"   # mysql-test's clusters' own store, before the one store
ALWAYS_DROPPED = ("ibtmp1", "mysqld.pid")


class SnapshotStore:
    """Snapshots of formed clusters, by key, in the user's cache (see the module)."""

    def __init__(self, cache: BootstrapCache, keep: int = KEEP) -> None:
        self.cache = cache   # copies datadirs (cp, as the server user where needed)
        self.root = os.path.join(os.path.dirname(cache.cache_dir), "galera")
        self.keep = keep

    def path(self, key: str) -> str:
        """The snapshot directory of key."""
        return os.path.join(self.root, key)

    def available(self, key: str) -> bool:
        """True when a whole snapshot of key exists."""
        return os.path.isfile(os.path.join(self.path(key), "meta.json"))

    def restore(self, key: str, servers: Sequence[Server], first: int = 0) -> None:
        """Copy each server's datadir from the snapshot (servers[k] gets node first + k's),
        side by side, under its shared lock (no bot deletes it meanwhile), and mark it
        used; ServerStartError when it is gone."""
        snap = self.path(key)
        with snapshot_lock(snap, fcntl.LOCK_SH):
            if not os.path.isfile(os.path.join(snap, "meta.json")):
                raise ServerStartError(f"cluster snapshot {snap} disappeared")
            with ThreadPoolExecutor(len(servers)) as pool:  # one cp each, side by side
                copies = [pool.submit(self.cache.copy_to,
                                      os.path.join(snap, f"n{first + i}", "data"),
                                      server.paths.datadir)
                          for i, server in enumerate(servers)]
                for copy in copies:
                    copy.result()   # the first failure is raised, once every copy ended
        try:
            os.utime(os.path.join(snap, "meta.json"))
        except OSError:
            pass

    def take(self, key: str, nodes: Sequence[GaleraServer],
             grastate: Callable[[int, str, int], GraState], drop: tuple[str, ...] = ()) -> None:
        """Snapshot the idle cluster of nodes (:func:`save_snapshot`), then prune."""
        save_snapshot(nodes, self.path(key), grastate, drop)
        self.prune()

    def drop(self, key: str) -> None:
        """Remove the snapshot of key (its formation failed: the next one forms afresh)."""
        drop_snapshot(self.path(key))

    def prune(self) -> None:
        """Remove all but the keep most recently used snapshots (skipping any that another
        run holds), and what is left of the former store of mysql-test's clusters."""
        _drop_store(os.path.join(os.path.dirname(self.root), OBSOLETE_ROOT))
        try:
            names = [n for n in os.listdir(self.root)
                     if os.path.isfile(os.path.join(self.root, n, "meta.json"))]
        except OSError:
            return

        def used(name: str) -> float:
            """When the snapshot was last taken or restored."""
            try:
                return os.path.getmtime(os.path.join(self.root, name, "meta.json"))
            except OSError:
                return 0.0
        for name in sorted(names, key=used, reverse=True)[self.keep:]:
            if drop_snapshot(os.path.join(self.root, name), wait=False):
                get_logger().debug("pruned the cluster snapshot %s", name)


def _drop_store(root: str) -> None:
    """Remove a store's whole snapshots that no run holds (one being built is left to
    its builder), their lock files, then the store when nothing else is left in it."""
    try:
        names = [n for n in os.listdir(root) if os.path.isfile(os.path.join(root, n, "meta.json"))]
    except OSError:
        return
    for name in names:
        if drop_snapshot(os.path.join(root, name), wait=False):
            try:
                os.unlink(os.path.join(root, name + ".lock"))
            except OSError:
                pass
    try:
        os.rmdir(root)
    except OSError:
        pass


def save_snapshot(nodes: Sequence[GaleraServer], target: str,
                  grastate: Callable[[int, str, int], GraState],
                  drop: tuple[str, ...] = ()) -> None:
    """Freeze the idle cluster of nodes, copy their datadirs into target with
    grastate(node index, uuid, seqno) as each one's grastate.dat and without the files
    named in drop, and thaw them.  Nothing when target exists (another bot made it
    meanwhile: one in use is never replaced) or the nodes are not all at one position."""
    log = get_logger()
    start = time.monotonic()
    safedirs.make_dir(os.path.dirname(target), safedirs.TRAVERSE)
    building = f"{target}.building-{os.getpid()}"
    with snapshot_lock(target, fcntl.LOCK_EX):
        try:
            if os.path.isfile(os.path.join(target, "meta.json")):
                return
            states = [n.wsrep_status(POSITION_KEYS) for n in nodes]
            positions = {(s["wsrep_local_state_uuid"], s["wsrep_last_committed"]) for s in states}
            if len(positions) != 1:
                log.debug("cluster not idle (%s); no snapshot taken", positions)
                return
            uuid, seqno = positions.pop()
            _copy_frozen(nodes, building)
            for i in range(len(nodes)):
                data = os.path.join(building, f"n{i}", "data")
                with open(os.path.join(data, "grastate.dat"), "w") as fh:
                    fh.write(grastate(i, uuid, int(seqno)).render())
                for name in (*ALWAYS_DROPPED, *drop):
                    if os.path.exists(os.path.join(data, name)):
                        os.unlink(os.path.join(data, name))
            with open(os.path.join(building, "meta.json"), "w") as fh:
                json.dump({"uuid": uuid, "seqno": int(seqno), "nodes": len(nodes)}, fh)
            shutil.rmtree(target, ignore_errors=True)
            os.rename(building, target)
            log.debug("cluster snapshot %s taken in %.0f ms", target,
                      (time.monotonic() - start) * 1000)
        except (OSError, QueryError, ServerDiedError, KeyError) as exc:
            log.warning(f"could not snapshot the cluster (next start will use SST): {exc}")
            shutil.rmtree(building, ignore_errors=True)


def _copy_frozen(nodes: Sequence[GaleraServer], building: str) -> None:
    """Copy each node's datadir into building/n<i>/data while every node is frozen."""
    shutil.rmtree(building, ignore_errors=True)
    os.makedirs(building, mode=0o755)
    for node in nodes:
        node.pause()  # frozen while their datadirs are copied
    try:
        for i, node in enumerate(nodes):
            dest = os.path.join(building, f"n{i}")
            os.makedirs(dest)
            copied = run_tool(["cp", "-a", node.paths.datadir, os.path.join(dest, "data")])
            if not copied.ok:
                raise OSError(f"cp -a {node.paths.datadir}: {copied.stderr.strip()}")
    finally:
        for node in nodes:
            node.resume()


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
