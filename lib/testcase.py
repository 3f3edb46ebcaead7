"""The modern way to write a kewpie test: subclass :class:`KewpieTestCase`.

The harness sets ``servers`` (a list of :class:`~lib.server.Server`),
``server_manager`` and ``test_executor`` on every subclass before the
module's tests run.  Helpers dump, checksum and compare schemas, wait for
replicas, and wait for arbitrary conditions with a timeout.
"""
from __future__ import annotations

import time
import unittest
from typing import Any, Callable

from lib import dbcompare, replication
from lib.errors import QueryError
from lib.server import Server


class KewpieTestCase(unittest.TestCase):
    """Base class giving ``self.servers`` and comparison helpers."""

    servers: list[Server] = []
    server_manager: Any = None
    test_executor: Any = None

    # ------------------------------------------------------------ waiting
    def wait_for(self, predicate: Callable[[], Any], timeout: float = 30.0,
                 interval: float = 0.1, msg: str = "condition") -> Any:
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
        self.server_manager.wait_for_replicas(timeout)

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
        """Wait for replicas, then compare each replica's checksums with its primary."""
        self.wait_for_replicas(timeout)
        for primary, replica in self.server_manager.current.replication:
            status = replication.replica_status(self.servers[replica])
            if status.get("Slave_SQL_Running") != "Yes" or status.get("Slave_IO_Running") != "Yes":
                self.fail(f"replication on {self.servers[replica].name} is not healthy: "
                          f"{replication.describe_status(status)}")
            self.assertChecksumsEqual(self.servers[primary], [self.servers[replica]], schemas)

    def assertQueryError(self, code: int, server: Server, sql: str) -> QueryError:
        """Fail unless sql fails on server with the given MySQL error code."""
        with self.assertRaises(QueryError) as ctx:
            server.execute(sql)
        self.assertEqual(ctx.exception.code, code, f"expected error {code}, got {ctx.exception}")
        return ctx.exception
