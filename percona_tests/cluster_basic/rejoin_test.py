"""A node killed with kill -9 rejoins (by IST) and catches up with what it missed."""
from lib import ClusterTestCase


class RejoinTest(ClusterTestCase):

    def test_killed_node_rejoins_and_catches_up(self):
        n0, n1, n2 = self.servers
        n0.execute("CREATE TABLE test.log (id INT PRIMARY KEY, note VARCHAR(40)) ENGINE=InnoDB")
        n0.execute("INSERT INTO test.log VALUES (1, 'before the kill')")
        self.sync_read(n2, "SELECT 1")
        self.kill_node(n2)
        for i in range(2, 102):
            self.sync_execute(n0 if i % 2 else n1, "INSERT INTO test.log VALUES (%s, 'while n2 was down')", (i,))
        self.restart_node(n2)
        self.assertEqual(self.sync_read(n2, "SELECT COUNT(*) FROM test.log"), [(101,)])
        self.assertClusterConsistent(["test"])
