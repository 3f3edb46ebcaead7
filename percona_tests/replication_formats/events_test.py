"""The primary logs changes in the combination's binlog format, and the replica ends
up with the same data: a plain INSERT is a row event under ROW and a statement under
STATEMENT and MIXED; under MIXED a statement unsafe for statement-based replication
(UUID()) switches to row events."""
from lib import KewpieTestCase

ROW_EVENTS = ("Write_rows_v1", "Write_rows")


class EventsTest(KewpieTestCase):

    def _events(self, primary, do):
        """The binlog event types (and infos) written while do() runs."""
        log_file, pos = primary.execute("SHOW MASTER STATUS")[0][:2]
        do()
        return [(r[2], r[5]) for r in
                primary.execute(f"SHOW BINLOG EVENTS IN '{log_file}' FROM {int(pos)}")]

    def test_events_follow_the_format(self):
        primary, replica = self.servers
        fmt = self.context.spec.combination.upper()
        self.assertEqual(primary.variable("binlog_format"), fmt)
        primary.execute("CREATE TABLE test.f (id INT PRIMARY KEY, v VARCHAR(36)) ENGINE=InnoDB")
        events = self._events(primary, lambda: primary.execute(
            "INSERT INTO test.f VALUES (1, 'one'), (2, 'two')"))
        types = [t for t, _ in events]
        if fmt == "ROW":
            self.assertTrue(set(ROW_EVENTS) & set(types), events)
        else:
            self.assertTrue(any(t == "Query" and "INSERT INTO test.f" in info
                                for t, info in events), events)
            self.assertFalse(set(ROW_EVENTS) & set(types), events)
        if fmt == "MIXED":
            unsafe = self._events(primary, lambda: primary.execute(
                "INSERT INTO test.f VALUES (3, UUID())"))
            self.assertTrue(set(ROW_EVENTS) & {t for t, _ in unsafe}, unsafe)
        primary.execute("UPDATE test.f SET v = CONCAT(v, '!') WHERE id <= 2")
        self.wait_for_replicas()
        self.assertEqual(replica.execute("SELECT id, v FROM test.f ORDER BY id"),
                         primary.execute("SELECT id, v FROM test.f ORDER BY id"))
        self.assertReplicasInSync()
