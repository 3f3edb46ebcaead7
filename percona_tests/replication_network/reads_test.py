"""Reads that wait for a GTID on a replica cut off from its primary are never stale."""
from lib import KewpieTestCase, ReadYourWrites, Schedule, Step


class ReadsTest(KewpieTestCase):

    def test_gtid_reads_across_a_partition_are_not_stale(self):
        """Writes on the primary, reads on the replicas after MASTER_GTID_WAIT, while r1
        is cut off for 1.5 s: a read waits (or times out: fail), it is never stale."""
        primary, r1, r2 = self.servers
        run = self.run_workloads(
            [ReadYourWrites([primary], clients=2, readers=[r1, r2], sync="gtid")], duration=2,
            faults=Schedule([Step(self.isolate_one(r1), after=0.3, hold=1.5)]))
        self.assertValid(run)
