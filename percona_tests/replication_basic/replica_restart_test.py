"""A replica stopped while the primary takes writes catches up after restart."""
from lib import KewpieTestCase


class ReplicaRestartTest(KewpieTestCase):
    """Stop replica 1, write, start it, compare."""

    def test_stopped_replica_catches_up(self):
        primary, r1, r2 = self.servers
        primary.execute("CREATE TABLE test.log (id INT PRIMARY KEY, note VARCHAR(40)) ENGINE=InnoDB")
        primary.execute("INSERT INTO test.log VALUES (1, 'before')")
        self.wait_for_replicas()
        r1.stop()
        self.assertFalse(r1.is_alive())
        for i in range(2, 202):
            primary.execute("INSERT INTO test.log VALUES (%s, 'while replica 1 was down')", (i,))
        self.wait_for_replica(primary, r2)
        self.assertEqual(r2.execute("SELECT COUNT(*) FROM test.log")[0][0], 201)
        r1.start()
        self.wait_for_replica(primary, r1, timeout=60)
        self.assertEqual(r1.execute("SELECT COUNT(*) FROM test.log")[0][0], 201)
        self.assertReplicasInSync(schemas=["test"])
