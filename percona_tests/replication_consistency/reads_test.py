"""Read-your-writes from the primary to its replicas."""
from lib import KewpieTestCase, ReadYourWrites, get_logger


class ReadsTest(KewpieTestCase):

    def test_reads_after_gtid_wait_are_never_stale(self):
        primary, r1, r2 = self.servers
        run = self.run_workloads([ReadYourWrites([primary], clients=2, readers=[r1, r2],
                                                 sync="gtid")], duration=2)
        self.assertValid(run)

    def test_plain_replica_reads_report_stale_reads(self):
        """Replication is asynchronous: a plain read on a replica may be stale (counted)."""
        primary, r1, r2 = self.servers
        run = self.run_workloads([ReadYourWrites([primary], clients=2, readers=[r1, r2])],
                                 duration=2)
        self.assertNotEqual(run.verdicts[0].status, "unknown", run.report())
        get_logger().info(f"plain replica reads: {run.verdicts[0].summary}")
