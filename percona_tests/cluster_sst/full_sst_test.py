"""A node with an empty datadir joins by a full SST, with the combination's method
(rsync or mariabackup), and gets all the data."""
from lib import ClusterTestCase

JOINED = {
    "rsync": r"SST (received|complete)|State transfer .* complete",
    "mariabackup": r"mariabackup",
}


class FullSstTest(ClusterTestCase):

    def test_wiped_node_rejoins_by_sst(self):
        n0, n1, _ = self.servers
        method = n1.variable("wsrep_sst_method")
        self.assertEqual(method, self.context.spec.combination)
        n0.execute("CREATE TABLE test.big (id INT PRIMARY KEY, pad CHAR(200)) ENGINE=InnoDB")
        n0.execute("INSERT INTO test.big SELECT seq, REPEAT('x', 200) FROM test.seq_1_to_2000")
        n1.stop()
        n1.wipe_datadir()
        log_start = n1.errlog.size()
        self.restart_node(n1, timeout=240)
        joined = n1.errlog.since(log_start)
        self.assertIn(method, joined)
        self.assertRegex(joined, JOINED[method])
        self.assertEqual(self.sync_read(n1, "SELECT COUNT(*) FROM test.big"), [(2000,)])
        self.assertClusterConsistent(["test"])
