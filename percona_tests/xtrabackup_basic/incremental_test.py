"""Full backup, writes, incremental 1, writes, incremental 2: the restore equals the state at 2."""
from lib import BackupInfoError, KewpieTestCase, change_rows, create_tables

SCHEMAS = ["inc"]


class IncrementalTest(KewpieTestCase):
    """Incrementals on top of a full and of another incremental, applied in order."""

    def test_incremental_chain(self):
        server = self.servers[0]
        create_tables(server, "inc", tables=3, rows=300, engines=("InnoDB", "InnoDB", "MyISAM"))
        backups = self.backups(server)
        full = backups.backup("full")

        change_rows(server, "inc", "t1", "after-full")
        change_rows(server, "inc", "t3", "after-full")
        inc1 = backups.incremental(full)
        self.assertEqual(inc1.checkpoints.backup_type, "incremental")
        self.assertEqual(inc1.checkpoints.from_lsn, full.checkpoints.to_lsn)

        change_rows(server, "inc", "t2", "after-inc1")
        server.execute("CREATE TABLE inc.created_later (id INT PRIMARY KEY) ENGINE=InnoDB")
        server.execute("INSERT INTO inc.created_later VALUES (1), (2), (3)")
        inc2 = backups.incremental(inc1)
        self.assertEqual(inc2.checkpoints.from_lsn, inc1.checkpoints.to_lsn)
        self.assertEqual([b.name for b in inc2.chain()], ["full", "inc1", "inc2"])
        at_inc2 = self.snapshot(server, SCHEMAS)

        change_rows(server, "inc", "t1", "after-inc2")          # must not come back
        server.execute("DROP TABLE inc.created_later")

        with self.assertRaises(BackupInfoError):                # out of order: refused up front
            backups.prepare(full, [inc2, inc1])

        server.stop()
        prepared = backups.prepare(inc2)                        # full, then inc1, then inc2
        self.assertEqual(len(prepared.steps), 3)
        self.assertEqual(prepared.target_dir, full.target_dir)
        backups.restore(prepared, server, method="move-back")
        self.assertMatchesSnapshot(at_inc2, server)
        self.assertEqual(server.execute("SELECT COUNT(*) FROM inc.t1 WHERE col_char LIKE "
                                        "'after-inc2%'"), [(0,)])
