"""Benchmark only: the cheapest passing test on a primary and two replicas."""
from lib.testcase import KewpieTestCase


class PingTest(KewpieTestCase):
    """A table created on the primary reaches both replicas."""

    def test_replicated_table(self) -> None:
        primary, r1, r2 = self.servers
        self.assertEqual(primary.execute("SELECT 1")[0][0], 1)
        primary.execute("CREATE TABLE test.bench_ping (id INT PRIMARY KEY) ENGINE=InnoDB")
        primary.execute("INSERT INTO test.bench_ping VALUES (1)")
        self.wait_for_replicas()
        for replica in (r1, r2):
            self.assertEqual(replica.execute("SELECT COUNT(*) FROM test.bench_ping")[0][0], 1)
