"""Starts, reuses and resets the servers a test needs, for one bot.

Reuse rule (see docs/servers.md): a test gets the servers of the previous
test when (1) the requirements (server type, option lists, requests) are the
same, (2) the previous test passed, (3) every server is still running, was
not restarted during the test and answers SQL, and (4) no server's state
changed: its write counters (``Com_insert``, ``Com_create_table``... and
``Innodb_rows_inserted/updated/deleted``) and its global variables are what
they were when the harness handed it over.  Otherwise the whole set is
stopped and started again from fresh copies of the pristine datadir.
"""
from __future__ import annotations

import os
import shutil
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from lib.servers.bootstrap import BootstrapCache
from lib.servers.codetree import CodeTree
from lib.errors import QueryError, ServerError, UsageError
from lib.platform.logsetup import get_logger
from lib.servers.options import bootstrap_subset
from lib.platform.ports import PortLease, PortLeaser
from lib.servers.replication import replication_options, start_replica, wait_for_replica
from lib.servers.requirements import Requirements
from lib.servers.server import Server, ServerSettings

WRITE_COUNTER_PREFIXES = (
    "Com_insert", "Com_update", "Com_delete", "Com_replace", "Com_load", "Com_create",
    "Com_drop", "Com_alter", "Com_rename", "Com_truncate", "Com_grant", "Com_revoke",
    "Com_change_master", "Com_start_", "Com_stop_", "Com_slave_", "Com_reset", "Com_purge",
    "Com_install", "Com_uninstall", "Com_call_procedure", "Com_stmt_execute", "Com_xa_commit",
    "Com_lock_tables", "Com_flush", "Com_release_savepoint", "Com_backup",
    "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
)
VOLATILE_VARIABLES = frozenset({
    "gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos", "gtid_slave_pos",
    "gtid_executed", "gtid_purged", "timestamp", "wsrep_start_position",
})


@dataclass(frozen=True)
class ServerKind:
    """A server type: its Server class, how a set starts, how to wait for it to apply."""

    server_class: type[Server]
    start_set: Callable[["ServerManager", list[Server], "Requirements"], None]
    wait_applied: Callable[["ServerManager", float], None]


def start_replicating_set(manager: "ServerManager", servers: list[Server], reqs: "Requirements") -> None:
    """mysql kind: fresh datadirs, start all at once, then wire replicas to primaries."""
    replicating = {i for pair in reqs.pairs for i in pair}
    for server in servers:
        if server.index in replicating:
            server.harness_options = replication_options(server)
        manager.copy_pristine(server)
    for server in servers:
        server.start(wait=False)
    for server in servers:
        server.wait_ready()
    for primary, replica in reqs.pairs:
        start_replica(servers[primary], servers[replica])
    wait_replicas_applied(manager, 60.0)


def wait_replicas_applied(manager: "ServerManager", timeout: float) -> None:
    """mysql kind: every replica has applied what its primary committed."""
    for primary, replica in manager.current.pairs:
        wait_for_replica(manager.servers[primary], manager.servers[replica], timeout)


def state_fingerprint(server: Server) -> dict[str, Any]:
    """What the reuse rule compares: pid, write counters and global variables."""
    counters = {}
    for name, value in server.execute("SHOW GLOBAL STATUS"):
        if name.startswith(WRITE_COUNTER_PREFIXES):
            counters[name] = value
    variables = {name: value for name, value in server.execute("SHOW GLOBAL VARIABLES")
                 if name not in VOLATILE_VARIABLES}
    return {"pid": server.pid, "counters": counters, "variables": variables}


def fingerprint_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Human-readable differences between two fingerprints ([] = unchanged)."""
    if before.get("pid") != after.get("pid"):
        return ["restarted"]
    changes = []
    for section in ("counters", "variables"):
        old, new = before.get(section, {}), after.get(section, {})
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                changes.append(f"{key} {old.get(key)!s:.20}->{new.get(key)!s:.20}")
    return changes


class ServerManager:
    """The servers of one bot (``workdir/bot0``)."""

    def __init__(self, bot_name: str, bot_dir: str, tree: CodeTree, leaser: PortLeaser,
                 cache: BootstrapCache, settings: ServerSettings,
                 kinds: Mapping[str, "ServerKind"],
                 on_change: Callable[[], None] | None = None,
                 disk_dir: str | None = None, disk_problem: str = "") -> None:
        self.bot_name = bot_name
        self.bot_dir = bot_dir
        self.disk_dir = disk_dir or bot_dir
        self.disk_problem = disk_problem
        self.tree = tree
        self.leaser = leaser
        self.cache = cache
        self.settings = settings
        self.kinds = kinds
        self.on_change = on_change
        self.servers: list[Server] = []
        self.last_servers: list[Server] = []  # the latest set, kept for evidence after a failed start
        self.current: Requirements | None = None
        self.leases: list[PortLease] = []
        self.baseline: dict[str, dict[str, Any]] = {}
        self.force_reset = False
        self.restarts = 0
        self.log = get_logger()

    # ------------------------------------------------------------ leasing
    def _lease(self, index: int) -> PortLease:
        while len(self.leases) <= index:
            self.leases.append(self.leaser.lease())
        return self.leases[index]

    def _notify(self, _server: Server | None = None) -> None:
        if self.on_change:
            self.on_change()

    # ------------------------------------------------------------ servers
    def get_servers(self, reqs: Requirements) -> list[Server]:
        """Servers meeting reqs: the current ones if reusable, else fresh ones."""
        if self.servers and self.current == reqs and not self.force_reset:
            return self.servers
        self.teardown()
        self._start_fresh(reqs)
        return self.servers

    def _start_fresh(self, reqs: Requirements) -> None:
        kind = self.kinds.get(reqs.server_type)
        if kind is None:
            raise UsageError(f"unknown server type {reqs.server_type!r}; "
                             f"known: {', '.join(sorted(self.kinds))}")
        if reqs.on_disk and self.disk_problem:
            raise UsageError(f"this suite keeps its servers on disk (storage = 'disk'), but "
                             f"{self.disk_problem}")
        self.current = reqs
        self.force_reset = False
        servers = []
        for index, options in enumerate(reqs.servers):
            base = self.disk_dir if reqs.on_disk else self.bot_dir
            vardir = os.path.join(base, f"var_s{index}")
            if os.path.exists(vardir):
                shutil.rmtree(vardir)
            servers.append(kind.server_class(f"s{index}", index, self.tree, vardir,
                                             self._lease(index), list(options), self.settings,
                                             on_change=self._notify))
        self.servers = servers
        self.last_servers = servers
        self.restarts += 1
        try:
            kind.start_set(self, servers, reqs)
            self.take_baseline()
        except BaseException:
            self.teardown()
            raise
        self._notify()

    def copy_pristine(self, server: Server) -> None:
        """Create server's vardir and give it a fresh copy of the pristine datadir."""
        server.make_dirs()
        template = self.cache.template(bootstrap_subset(server.effective_options()))
        self.cache.copy_to(template, server.datadir)

    def wait_for_replicas(self, timeout: float = 60.0) -> None:
        """Block until every replica (or cluster node) has applied what was committed."""
        if not self.current:
            return
        kind = self.kinds[self.current.server_type]
        kind.wait_applied(self, timeout)

    def take_baseline(self) -> None:
        """Remember each server's state as handed to the test."""
        self.baseline = {s.name: state_fingerprint(s) for s in self.servers}

    # ------------------------------------------------------------ after a test
    def reset_reasons(self, test_passed: bool) -> list[str]:
        """Why the servers cannot be reused by the next test ([] = reusable)."""
        if not self.servers:
            return []
        if self.force_reset:
            return ["the test asked for a reset"]
        if not test_passed:
            return ["the test did not pass"]
        reasons = []
        for server in self.servers:
            if not server.is_alive():
                reasons.append(f"{server.name} is not running")
                continue
            try:
                changes = fingerprint_changes(self.baseline.get(server.name, {}),
                                              state_fingerprint(server))
            except (QueryError, ServerError) as exc:
                reasons.append(f"{server.name} does not answer: {exc}")
                continue
            problem = server.reuse_problem()
            if problem:
                reasons.append(problem)
                continue
            if changes:
                shown = ", ".join(changes[:4]) + (" ..." if len(changes) > 4 else "")
                reasons.append(f"{server.name} changed ({shown})")
        return reasons

    def after_test(self, test_passed: bool) -> list[str]:
        """Apply the reuse rule; tear the set down when it cannot be reused."""
        reasons = self.reset_reasons(test_passed)
        if reasons:
            self.log.debug("%s: fresh servers for the next test: %s", self.bot_name,
                           "; ".join(reasons))
            self.teardown()
        return reasons

    def reset_servers(self, _bot_name: str | None = None) -> None:
        """kewpie 2012 API: ask for fresh servers before the next test."""
        self.force_reset = True

    def request_reset(self) -> None:
        """Ask for fresh servers before the next test."""
        self.force_reset = True

    # ------------------------------------------------------------ stopping
    def teardown(self, fast: bool = False) -> None:
        """Stop every server of the current set (leases are kept for reuse)."""
        stop_all(self.servers, fast=fast)
        self.servers = []
        self.current = None
        self.baseline = {}
        self._notify()

    def release(self) -> None:
        """Release our hold on the port leases."""
        for lease in self.leases:
            lease.release()
        self.leases = []

    def shutdown(self, fast: bool = False) -> None:
        """Stop everything and release leases (end of run)."""
        try:
            self.teardown(fast=fast)
        finally:
            self.release()

    # ------------------------------------------------------------ kewpie 2012 API
    def stop_server(self, server: Server) -> None:
        """Stop one server."""
        server.stop()

    def start_server(self, server: Server) -> None:
        """Start one server and wait until it answers."""
        server.start()

    def restart_server(self, server: Server, options: list[str] | None = None) -> None:
        """Restart one server, optionally with new options."""
        server.restart(options)

    def start_servers(self, *_args: Any) -> None:
        """Start every stopped server of the current set."""
        for server in self.servers:
            server.start()


def stop_all(servers: list[Server], fast: bool = False) -> None:
    """Stop servers in parallel with bounded waits.

    Normal: each server is discarded (a clean SHUTDOWN-SIGTERM-SIGKILL stop for a
    plain server, kill -9 for a Galera node whose datadir is thrown away).
    fast (on interrupt): SIGTERM to all at once, 5 s shared bound, then SIGKILL.
    """
    running = [s for s in servers if s.is_alive()]
    if fast:
        for server in running:
            server.signal_stop()
        deadline = time.monotonic() + 5.0
        for server in running:
            if not server.wait_exit(max(0.0, deadline - time.monotonic())):
                server.kill()
            server.notify_changed()
        return
    threads = [threading.Thread(target=server.discard, daemon=True) for server in running]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

