"""DDL and DML on any node are visible on all nodes."""
from lib import ClusterTestCase


class ReplicateTest(ClusterTestCase):

    def test_ddl_and_dml_from_every_node(self):
        n0, n1, n2 = self.servers
        # Each statement on another node waits (wsrep_sync_wait) for what came before.
        n0.execute("CREATE DATABASE shop")
        self.sync_execute(n1, "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(30), "
                              "qty INT) ENGINE=InnoDB")
        for i, node in enumerate((n0, n1, n2)):
            for k in range(10):
                self.sync_execute(node, "INSERT INTO shop.items VALUES (%s, %s, %s)",
                                  (i * 100 + k, f"n{i}-{k}", k))
        self.sync_execute(n2, "UPDATE shop.items SET qty = qty + 1 WHERE id < 100")
        self.sync_execute(n0, "DELETE FROM shop.items WHERE id >= 205")
        self.sync_execute(n1, "ALTER TABLE shop.items ADD INDEX (name)")
        for node in (n0, n1, n2):
            self.assertEqual(self.sync_read(node, "SELECT COUNT(*), SUM(qty) FROM shop.items"),
                             [(25, 110)], node.name)
        self.assertClusterConsistent(["shop"])

    def test_cluster_reports_three_synced_nodes(self):
        for node in self.servers:
            status = node.wsrep_status()
            self.assertEqual(status["wsrep_cluster_size"], "3")
            self.assertEqual(status["wsrep_local_state_comment"], "Synced")
            self.assertEqual(status["wsrep_ready"], "ON")
            self.assertEqual(node.variable("bind_address"), "127.0.0.1")
