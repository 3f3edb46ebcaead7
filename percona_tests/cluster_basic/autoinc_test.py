"""Auto-increment values from different nodes interleave and never collide."""
from lib import ClusterTestCase


class AutoIncTest(ClusterTestCase):

    def test_interleaving(self):
        n0, n1, n2 = self.servers
        n0.execute("CREATE TABLE test.ai (id INT AUTO_INCREMENT PRIMARY KEY, node CHAR(2)) ENGINE=InnoDB")
        for _ in range(5):
            for node in (n0, n1, n2):
                self.sync_execute(node, "INSERT INTO test.ai (node) VALUES (%s)", (node.name,))
        rows = self.sync_read(n2, "SELECT id, node FROM test.ai ORDER BY id")
        self.assertEqual(len(rows), 15)
        self.assertEqual(len({r[0] for r in rows}), 15)
        increments = {int(n.variable("auto_increment_increment")) for n in (n0, n1, n2)}
        offsets = {int(n.variable("auto_increment_offset")) for n in (n0, n1, n2)}
        self.assertEqual(increments, {3})
        self.assertEqual(len(offsets), 3)
        for node in (n0, n1, n2):
            ids = [r[0] for r in rows if r[1] == node.name]
            self.assertEqual(len({i % 3 for i in ids}), 1, f"{node.name} ids {ids} do not share an offset")
        self.assertClusterConsistent(["test"])
