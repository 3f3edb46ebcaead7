"""Isolation of Galera transactions under network faults, and at SERIALIZABLE
(see isolation_test.py for what fails a test and what is a finding)."""
from lib import ClusterTestCase, ListAppend, Schedule, Step


class FaultsTest(ClusterTestCase):

    def test_default_isolation_partitioned(self):
        """wsrep_sync_wait=0 while s0 is cut off from s1 and s2."""
        run = self.run_workloads(
            [ListAppend(self.servers, clients=6)], duration=3,
            faults=Schedule([Step(self.partition_halves(), after=0.5, hold=1.5)]))
        self.assertIsolation(run, "default, partitioned")

    def test_causal_reads_flapping_links(self):
        """wsrep_sync_wait=1 while links flap between s0 and the rest."""
        run = self.run_workloads(
            [ListAppend(self.servers, clients=6, sync_wait=1)], duration=3,
            faults=Schedule([Step(self.flaky(self.partition_halves(), period=0.4),
                                  after=0.5, hold=1.5)]))
        self.assertIsolation(run, "wsrep_sync_wait=1, links flapping")

    def test_serializable(self):
        """SERIALIZABLE sessions (InnoDB takes shared locks for reads on the node); no fault."""
        run = self.run_workloads([ListAppend(self.servers, clients=6, isolation="SERIALIZABLE")],
                                 duration=3)
        self.assertIsolation(run, "SERIALIZABLE")

    def test_one_node_only(self):
        """Every client on s0 (no certification between nodes involved): what InnoDB's
        REPEATABLE READ alone allows on a Galera node."""
        run = self.run_workloads([ListAppend(self.servers[:1], clients=6)], duration=3)
        self.assertIsolation(run, "one node, REPEATABLE READ")
