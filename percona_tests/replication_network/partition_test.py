"""Replicas cut off from their primary while it takes writes: they catch up after the heal,
and reads that wait for a GTID are never stale."""
from lib.consistency import Append, Bank, ReadYourWrites, Schedule, Step
from lib.testcase import KewpieTestCase


class PartitionTest(KewpieTestCase):

    def test_replicas_partitioned_catch_up(self):
        """{primary} | {r1, r2} for 1.5 s under Bank and Append: nothing lost, tables equal."""
        primary, r1, r2 = self.servers
        replicas = [r1, r2]
        run = self.run_workloads(
            [Bank([primary], clients=3, observers=replicas),
             Append([primary], clients=3, observers=replicas)], duration=2,
            faults=Schedule([Step(self.partition([primary], replicas), after=0.3, hold=1.5)]))
        self.assertValid(run, self.check_tables(primary, replicas, ["bank", "append"]))
        self.assertReplicasInSync(["bank", "append"])

    def test_gtid_reads_across_a_partition_are_not_stale(self):
        """Writes on the primary, reads on the replicas after MASTER_GTID_WAIT, while r1
        is cut off for 1.5 s: a read waits (or times out: fail), it is never stale."""
        primary, r1, r2 = self.servers
        run = self.run_workloads(
            [ReadYourWrites([primary], clients=2, readers=[r1, r2], sync="gtid")], duration=2,
            faults=Schedule([Step(self.isolate_one(r1), after=0.3, hold=1.5)]))
        self.assertValid(run)
