"""Read-your-writes across nodes: causal reads (wsrep_sync_wait) are never stale."""
from lib import ClusterTestCase, ReadYourWrites, get_logger


class ReadsTest(ClusterTestCase):

    def test_causal_reads_are_never_stale(self):
        run = self.run_workloads([ReadYourWrites(self.servers, clients=3, sync="wsrep")],
                                 duration=3)
        self.assertValid(run)

    def test_plain_reads_report_stale_reads(self):
        """Without sync-wait a read on another node may miss a write: counted, not failed."""
        run = self.run_workloads([ReadYourWrites(self.servers, clients=3, sync="none")],
                                 duration=3)
        verdict = run.verdicts[0]
        self.assertNotEqual(verdict.status, "unknown", verdict.report())
        get_logger().info(f"without wsrep_sync_wait: {verdict.summary}")
