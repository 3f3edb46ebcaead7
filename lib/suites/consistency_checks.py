"""Test-case helpers for consistency checks (mixed into KewpieTestCase).

::

    class BankTest(KewpieTestCase):
        def test_bank_survives_kills(self):
            n0, n1, n2 = self.servers
            run = self.run_workloads([Bank(self.servers), Append(self.servers)], duration=6,
                                     faults=Schedule.cycle([self.kill(n1), self.kill(n2)]))
            self.assertValid(run)
"""
from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from ..platform.logsetup import get_logger
from ..servers.server import Server
from .context import TestContext

# lib.consistency (workloads, checkers, PyMySQL) is imported by the helper that needs it:
# every test module imports this mixin, before a run's first server is launched.
if TYPE_CHECKING:  # a mixin of unittest.TestCase (KewpieTestCase)
    import unittest
    from ..consistency.faults import Isolate, Kill, Lag, Pause, Rejoin, Restart, Schedule, Tamper
    from ..consistency.netfaults import Flaky, Latency, Loss, Partition
    from ..consistency.run import RunResult
    from ..consistency.verdict import Verdict
    from ..consistency.workload import Workload
    _TestCase = unittest.TestCase
else:
    _TestCase = object


class ConsistencyChecks(_TestCase):
    """Run recorded workloads under faults and assert on the checkers' verdicts.

    Reads only ``self.context`` (a :class:`~lib.suites.context.TestContext`,
    provided by KewpieTestCase).
    """

    if TYPE_CHECKING:
        @property
        def context(self) -> TestContext:
            """The test's context (KewpieTestCase's)."""

    # ------------------------------------------------------------ faults
    def kill(self, *nodes: Server, spacing: float = 0.0) -> Kill:
        """kill -9 nodes (spacing seconds apart); healed by a restart."""
        from ..consistency.faults import Kill
        return Kill(list(nodes), list(self.context.servers), spacing=spacing)

    def pause(self, *nodes: Server) -> Pause:
        """SIGSTOP nodes; healed by SIGCONT."""
        from ..consistency.faults import Pause
        return Pause(list(nodes), list(self.context.servers))

    def restart(self, *nodes: Server) -> Restart:
        """A clean shutdown of nodes; healed by a start."""
        from ..consistency.faults import Restart
        return Restart(list(nodes), list(self.context.servers))

    def rejoin(self, *nodes: Server, sst: bool = False) -> Rejoin:
        """Kill Galera nodes (wiping them with sst); they rejoin by IST or SST."""
        from ..consistency.faults import Rejoin
        return Rejoin(list(nodes), list(self.context.servers), sst=sst)

    def isolate(self, *nodes: Server) -> Isolate:
        """Partition Galera nodes from the rest of the cluster."""
        from ..consistency.faults import Isolate
        return Isolate(list(nodes), list(self.context.servers))

    def lag(self, *nodes: Server) -> Lag:
        """Nodes stop applying but keep answering reads; healed by resuming."""
        from ..consistency.faults import Lag
        return Lag(list(nodes), list(self.context.servers))

    def tamper(self, nodes: list[Server], *statements: str, replicated: bool = False) -> Tamper:
        """Run statements on nodes behind replication's back (or replicated)."""
        from ..consistency.faults import Tamper
        return Tamper(nodes, list(statements), list(self.context.servers), replicated=replicated)

    # ------------------------------------------------------------ network faults
    # (servers in network namespaces: network = 'namespaces' in suite_config.py)
    def partition(self, *groups: list[Server]) -> Partition:
        """Cut the network between groups (a server in no group is alone)."""
        from ..consistency.netfaults import Partition
        return Partition.between([list(g) for g in groups], list(self.context.servers))

    def partition_halves(self) -> Partition:
        """The first half of the servers (a minority) against the rest."""
        from ..consistency.netfaults import Partition
        return Partition.halves(list(self.context.servers))

    def isolate_one(self, node: Server) -> Partition:
        """node alone, the others together."""
        from ..consistency.netfaults import Partition
        return Partition.isolate_one(node, list(self.context.servers))

    def majority_ring(self) -> Partition:
        """Each server hears a majority, no two the same one (3 nodes: a bridge)."""
        from ..consistency.netfaults import Partition
        return Partition.majority_ring(list(self.context.servers))

    def one_way(self, senders: list[Server], receivers: list[Server]) -> Partition:
        """receivers stop hearing senders (the other direction works)."""
        from ..consistency.netfaults import Partition
        return Partition.one_way(senders, receivers, list(self.context.servers))

    def loss(self, percent: int, *nodes: Server) -> Loss:
        """Drop percent % of what nodes (default: all) send."""
        from ..consistency.netfaults import Loss
        return Loss(list(nodes or self.context.servers), list(self.context.servers), percent)

    def latency(self, ms: int, *nodes: Server, jitter: int = 0) -> Latency:
        """Delay what nodes (default: all) send by ms (tc netem)."""
        from ..consistency.netfaults import Latency
        return Latency(list(nodes or self.context.servers), list(self.context.servers), ms, jitter)

    def flaky(self, partition: Partition, period: float = 0.5) -> Flaky:
        """partition switched on and off every period seconds while held."""
        from ..consistency.netfaults import Flaky
        return Flaky(partition, period)

    # ------------------------------------------------------------ running
    def settle(self) -> None:
        """Wait until every replica and cluster node applied what was committed."""
        self.context.manager.wait_for_replicas(120.0)

    def history_dir(self) -> str:
        """Where this test's histories are written (kept as evidence when it fails)."""
        return os.path.join(self.context.log_dir, "histories")

    def run_workloads(self, workloads: list[Workload], duration: float = 5.0,
                      faults: Schedule | None = None) -> RunResult:
        """Run workloads for duration seconds under faults; the verdict of each."""
        from ..consistency.run import run_workloads
        label = self.id().split(".", 1)[-1]
        result = run_workloads(workloads, duration, faults, self.settle, self.history_dir(), label)
        self.addCleanup(self._remove_histories_if_passed, result)
        return result

    def _remove_histories_if_passed(self, result: RunResult) -> None:
        if self.context.has_failed(self):
            return
        for verdict in result.verdicts:
            if verdict.history_file and os.path.exists(verdict.history_file):
                os.unlink(verdict.history_file)

    # ------------------------------------------------------------ checking
    def check_tables(self, reference: Server, others: list[Server],
                     schemas: list[str] | None = None) -> Verdict:
        """Per-table checksums of others against reference; differing rows as evidence."""
        from ..consistency.tables import check_tables_equal
        self.settle()
        return check_tables_equal(reference, others, schemas)

    def pt_table_checksum(self, schemas: list[str], primary: Server | None = None,
                          replicas: list[Server] | None = None) -> Verdict:
        """pt-table-checksum of schemas on primary (default: server 0) and its replicas
        (default: all of them)."""
        from ..consistency.ptchecksum import check_pt_table_checksum
        servers = self.context.servers
        primary = primary or servers[0]
        if replicas is None:
            current = self.context.manager.current
            replicas = [servers[r] for p, r in (current.pairs if current else ())
                        if servers[p] is primary]
        self.settle()
        return check_pt_table_checksum(primary, replicas, schemas)

    def assertIsolation(self, run: RunResult, label: str,  # noqa: N802 - unittest style
                        allowed: frozenset[str] = frozenset({"G-single", "G2-item"})) -> set[str]:
        """Log the list-append verdict of run as a finding (anomaly kinds and the first
        cycles); fail unless every anomaly found is in allowed.  Returns the kinds found."""
        from ..consistency.elle import anomaly_kinds
        verdict = run.verdicts[0] if len(run.verdicts) == 1 else run.verdict
        found = anomaly_kinds(verdict)
        found |= {k for k in ("lost", "diverged") if any(e.startswith(k) for e in verdict.evidence)}
        log = get_logger()
        log.info(f"isolation {label}: {verdict.status.upper()} ({verdict.counts}); anomalies: "
                 f"{', '.join(sorted(found)) or 'none'}; {verdict.summary}")
        for line in verdict.evidence[:12]:
            log.info(f"  {line}")
        if verdict.status == "unknown" or found - allowed:
            self.assertValid(run)
        return found

    def assertValid(self, *results: RunResult | Verdict) -> Verdict:  # noqa: N802 - unittest style
        """Fail with the verdict report unless every verdict is valid; log it either way."""
        from ..consistency.run import RunResult
        from ..consistency.verdict import combine
        verdicts = [v for r in results
                    for v in (r.verdicts if isinstance(r, RunResult) else [r])]
        verdict = combine("+".join(v.checker for v in verdicts), verdicts)
        report = "\n".join(v.report() for v in verdicts)
        log = get_logger()
        for line in report.splitlines():  # a failure carries the report itself
            log.log(logging.INFO if verdict.valid else logging.DEBUG, line)
        if not verdict.valid:
            self.fail(f"consistency check {verdict.status.upper()}:\n{report}")
        return verdict
