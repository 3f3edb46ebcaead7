"""Isolation of Galera transactions: ListAppend histories checked for Adya's anomalies.

What a Galera cluster must never show, at any setting: G0, G1a, G1b, G1c
(read committed's anomalies), reads no order of appends explains, lost
appends or diverged nodes.  G-single and G2-item cycles are reported as
findings with their cycle (docs/consistency.md says what was found and
what it means) and do not fail the test; FORBID_ALL = True makes them fail.
"""
from lib.consistency import ListAppend, Schedule, Step
from lib.consistency.elle import anomaly_kinds
from lib.platform.logsetup import get_logger
from lib.testcase import ClusterTestCase

FORBIDDEN = {"G0", "G1a", "G1b", "G1c", "incompatible-order", "garbage-read",
             "duplicate-elements", "lost", "diverged"}
FORBID_ALL = False


class ListAppendTest(ClusterTestCase):

    def _judge(self, run, label):
        verdict = run.verdicts[0]
        found = anomaly_kinds(verdict)
        found |= {k for k in ("lost", "diverged") if any(e.startswith(k) for e in verdict.evidence)}
        log = get_logger()
        log.info(f"cluster_isolation {label}: {verdict.status.upper()} ({verdict.counts}); "
                 f"anomalies: {', '.join(sorted(found)) or 'none'}; {verdict.summary}")
        for line in verdict.evidence[:12]:
            log.info(f"  {line}")
        if FORBID_ALL or found & FORBIDDEN:
            self.assertValid(run)

    def test_default_isolation(self):
        """wsrep_sync_wait=0, REPEATABLE READ; no fault."""
        run = self.run_workloads([ListAppend(self.servers, clients=6)], duration=3)
        self._judge(run, "default")

    def test_causal_reads(self):
        """wsrep_sync_wait=1 (reads wait for the cluster); no fault."""
        run = self.run_workloads([ListAppend(self.servers, clients=6, sync_wait=1)], duration=3)
        self._judge(run, "wsrep_sync_wait=1")

    def test_default_isolation_partitioned(self):
        """wsrep_sync_wait=0 while s0 is cut off from s1 and s2."""
        run = self.run_workloads(
            [ListAppend(self.servers, clients=6)], duration=3,
            faults=Schedule([Step(self.partition_halves(), after=0.5, hold=1.5)]))
        self._judge(run, "default, partitioned")

    def test_causal_reads_partitioned(self):
        """wsrep_sync_wait=1 while links flap between s0 and the rest."""
        run = self.run_workloads(
            [ListAppend(self.servers, clients=6, sync_wait=1)], duration=3,
            faults=Schedule([Step(self.flaky(self.partition_halves(), period=0.4),
                                  after=0.5, hold=1.5)]))
        self._judge(run, "wsrep_sync_wait=1, links flapping")
