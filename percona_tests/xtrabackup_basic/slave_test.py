"""Build a replica of server 0 on server 1 from a backup, at the backup's GTID position.

Server 1 starts as a plain server (no join_cluster): the test stops it,
restores server 0's backup into it and points it at server 0 with
``SET GLOBAL gtid_slave_pos = '<GTID of the backup>'`` and
``CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos``.
"""
from lib import KewpieTestCase, change_rows, create_tables, replica_status, replicate_from_backup

BINLOG = ['--log-bin=mysql-bin', '--binlog-format=ROW', '--log-slave-updates',
          '--relay-log=relay-bin']
server_requirements = [BINLOG, BINLOG]
server_requests = {}
SCHEMAS = ["shop"]


class SlaveTest(KewpieTestCase):
    """kewpie's xtrabackup slave_test: a replica set up from a backup."""

    def test_replica_from_backup(self):
        primary, replica = self.servers
        create_tables(primary, "shop", tables=4, rows=400, engines=("InnoDB",))
        backups = self.backups(primary)
        backup = backups.backup("full")
        self.assertTrue(backup.binlog, "the backup recorded no binlog position")
        self.assertTrue(backup.gtid, f"no GTID in the backup's binlog info: {backup.binlog}")
        self.assertEqual(backup.gtid, primary.execute("SELECT @@gtid_binlog_pos")[0][0])

        change_rows(primary, "shop", "t1", "after-backup")      # reaches the replica by replication
        backups.prepare(backup)
        backups.restore(backup, replica)                        # stop, wipe, copy-back, start
        self.assertEqual(replica.execute("SELECT COUNT(*) FROM shop.t1 WHERE col_char LIKE "
                                         "'after-backup%'"), [(0,)])
        replicate_from_backup(primary, replica, backup.binlog)

        change_rows(primary, "shop", "t2", "after-replica")
        primary.execute("CREATE TABLE shop.newer (id INT PRIMARY KEY) ENGINE=InnoDB")
        primary.execute("INSERT INTO shop.newer VALUES (1), (2)")
        self.wait_for_replica(primary, replica)

        status = replica_status(replica)
        self.assertEqual(status["Slave_IO_Running"], "Yes", status)
        self.assertEqual(status["Slave_SQL_Running"], "Yes", status)
        self.assertEqual(int(status["Last_SQL_Errno"]), 0, status)
        self.assertEqual(int(status["Master_Port"]), primary.port)
        self.assertEqual(status.get("Using_Gtid"), "Slave_Pos")
        self.assertChecksumsEqual(primary, [replica], SCHEMAS)
        self.assertDumpsEqual(primary, [replica], SCHEMAS)
