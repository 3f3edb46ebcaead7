"""A node restarted after a clean stop catches up by IST, not by a full SST."""
from lib import ClusterTestCase


class IstTest(ClusterTestCase):

    def test_restart_catches_up_by_ist(self):
        n0, n1, n2 = self.servers
        n0.execute("CREATE TABLE test.ev (id INT PRIMARY KEY) ENGINE=InnoDB")
        self.sync_read(n2, "SELECT 1")
        n2.stop()
        for i in range(1, 201):
            self.sync_execute(n0 if i % 2 else n1, "INSERT INTO test.ev VALUES (%s)", (i,))
        log_start = n2.errlog.size()
        self.restart_node(n2)
        joined = n2.errlog.since(log_start)
        self.assertRegex(joined, r"IST received|Receiving IST|IST .*complete")
        self.assertNotRegex(joined, r"Proceeding with SST|rsync SST completed on joiner")
        self.assertEqual(self.sync_read(n2, "SELECT COUNT(*) FROM test.ev"), [(200,)])
        self.assertClusterConsistent(["test"])
