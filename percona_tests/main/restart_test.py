"""A clean restart keeps committed data and loses uncommitted data."""
from lib import KewpieTestCase


class RestartTest(KewpieTestCase):
    """Committed rows survive stop/start; an open transaction does not."""

    def test_restart_keeps_committed_data(self):
        s = self.servers[0]
        s.execute("CREATE TABLE test.r (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
        s.execute("INSERT INTO test.r VALUES (1, 10), (2, 20)")
        pending = s.connect(db="test", autocommit=False)
        with pending.cursor() as cur:
            cur.execute("INSERT INTO r VALUES (3, 30)")
        old_pid = s.pid
        s.restart()
        self.assertNotEqual(s.pid, old_pid)
        self.assertEqual(s.execute("SELECT id, v FROM test.r ORDER BY id"), [(1, 10), (2, 20)])

    def test_restart_with_new_options(self):
        s = self.servers[0]
        s.restart(options=["--max-connections=77"])
        self.assertEqual(s.variable("max_connections"), "77")
