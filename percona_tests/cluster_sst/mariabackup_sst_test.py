"""A node with an empty datadir joins by a full mariabackup SST (slow: the donor sleeps 10 s)."""
from lib.testcase import ClusterTestCase


class MariabackupSstTest(ClusterTestCase):

    def test_mariabackup_sst(self):
        n0, n1, _ = self.servers
        n0.execute("CREATE TABLE test.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB")
        n0.execute("INSERT INTO test.t SELECT seq, CONCAT('row', seq) FROM test.seq_1_to_500")
        n1.stop()
        n1.wipe_datadir()
        n1.user_options = n1.user_options + self.options("--wsrep-sst-method=mariabackup")
        log_start = n1.error_log_size()
        self.restart_node(n1, timeout=240)
        joined = n1.error_log_since(log_start)
        self.assertIn("mariabackup", joined)
        self.assertEqual(self.sync_read(n1, "SELECT COUNT(*) FROM test.t"), [(500,)])
        self.assertEqual(n1.variable("wsrep_sst_method"), "mariabackup")
        self.assertClusterConsistent(["test"])
