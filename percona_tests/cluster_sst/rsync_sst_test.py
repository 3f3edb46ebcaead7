"""A node with an empty datadir joins by a full rsync SST and gets all data."""
from lib.testcase import ClusterTestCase


class RsyncSstTest(ClusterTestCase):

    def test_rsync_sst(self):
        n0, _, n2 = self.servers
        n0.execute("CREATE TABLE test.big (id INT PRIMARY KEY, pad CHAR(200)) ENGINE=InnoDB")
        n0.execute("INSERT INTO test.big SELECT seq, REPEAT('x', 200) FROM test.seq_1_to_2000")
        n2.stop()
        n2.wipe_datadir()
        log_start = n2.error_log_size()
        self.restart_node(n2)
        joined = n2.error_log_since(log_start)
        self.assertIn("rsync", joined)
        self.assertRegex(joined, r"SST (received|complete)|State transfer .* complete")
        self.assertEqual(self.sync_read(n2, "SELECT COUNT(*) FROM test.big"), [(2000,)])
        self.assertClusterConsistent(["test"])
