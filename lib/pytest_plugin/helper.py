"""The object a pytest test gets from kewpie's fixtures: the unittest side's test case.

:class:`KewpieServers` is a :class:`~lib.suites.testcase.ClusterTestCase`
given the test's :class:`~lib.suites.context.TestContext`, so a pytest test
has every helper a kewpie suite has (``servers``, ``context``, checksums and
dumps, ``assertReplicasInSync``, ``backups``, ``snapshot``, ``randgen``,
``run_workloads`` with faults and ``assertValid``, Galera's ``wait_synced``,
``kill_node``...).  Its ``assert*`` helpers raise AssertionError, which pytest
reports as usual; cleanups they register run when the test ends.
"""
from __future__ import annotations

import unittest
from typing import Any

from ..servers.server import Server
from ..suites.context import TestContext
from ..suites.testcase import ClusterTestCase


class KewpieServers(ClusterTestCase):
    """A test's servers and kewpie's test helpers, for a pytest test."""

    __test__ = False  # never collected as a unittest case itself

    def __init__(self, context: TestContext) -> None:
        super().__init__("runTest")
        self.use_context(context)

    def runTest(self) -> None:  # noqa: N802 - unittest's name for the default method
        """Never run: the pytest test is the test."""

    def id(self) -> str:
        """The test's name, ``file.test``, as in kewpie's rows and evidence."""
        return self.context.name

    def __str__(self) -> str:
        return f"kewpie servers of {self.context.name}"

    __repr__ = __str__

    @property
    def primary(self) -> Server:
        """Server 0 (the primary of a replication set, the first Galera node)."""
        return self.context.servers[0]

    @property
    def replicas(self) -> list[Server]:
        """The servers that replicate or joined (the second of each join_cluster pair)."""
        joiners = [joiner for _, joiner in self.context.spec.requirements.pairs]
        return [self.context.servers[i] for i in joiners]

    def execute(self, sql: str, args: Any = None, server: Server | None = None) -> list[tuple[Any, ...]]:
        """Run sql on server (default: the first); its rows (QueryError on an error)."""
        return (server or self.primary).execute(sql, args)

    def mark_failed(self, why: str) -> None:
        """Record the pytest test's failure, so cleanups keep evidence (backups, histories)."""
        result = self.context.result
        if not self.context.has_failed(self):
            result.failures.append((self, why))

    def finish(self) -> None:
        """Run the cleanups the helpers registered (as unittest does after a test)."""
        self.doCleanups()


def new_result() -> unittest.TestResult:
    """The unittest result a pytest test's context reads failures from."""
    return unittest.TestResult()
