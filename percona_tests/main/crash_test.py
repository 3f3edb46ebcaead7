"""A server killed with kill -9 is detected, and recovers committed data."""
from lib import KewpieTestCase, QueryError, ServerDiedError


class CrashTest(KewpieTestCase):
    """kill -9 makes the server dead to the harness; InnoDB recovery keeps commits."""

    def test_killed_server_is_detected(self):
        s = self.servers[0]
        s.execute("CREATE TABLE test.c (id INT PRIMARY KEY) ENGINE=InnoDB")
        s.execute("INSERT INTO test.c VALUES (1), (2), (3)")
        s.kill()
        self.assertFalse(s.is_alive())
        with self.assertRaises((ServerDiedError, QueryError)):
            s.execute("SELECT 1")
        self.assertEqual(s.health().state, "stopped")   # killed by the test: no crash
        s.start()
        self.assertTrue(s.is_alive())
        self.assertEqual(s.execute("SELECT COUNT(*) FROM test.c")[0][0], 3)
