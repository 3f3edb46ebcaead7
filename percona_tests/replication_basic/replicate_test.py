"""DDL and DML on the primary reach both replicas; checksums and dumps match."""
from lib import KewpieTestCase, replica_status


class ReplicateTest(KewpieTestCase):
    """Primary + 2 replicas."""

    def test_ddl_and_dml_replicate(self):
        primary, r1, r2 = self.servers
        primary.execute("CREATE DATABASE shop")
        primary.execute("CREATE TABLE shop.items (id INT PRIMARY KEY AUTO_INCREMENT, "
                        "name VARCHAR(32), qty INT) ENGINE=InnoDB")
        primary.execute("CREATE TABLE test.plain (k INT PRIMARY KEY, v TEXT) ENGINE=MyISAM")
        for i in range(50):
            primary.execute("INSERT INTO shop.items (name, qty) VALUES (%s, %s)", (f"item{i}", i))
        primary.execute("INSERT INTO test.plain VALUES (1, 'x'), (2, 'y')")
        primary.execute("UPDATE shop.items SET qty = qty * 2 WHERE id % 3 = 0")
        primary.execute("DELETE FROM shop.items WHERE id > 40")
        primary.execute("ALTER TABLE shop.items ADD INDEX (name)")
        self.wait_for_replicas()
        for replica in (r1, r2):
            self.assertEqual(replica.execute("SELECT COUNT(*), SUM(qty) FROM shop.items"),
                             primary.execute("SELECT COUNT(*), SUM(qty) FROM shop.items"))
            self.assertIn(("name",), [(r[2],) for r in replica.execute("SHOW INDEX FROM shop.items")])
        self.assertReplicasInSync()
        self.assertDumpsEqual(primary, [r1, r2])

    def test_replicas_report_healthy(self):
        for replica in self.servers[1:]:
            status = replica_status(replica)
            self.assertEqual(status["Slave_IO_Running"], "Yes")
            self.assertEqual(status["Slave_SQL_Running"], "Yes")
            self.assertEqual(int(status["Master_Port"]), self.servers[0].port)
