"""Starts, reuses and resets the servers a test needs, for one bot.

Reuse rule (see docs/servers.md and :mod:`lib.servers.reuse`): a test gets
the servers of the previous test when (1) the requirements (server type,
option lists, requests) are the same, (2) the previous test passed, (3)
every server still runs with the same pid and answers SQL, replicas and
nodes have applied everything, and (4) each server's fingerprint (what the
next test would see: schemas, tables, routines, users and grants, plugins,
global variables, open transactions, sessions, replication status) equals
the one taken when the set started; the ``test`` schema is emptied instead.
Otherwise the set is killed (its datadirs are discarded) and the next test
gets fresh servers, each from a spare copy of the pristine datadir made in
the background while the previous test ran (:mod:`lib.servers.spare`).

A run may :meth:`~ServerManager.launch` its first set early (copy the
datadirs, spawn the servers, no waiting): the work the caller does next
overlaps the servers' boot, and the next ``get_servers`` of the same
requirements waits for them and finishes the set.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping

from .bootstrap import BootstrapCache
from .codetree import CodeTree
from ..errors import KewpieError, UsageError
from ..platform.logsetup import get_logger
from .layout import socket_path
from .options import bootstrap_subset
from ..platform.netns import HostNetwork, Record
from ..platform.netrules import NetworkControl
from ..platform.ports import PortLease, PortLeaser
from .replication import replication_options, start_replica, wait_for_replica
from .requirements import Requirements
from .reuse import Baseline, BaselineTaker, set_reasons
from .server import Server, ServerSettings
from .spare import SpareDatadirs

if TYPE_CHECKING:   # Galera's modules load with a Galera set (lib/servers/galera_cluster.py)
    from .garbd import Arbitrator

@dataclass(frozen=True)
class ServerKind:
    """A server type: how its servers are made (a Server class, or a function choosing
    one), how a set starts (True when it formed from a snapshot of an earlier
    formation), how to wait for it to apply."""

    server_class: Callable[..., Server]
    start_set: Callable[["ServerManager", list[Server], "Requirements"], bool | None]
    wait_applied: Callable[["ServerManager", float], None]
    spare_datadirs: bool = False  # copy the next pristine datadirs while a test runs
    # start_set in two halves, for ServerManager.launch: spawn without waiting, then
    # wait for the servers and finish the set (None: the kind starts in one go)
    launch_set: Callable[["ServerManager", list[Server], "Requirements"], None] | None = None
    finish_set: Callable[["ServerManager", list[Server], "Requirements"], None] | None = None


@dataclass(frozen=True)
class Launched:
    """A set launched ahead of its get_servers: its requirements, and what went wrong."""

    reqs: Requirements
    error: KewpieError | None = None


def start_replicating_set(manager: "ServerManager", servers: list[Server], reqs: "Requirements") -> None:
    """mysql kind: fresh datadirs, start all at once, then wire replicas to primaries."""
    launch_replicating_set(manager, servers, reqs)
    _ready_and_wired(manager, servers, reqs, since_launch=False)


def launch_replicating_set(manager: "ServerManager", servers: list[Server],
                           reqs: "Requirements") -> None:
    """mysql kind, first half: fresh datadirs, every server spawned (none waited for)."""
    replicating = {i for pair in reqs.pairs for i in pair}
    for server in servers:
        if server.index in replicating:
            server.harness_options = replication_options(server)
        manager.copy_pristine(server)
    for server in servers:
        server.start(wait=False)


def finish_replicating_set(manager: "ServerManager", servers: list[Server],
                           reqs: "Requirements") -> None:
    """mysql kind, second half: every server answers (within its start timeout of its
    launch), replicas wired to primaries."""
    _ready_and_wired(manager, servers, reqs, since_launch=True)


def _ready_and_wired(manager: "ServerManager", servers: list[Server], reqs: "Requirements",
                     since_launch: bool) -> None:
    for server in servers:
        server.wait_ready(since_launch=since_launch)
    for primary, replica in reqs.pairs:
        start_replica(servers[primary], servers[replica])
    wait_replicas_applied(manager, 60.0)


def wait_replicas_applied(manager: "ServerManager", timeout: float) -> None:
    """mysql kind: every replica has applied what its primary committed."""
    for primary, replica in manager.current.pairs if manager.current else ():
        wait_for_replica(manager.servers[primary], manager.servers[replica], timeout)


class ServerManager:
    """The servers of one bot (``workdir/bot0``)."""

    def __init__(self, bot_name: str, bot_dir: str, tree: CodeTree, leaser: PortLeaser,
                 cache: BootstrapCache, settings: ServerSettings,
                 kinds: Mapping[str, "ServerKind"],
                 on_change: Callable[[], None] | None = None,
                 disk_dir: str | None = None, disk_problem: str = "",
                 network_prefix: str = "", network_record: str | None = None,
                 keep_dir: str | None = None) -> None:
        """keep_dir: where the first set's pristine datadirs are kept for the next run
        (:meth:`SpareDatadirs.keep_for_next_run`; None: not kept)."""
        self.bot_name = bot_name
        # network = 'namespaces': this bot's namespaces (made per set, removed with it)
        self.host_network = HostNetwork(f"{network_prefix or 'kw'}-{bot_name}",
                                        Record(network_record))
        self.bot_dir = bot_dir
        self.disk_dir = disk_dir or bot_dir
        self._disk_problem = disk_problem
        self.tree = tree
        self.leaser = leaser
        self.cache = cache
        self.settings = settings
        self._kinds = kinds
        self._on_change = on_change
        self.servers: list[Server] = []
        # processes of the set that are no servers: Galera arbitrators (garbd)
        self.arbitrators: list[Arbitrator] = []
        self.last_servers: list[Server] = []  # the latest set, kept for evidence after a failed start
        self.current: Requirements | None = None
        self.leases: list[PortLease] = []
        self.restarts = 0   # sets started
        self._launched: Launched | None = None  # a set launch() began, for get_servers
        self._baseline: Baseline | None = None
        self._baselines = BaselineTaker()
        self._spares = SpareDatadirs(cache, keep_dir)
        self._first_set: list[tuple[str, str]] = []  # (template, vardir) of the first set
        self._first_set_open = False  # copy_pristine is filling _first_set
        self._caches: dict[str, BootstrapCache] = {tree.basedir: cache}  # one per code tree
        self._force_reset = False
        # False when no later test can reuse this bot's servers (the run's last test,
        # --start-and-exit, mtr mode): no baseline fingerprint, no spare datadirs
        # (more_tests); and the run ends with the next test: a passing test's set stops
        # with the run (shutdown), after its result is out, not before
        self._reuse_expected = True
        self._last_test = False
        self._formed_from_snapshot = False  # the current (Galera) set was
        self._resets = 0
        self.log = get_logger()

    def more_tests(self, later: bool) -> None:
        """Say whether tests run on this bot's servers after the next one.  Without them
        (later False) the next test's set takes no baseline fingerprint and no spare
        datadirs are made, and a set that passes stops with the run, after its result."""
        self._reuse_expected = later
        self._last_test = not later

    def fits(self, reqs: Requirements) -> bool:
        """True when the running set serves reqs as it is: no reset asked, the same
        requirements, and not formed from a snapshot for a test that may not have one."""
        return (bool(self.servers) and self.current == reqs and not self._force_reset
                and not (self._formed_from_snapshot and not reqs.snapshot_formation))

    def add_arbitrator(self, arbitrator: Arbitrator) -> None:
        """Record a process of the set that is no server (a Galera arbitrator): stopped
        with the set, written to the state file."""
        self.arbitrators.append(arbitrator)
        self._notify()

    # ------------------------------------------------------------ leasing
    def _lease(self, index: int) -> PortLease:
        while len(self.leases) <= index:
            self.leases.append(self.leaser.lease())
        return self.leases[index]

    def plan(self, index: int) -> tuple[str, PortLease, str]:
        """Where server index of this bot will live, before it starts: (vardir, its
        port lease, its socket path) -- for tools that write configs naming them."""
        lease = self._lease(index)
        vardir = os.path.join(self.bot_dir, f"var_s{index}")
        return vardir, lease, socket_path(vardir, self.settings.socket_fallback_dir, lease.first)

    def lease_extra(self, index: int) -> PortLease:
        """The port lease of a set's process beyond its servers (index from the set's
        server count on: an arbitrator's)."""
        return self._lease(index)

    def _notify(self, _server: Server | None = None) -> None:
        if self._on_change:
            self._on_change()

    # ------------------------------------------------------------ servers
    def get_servers(self, reqs: Requirements) -> list[Server]:
        """Servers meeting reqs: the current ones if reusable, else fresh ones (those
        :meth:`launch` began for reqs, once they answer)."""
        launched, self._launched = self._launched, None
        if launched is not None and launched.reqs == reqs and not self._force_reset:
            if launched.error is not None:
                raise launched.error
            self._start_fresh(reqs, launched=True)
            return self.servers
        if launched is None and self.fits(reqs):
            return self.servers
        self.teardown(discard=launched is not None)  # a launched set nobody took: killed
        self._start_fresh(reqs)
        return self.servers

    def launch(self, reqs: Requirements) -> bool:
        """Begin starting fresh servers for reqs without waiting for them: datadirs
        copied, processes spawned.  The next :meth:`get_servers` of the same requirements
        waits until they answer and finishes the set (replication, baseline); a failure
        here is raised by that call, as if it had happened there.  Only for a manager
        without servers, and a kind that starts in two halves (the mysql kind; not a
        namespaced set).  True when launched (or failed, to be raised later)."""
        kind = self._kinds.get(reqs.server_type)
        if (self.servers or self._launched is not None or kind is None or kind.launch_set is None
                or kind.finish_set is None or reqs.namespaced
                or (reqs.on_disk and self._disk_problem)):
            return False
        try:
            self._make_set(reqs, kind)
            kind.launch_set(self, self.servers, reqs)
        except KewpieError as exc:
            self.teardown()
            self._launched = Launched(reqs, exc)
            return True
        except BaseException:
            self.teardown()
            raise
        self._launched = Launched(reqs)
        return True

    def _kind(self, reqs: Requirements) -> ServerKind:
        """reqs' server kind; UsageError when unknown, or on disk without a place for it."""
        kind = self._kinds.get(reqs.server_type)
        if kind is None:
            raise UsageError(f"unknown server type {reqs.server_type!r}; "
                             f"known: {', '.join(sorted(self._kinds))}")
        if reqs.on_disk and self._disk_problem:
            raise UsageError(f"this suite keeps its servers on disk (storage = 'disk'), but "
                             f"{self._disk_problem}")
        return kind

    def _start_fresh(self, reqs: Requirements, launched: bool = False) -> None:
        """Start a fresh set for reqs; launched: :meth:`launch` spawned it, finish it."""
        kind = self._kind(reqs)
        started = time.monotonic()
        if not launched:
            self._make_set(reqs, kind)
        servers = self.servers
        try:
            if launched:
                assert kind.finish_set is not None
                kind.finish_set(self, servers, reqs)
            else:
                self._formed_from_snapshot = bool(kind.start_set(self, servers, reqs))
            if self._reuse_expected:
                self.take_baseline()
        except BaseException:
            self.teardown()
            raise
        self.log.debug("%s: servers ready in %.0f ms", self.bot_name,
                       (time.monotonic() - started) * 1000)
        # in the background: the next spares (this kind's), and removing old vardirs
        # Spares only once this bot has reset a set: a bot whose tests clean up never
        # needs one, and the copy would compete with its tests for the CPU.
        self._spares.prepare([(self.pristine_template(s), s.paths.vardir) for s in servers]
                             if kind.spare_datadirs and self._reuse_expected and self._resets
                             else [])
        self._notify()

    def _make_set(self, reqs: Requirements, kind: ServerKind) -> None:
        """The server objects of a fresh set for reqs (nothing started yet)."""
        self.current = reqs
        self._force_reset = False
        self._formed_from_snapshot = False
        self._first_set_open = self.restarts == 0 and kind.spare_datadirs and not reqs.on_disk
        servers = []
        trees = [self.tree_for(reqs.basedir_of(i)) for i in range(reqs.count)]
        if any(t is not self.tree for t in trees):
            self.log.info("code trees: " + ", ".join(f"s{i} {t.label} ({t.basedir})"
                                                     for i, t in enumerate(trees)))
        hosts = self.host_network.create(reqs.count) if reqs.namespaced else []
        control = NetworkControl(hosts) if hosts else None
        for index, options in enumerate(reqs.servers):
            base = self.disk_dir if reqs.on_disk else self.bot_dir
            vardir = os.path.join(base, f"var_s{index}")
            if os.path.lexists(vardir):
                self._spares.remove_later(vardir)
            net = (hosts[index], control) if control is not None else None
            server = kind.server_class(f"s{index}", index, trees[index], vardir,
                                       self._lease(index), list(options), self.settings,
                                       on_change=self._notify, net=net)
            servers.append(server)
        self.servers = servers
        self.last_servers = servers
        self.restarts += 1

    def tree_for(self, label: str) -> CodeTree:
        """The code tree a requirement's label names ('' = this manager's tree)."""
        if not label or self.settings.trees is None:
            return self.tree
        tree = self.settings.trees.resolve(label)
        return self.tree if tree.basedir == self.tree.basedir else tree

    def cache_for(self, tree: CodeTree) -> BootstrapCache:
        """The bootstrap cache of a code tree (templates of every tree share one directory;
        their keys differ by the server binary)."""
        if tree.basedir not in self._caches:
            self._caches[tree.basedir] = BootstrapCache(self.cache.cache_dir, tree,
                                                        self.cache.server_user)
        return self._caches[tree.basedir]

    def pristine_template(self, server: Server) -> str:
        """The pristine datadir (bootstrap cache template) for server's options."""
        return self.cache_for(server.tree).template(bootstrap_subset(server.effective_options()))

    def copy_pristine(self, server: Server) -> None:
        """Create server's vardir and give it a fresh copy of the pristine datadir."""
        server.paths.make_dirs()
        template = self.pristine_template(server)
        if self._first_set_open:
            self._first_set.append((template, server.paths.vardir))
        if not self._spares.take(template, server.paths.vardir, server.paths.datadir):
            self.cache.copy_to(template, server.paths.datadir)

    def wait_for_replicas(self, timeout: float = 60.0) -> None:
        """Block until every replica (or cluster node) has applied what was committed."""
        if not self.current:
            return
        kind = self._kinds[self.current.server_type]
        kind.wait_applied(self, timeout)

    def take_baseline(self) -> None:
        """Fingerprint each server as handed to the test (with row details under
        --verbose, so a reset can say which tables, users or variables differ)."""
        self._baseline = self._baselines.take(self.current, self.servers,
                                              self.log.isEnabledFor(logging.DEBUG))

    # ------------------------------------------------------------ after a test
    def reset_reasons(self, test_passed: bool) -> list[str]:
        """Why the servers cannot be reused by the next test ([] = reusable; the
        ``test`` schema has then been emptied)."""
        if self._force_reset:
            return ["the test asked for a reset"]
        if not test_passed:
            return ["the test did not pass"]
        if not self.servers:
            return []
        gone = [f"{a.name} is not running" for a in self.arbitrators if not a.is_alive()]
        if gone:
            return gone
        if self._baseline is None:
            return ["no baseline fingerprint"]
        return set_reasons(self.servers, self._baseline, self.wait_for_replicas,
                           self.log.isEnabledFor(logging.DEBUG))

    def after_test(self, test_passed: bool) -> list[str]:
        """Apply the reuse rule; discard the set when it cannot be reused.

        A passing test's servers are killed (their datadirs are thrown away);
        a failing test's were already stopped cleanly by the runner for the
        evidence.  Returns the reasons ([] = the servers are kept).  When the
        rule itself fails (a server that does not answer its checks), the set
        is torn down and that failure is the reason."""
        try:
            return self._apply_reuse_rule(test_passed)
        except KewpieError as exc:
            self.log.warning(f"{self.bot_name}: applying the reuse rule failed, resetting "
                             f"the servers: {exc}")
            self.teardown(fast=True)
            return [f"applying the reuse rule failed: {exc}"]

    def _apply_reuse_rule(self, test_passed: bool) -> list[str]:
        if test_passed and not self._reuse_expected and not self._force_reset:
            if not self._last_test:
                self.teardown(discard=True)  # no later test: not a reset, the set's end
            return []
        had_servers = bool(self.servers) or not test_passed
        reasons = self.reset_reasons(test_passed) if had_servers else []
        if reasons:
            self._resets += 1
            self.log.debug("%s: fresh servers for the next test: %s", self.bot_name,
                           "; ".join(reasons))
            started = time.monotonic()
            self.teardown(discard=test_passed)
            self.log.debug("%s: servers discarded in %.0f ms", self.bot_name,
                           (time.monotonic() - started) * 1000)
        return reasons

    def request_reset(self) -> None:
        """Ask for fresh servers before the next test."""
        self._force_reset = True

    # ------------------------------------------------------------ stopping
    def teardown(self, fast: bool = False, discard: bool = False) -> None:
        """Stop every server of the current set (leases are kept for reuse); discard:
        kill -9, the datadirs are thrown away and no evidence is wanted."""
        arbitrators, self.arbitrators = self.arbitrators, []
        for arbitrator in arbitrators:  # first: it leaves the cluster while the nodes run
            if fast or discard:
                arbitrator.kill()
            else:
                arbitrator.stop()
        stop_all(self.servers, fast=fast, kill=discard)
        if any(s.net for s in self.servers) or self.host_network.hosts:
            self.host_network.destroy()
        self.servers = []
        self.current = None
        self._formed_from_snapshot = False
        self._launched = None
        self._baseline = None
        self._notify()

    def release(self) -> None:
        """Release our hold on the port leases."""
        for lease in self.leases:
            lease.release()
        self.leases = []

    def shutdown(self, fast: bool = False, discard: bool = False) -> None:
        """Stop everything and release leases (end of run); discard: kill -9, the
        vardirs are emptied next and nothing is read from them."""
        try:
            self.teardown(fast=fast, discard=discard)
            if not fast:  # the next run's first set renames these in (not when interrupted)
                self._spares.keep_for_next_run(self._first_set)
        finally:
            self._spares.discard()
            self.release()


def stop_all(servers: list[Server], fast: bool = False, kill: bool = False) -> None:
    """Stop servers in parallel, each by the one stop policy with its bounded waits.

    kill: kill -9 each (its datadir is thrown away and no evidence is wanted).
    Otherwise each server is discarded (a clean stop for a plain server, kill -9
    for a Galera node whose datadir is thrown away); fast (on interrupt): no SQL
    ``SHUTDOWN``, SIGTERM then SIGKILL within a few seconds.
    """
    running = [s for s in servers if s.is_alive()]
    if kill:
        for server in running:
            server.kill()
        return
    threads = [threading.Thread(target=server.discard, args=(fast,), daemon=True)
               for server in running]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
