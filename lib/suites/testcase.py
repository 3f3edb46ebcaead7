"""The modern way to write a kewpie test: subclass :class:`KewpieTestCase`.

The runner hands each test its :class:`~lib.suites.context.TestContext` once,
before it runs: ``self.context`` (servers, manager, log dir, tool paths,
seed); ``self.servers`` and ``self.server_manager`` are short for its
fields.  Helpers dump, checksum and compare schemas, wait for replicas, and
wait for arbitrary conditions with a timeout.
"""
from __future__ import annotations

import time
import unittest
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from ..checks import dbcompare

from ..servers import replication
from ..errors import KewpieError, QueryError, ReplicationError
from ..servers.faultwindows import TARGET, FaultWindows
from ..servers.server import Server
from ..servers.manager import ServerManager
from .consistency_checks import ConsistencyChecks
from .context import TestContext

if TYPE_CHECKING:  # imported by the helpers that use them (a test that does not loads less)
    from ..backup import ServerBackups, Snapshot
    from ..servers.galera import GaleraServer
    from ..servers.garbd import Arbitrator
    from ..randgen.result import RandgenResult
    from ..servers.options import Option

T = TypeVar("T")


class KewpieTestCase(ConsistencyChecks, unittest.TestCase):
    """Base class giving ``self.servers``, comparison helpers and consistency checks
    (recorded workloads, faults, checkers: see :mod:`lib.suites.consistency_checks`)."""

    _context: TestContext | None = None

    def use_context(self, context: TestContext) -> None:
        """Called by the runner, once, before the test runs; a second call is an error."""
        if self._context is not None and self._context is not context:
            raise KewpieError(f"{self.id()} was already given a test context")
        self._context = context

    @property
    def context(self) -> TestContext:
        """This test's context; KewpieError when the test was not started by kewpie."""
        if self._context is None:
            raise KewpieError(f"{self.id()} has no test context: run it with ./kewpie.py")
        return self._context

    @property
    def servers(self) -> list[Server]:
        """The test's servers, in server_requirements order (a new list each time)."""
        return list(self.context.servers)

    @property
    def server_manager(self) -> ServerManager:
        """The bot's ServerManager (replication pairs, resets, waits)."""
        return self.context.manager

    @staticmethod
    def options(*items: str) -> list[Option]:
        """Parse option strings (``'--name=value'``) into Option objects."""
        from ..servers.options import parse_options
        return parse_options(list(items))

    def debug_message(self, msg: str) -> None:
        """A debug message from the test (not named test_* so unittest does not collect
        it): shown with --test-debug (``TEST_DEBUG ...``), else only in kewpie.log."""
        from ..platform.logsetup import get_logger
        if self.context.setup.config.debugging.test_debug:
            get_logger().info(f"TEST_DEBUG {msg}")
        else:
            get_logger().debug(msg)

    def suppress_warning(self, regex: str) -> None:
        """Error-log lines matching regex (searched) do not fail this test: for a
        warning or error the test provokes on purpose (see docs/debugging.md)."""
        import re
        re.compile(regex)
        self.context.suppressions.append(regex)

    # ------------------------------------------------------------ waiting
    def wait_for(self, predicate: Callable[[], T], timeout: float = 30.0,
                 interval: float = 0.1, msg: str = "condition") -> T:
        """Poll predicate until it returns a true value; fail the test on timeout."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while True:
            try:
                value = predicate()
                if value:
                    return value
            except QueryError as exc:
                last_error = exc
            if time.monotonic() >= deadline:
                extra = f" (last error: {last_error})" if last_error else ""
                self.fail(f"timed out after {timeout:.1f}s waiting for {msg}{extra}")
            time.sleep(interval)

    def wait_for_replicas(self, timeout: float = 60.0) -> None:
        """Block until every replica applied all its primary committed."""
        self.context.manager.wait_for_replicas(timeout)

    def wait_for_replica(self, primary: Server, replica: Server, timeout: float = 60.0) -> None:
        """Block until replica applied all primary committed."""
        replication.wait_for_replica(primary, replica, timeout)

    # ------------------------------------------------------------ comparing
    def dump(self, server: Server, schemas: list[str] | None = None) -> str:
        """A deterministic dump of schemas (all user schemas by default)."""
        return dbcompare.dump_schemas(server, schemas)

    def checksums(self, server: Server, schemas: list[str] | None = None) -> dict[str, Any]:
        """CHECKSUM TABLE of every table in schemas."""
        return dbcompare.table_checksums(server, schemas)

    def assertChecksumsEqual(self, reference: Server, others: list[Server],
                             schemas: list[str] | None = None) -> None:
        """Fail with the differing tables unless every table's checksum matches."""
        result = dbcompare.compare_checksums(reference, others, schemas)
        if not result.equal:
            self.fail("tables differ:\n" + str(result))

    def assertDumpsEqual(self, reference: Server, others: list[Server],
                         schemas: list[str] | None = None) -> None:
        """Fail with a unified diff unless the dumps are identical."""
        result = dbcompare.compare_dumps(reference, others, schemas)
        if not result.equal:
            self.fail("dumps differ:\n" + str(result))

    def assertReplicasInSync(self, schemas: list[str] | None = None, timeout: float = 60.0) -> None:
        """Wait for replicas, then compare each replica's checksums with its primary.

        A replica whose replication thread stopped fails it at once, quoting
        Last_SQL_Error or Last_IO_Error."""
        try:
            self.wait_for_replicas(timeout)
        except ReplicationError as exc:
            self.fail(exc.args[0])
        servers = self.context.servers
        current = self.context.manager.current
        for primary, replica in current.pairs if current else ():
            status = replication.replica_status(servers[replica])
            if status.get("Slave_SQL_Running") != "Yes" or status.get("Slave_IO_Running") != "Yes":
                self.fail(f"replication on {servers[replica].name} is not healthy: "
                          f"{replication.describe_status(status)}")
            self.assertChecksumsEqual(servers[primary], [servers[replica]], schemas)

    def assertQueryError(self, code: int, server: Server, sql: str) -> QueryError:
        """Fail unless sql fails on server with the given MySQL error code."""
        with self.assertRaises(QueryError) as ctx:
            server.execute(sql)
        self.assertEqual(ctx.exception.code, code, f"expected error {code}, got {ctx.exception}")
        return ctx.exception

    # ------------------------------------------------------------ randgen
    def randgen(self, server: Server | list[Server] | None = None, grammar: str | None = None,
                gendata: str | bool | None = None, queries: int = 1000, threads: int = 1,
                duration: float = 3600.0, seed: int | None = None, schema: str = "test",
                **options: Any) -> RandgenResult:
        """Run a randgen load on server (default: the first); a ``RandgenResult``.

        seed defaults to the context's (1 unless the run sets another).  server
        may be a list: the first runs the load, ResultsetComparator compares the
        others with it (or give ``compare=[server]``); ``validators=``,
        ``transformers=``, ``reporters=`` take randgen's names.

        Paths are relative to the randgen folder (the project's ``randgen/``,
        or a Perl checkout given with ``--randgen-path``); ``gendata=True`` is
        the simple data set.  See :func:`lib.randgen.api.randgen_load` and
        docs/randgen.md; check it with ``result.ok`` / ``result.check()``.
        """
        from ..randgen.api import randgen_load
        context = self.context
        return randgen_load(context.log_dir, context.tools.randgen,
                            server or context.servers[0], grammar, gendata, queries, threads,
                            duration, context.seed if seed is None else seed, schema, **options)

    # ------------------------------------------------------------ backups
    def backups(self, server: Server) -> ServerBackups:
        """A :class:`lib.backup.ServerBackups` for server, in ``<bot>/backups/<test module>/``.

        The tool is ``--xtrabackup-path`` if given, else the code tree's
        mariabackup (or xtrabackup).  The directory is removed when the test
        passes and kept for a look when it fails.
        """
        from ..backup import ServerBackups
        label = ".".join(type(self).__module__.split(".")[-2:])
        session = ServerBackups(server, label=label,
                                xtrabackup_path=self.context.tools.xtrabackup)
        self.addCleanup(self._remove_backups_if_passed, session)
        return session

    def _remove_backups_if_passed(self, session: ServerBackups) -> None:
        if not self.context.has_failed(self):
            session.remove()

    def snapshot(self, server: Server, schemas: list[str] | None = None) -> Snapshot:
        """A :class:`lib.backup.Snapshot` (dump and checksums) of schemas on server."""
        from ..backup import take_snapshot
        return take_snapshot(server, schemas)

    def assertMatchesSnapshot(self, snapshot: Snapshot, server: Server, dumps: bool = True) -> None:
        """Fail with the differing tables and a dump diff unless server matches snapshot."""
        from ..backup import compare_snapshot
        result = compare_snapshot(snapshot, server, dumps)
        if not result.equal:
            self.fail(f"{server.name} does not match the snapshot of {snapshot.server_name}:\n"
                      f"{result}")

    def assertTablesCheck(self, server: Server, schemas: list[str] | None = None) -> None:
        """Fail with the problems CHECK TABLE reports on schemas' tables."""
        from ..backup import check_tables
        problems = check_tables(server, schemas)
        if problems:
            self.fail(f"CHECK TABLE on {server.name}:\n" + "\n".join(problems))


class ClusterTestCase(KewpieTestCase):
    """KewpieTestCase plus Galera helpers: sync, causal reads, kill and rejoin.

    A failing assertion made through these helpers reports every node's wsrep
    status; the harness adds it to any failure of a Galera test as well.
    """

    def nodes(self) -> list[GaleraServer]:
        """The Galera nodes of the test."""
        from ..servers.galera import GaleraServer
        return [s for s in self.context.servers if isinstance(s, GaleraServer)]

    def wsrep_report(self) -> str:
        """One status line per node."""
        return "\n".join(n.status_report() for n in self.nodes())

    def arbitrators(self) -> list[Arbitrator]:
        """The test's running Galera arbitrators (``server_requests = {'arbitrator': True}``)."""
        return [a for a in self.context.manager.arbitrators if a.is_alive()]

    def wait_synced(self, nodes: list[GaleraServer] | None = None, timeout: float = 120.0) -> None:
        """Wait until nodes (default: all) are Synced in a cluster of their number plus
        the running arbitrators, and each has applied what its cluster had committed
        when the wait began (Galera applies asynchronously: a node can read Synced
        before it has tried -- and failed -- a write set; such a node then leaves its
        cluster and the wait fails at once, quoting its error)."""
        from ..servers.galera_cluster import (GaleraJoinError, committed_positions,
                                              wait_applied, wait_cluster)
        members = nodes or self.nodes()
        started = time.monotonic()
        targets = committed_positions(members)
        try:
            wait_cluster(members, timeout, arbitrators=self.arbitrators())
            wait_applied(members, targets, max(0.0, timeout - (time.monotonic() - started)),
                         arbitrators=self.arbitrators())
        except GaleraJoinError as exc:
            self.fail(str(exc))

    def sync_execute(self, node: GaleraServer, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        """Run sql on node after it applied everything committed so far (wsrep_sync_wait).

        Galera applies other nodes' writes asynchronously: a statement on one
        node right after a write on another may not see it without this.
        """
        from ..servers.galera_cluster import sync_wait_execute
        return sync_wait_execute(node, sql, args)

    sync_read = sync_execute

    def kill_node(self, node: GaleraServer) -> None:
        """kill -9 a node and wait until the others see it gone.

        Like a ``Kill`` fault it opens a fault window (lib/servers/faultwindows.py)
        on the node, which the warnings check reads as a peer's on the rest of its
        cluster (``Server.shares_group``), closed by :meth:`restart_node` once the
        cluster is Synced again: the check excuses the kill's lines inside it."""
        opened = getattr(self, "_kill_windows", {})
        self._kill_windows = opened
        opened[node.name] = node.fault_windows.open(node.name, "kill", TARGET,
                                                    f"kill_node {node.name}")
        node.kill()
        others = [n for n in self.nodes() if n is not node and n.is_alive()]
        size = len(others) + len(self.arbitrators())
        self.wait_for(lambda: all(n.is_synced(size) for n in others), timeout=60,
                      msg=f"the cluster to notice {node.name} is gone\n{self.wsrep_report()}")

    def restart_node(self, node: GaleraServer, timeout: float = 180.0) -> None:
        """Start a stopped or killed node and wait until the whole cluster is Synced.

        A node with its data rejoins by IST (its position is recovered after a
        crash); a node whose datadir was wiped gets a full SST.
        """
        node.start(timeout=timeout)
        self.wait_synced(timeout=timeout)
        window = getattr(self, "_kill_windows", {}).pop(node.name, None)
        if window is not None:
            FaultWindows.close(window)

    def assertClusterConsistent(self, schemas: list[str] | None = None) -> None:
        """All nodes Synced, caught up, and with equal checksums of schemas."""
        self.wait_synced()
        for node in self.nodes():
            self.sync_read(node, "SELECT 1")
        nodes = self.nodes()
        result = dbcompare.compare_checksums(nodes[0], nodes[1:], schemas)
        if not result.equal:
            self.fail(f"nodes differ:\n{result}\n{self.wsrep_report()}")
