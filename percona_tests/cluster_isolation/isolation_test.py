"""Isolation of Galera transactions: ListAppend histories checked for Adya's anomalies.

What a Galera cluster must never show, at any setting: G0, G1a, G1b, G1c
(read committed's anomalies), reads no order of appends explains, lost
appends or diverged nodes; those fail the test.  G-single and G2-item cycles
are findings: they are logged with their cycles (docs/consistency.md says
what was found here and what it means) and do not fail the test.
"""
from lib import ClusterTestCase, ListAppend


class IsolationTest(ClusterTestCase):

    def test_default_isolation(self):
        """wsrep_sync_wait=0, REPEATABLE READ; no fault."""
        run = self.run_workloads([ListAppend(self.servers, clients=6)], duration=2)
        self.assertIsolation(run, "default (REPEATABLE READ, wsrep_sync_wait=0)")

    def test_causal_reads(self):
        """wsrep_sync_wait=1 (reads wait for the cluster); no fault."""
        run = self.run_workloads([ListAppend(self.servers, clients=6, sync_wait=1)], duration=2)
        self.assertIsolation(run, "wsrep_sync_wait=1")
