"""Conflicting writes on two nodes: the later commit gets a deadlock (certification) error."""
import pymysql

from lib import ClusterTestCase


class ConflictTest(ClusterTestCase):

    def test_conflicting_update_is_refused(self):
        n0, n1, _ = self.servers
        n0.execute("CREATE TABLE test.acct (id INT PRIMARY KEY, balance INT) ENGINE=InnoDB")
        n0.execute("INSERT INTO test.acct VALUES (1, 100)")
        self.sync_read(n1, "SELECT 1")
        a = n0.connect(db="test", autocommit=False)
        b = n1.connect(db="test", autocommit=False)
        try:
            with a.cursor() as ca, b.cursor() as cb:
                ca.execute("UPDATE acct SET balance = balance - 10 WHERE id = 1")
                cb.execute("UPDATE acct SET balance = balance - 20 WHERE id = 1")
                a.commit()
                with self.assertRaises(pymysql.err.OperationalError) as ctx:
                    cb.execute("SELECT 1")  # b was aborted by the applier (brute force)
                    b.commit()
                self.assertEqual(ctx.exception.args[0], 1213, ctx.exception)
        finally:
            a.close()
            b.close()
        for node in self.servers:
            self.assertEqual(self.sync_read(node, "SELECT balance FROM test.acct"), [(90,)])
        self.assertClusterConsistent(["test"])
