"""DDL and DML on one server: create, insert, update, delete, alter, rollback."""
from lib import KewpieTestCase, QueryError


class BasicTest(KewpieTestCase):
    """Plain SQL sanity on a fresh server."""

    def test_ddl_dml(self):
        s = self.servers[0]
        s.execute("CREATE TABLE test.t1 (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(20)) ENGINE=InnoDB")
        s.execute("INSERT INTO test.t1 (v) VALUES ('a'), ('b'), ('c')")
        s.execute("UPDATE test.t1 SET v = 'B' WHERE id = 2")
        s.execute("DELETE FROM test.t1 WHERE id = 3")
        self.assertEqual(s.execute("SELECT id, v FROM test.t1 ORDER BY id"), [(1, "a"), (2, "B")])
        s.execute("ALTER TABLE test.t1 ADD COLUMN n INT NOT NULL DEFAULT 7")
        self.assertEqual(s.execute("SELECT SUM(n) FROM test.t1")[0][0], 14)

    def test_rollback(self):
        s = self.servers[0]
        s.execute("CREATE TABLE test.t2 (id INT PRIMARY KEY) ENGINE=InnoDB")
        conn = s.connect(db="test", autocommit=False)
        with conn.cursor() as cur:
            cur.execute("INSERT INTO t2 VALUES (1), (2)")
        conn.rollback()
        conn.close()
        self.assertEqual(s.execute("SELECT COUNT(*) FROM test.t2")[0][0], 0)

    def test_error_carries_code(self):
        s = self.servers[0]
        err = self.assertQueryError(1146, s, "SELECT * FROM test.no_such_table")
        self.assertIn("doesn't exist", err.message)
        with self.assertRaises(QueryError):
            s.execute("THIS IS NOT SQL")

    def test_listens_on_loopback_only(self):
        s = self.servers[0]
        self.assertEqual(s.variable("bind_address"), "127.0.0.1")
        self.assertEqual(s.execute("SELECT 1")[0][0], 1)
        conn = s.sql.connect_tcp()
        conn.close()
