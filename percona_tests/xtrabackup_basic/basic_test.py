"""Populate several schemas and engines, back up, stop, wipe, restore, start: equal."""
from lib import KewpieTestCase, create_tables

SCHEMAS = ["shop", "archive", "test"]


class BasicTest(KewpieTestCase):
    """The kewpie xtrabackup basic_test shape: snapshot, backup, wipe, restore, compare."""

    def test_backup_restore_roundtrip(self):
        server = self.servers[0]
        create_tables(server, "shop", tables=6, rows=500, engines=("InnoDB", "MyISAM", "Aria"))
        create_tables(server, "archive", tables=2, rows=300, engines=("InnoDB",))
        server.execute("CREATE TABLE archive.parts (id INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id)) "
                       "ENGINE=InnoDB PARTITION BY HASH (id) PARTITIONS 4")
        server.execute("INSERT INTO archive.parts SELECT seq, CONCAT('p', seq) FROM test.seq_1_to_400")
        server.execute("CREATE TABLE test.blobs (id INT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB")
        server.execute("INSERT INTO test.blobs SELECT seq, REPEAT(UNHEX(HEX(seq)), 20000) "
                       "FROM test.seq_1_to_20")
        server.execute("CREATE VIEW shop.big AS SELECT pk, col_int FROM shop.t1 WHERE col_int > 500")
        server.execute("CREATE PROCEDURE shop.touch() SELECT COUNT(*) FROM shop.t1")
        before = self.snapshot(server, SCHEMAS)

        backups = self.backups(server)
        full = backups.backup("full")
        self.assertTrue(full.step.ok)
        self.assertEqual(full.checkpoints.backup_type, "full-backuped")
        self.assertGreater(full.checkpoints.to_lsn, 0)
        self.assertTrue(full.step.report.completed_ok)

        server.stop()
        prepared = backups.prepare(full)
        self.assertTrue(prepared.info.checkpoints.prepared, prepared.info.checkpoints)
        restored = backups.restore(prepared, server)      # empties the datadir, copy-back, start
        self.assertEqual(restored.method, "copy-back")
        self.assertTrue(server.is_alive())

        self.assertMatchesSnapshot(before, server)
        self.assertTablesCheck(server, SCHEMAS)
        self.assertEqual(server.execute("SELECT COUNT(*) FROM shop.big"),
                         [(sum(1 for i in range(1, 501) if (i * 7919) % 1000 > 500),)])
