"""Back up while a write load runs; the restored server passes CHECK TABLE and catches up.

A SQL write load (lib.data.writeload) runs on server 0 during the backup.
Server 1 is restored from that backup, must start and pass CHECK TABLE, and
then, replicating from the backup's GTID position, must catch up to equal
server 0.
"""
import time

from lib import KewpieTestCase, WriteLoad, replicate_from_backup

BINLOG = ['--log-bin=mysql-bin', '--binlog-format=ROW', '--log-slave-updates',
          '--relay-log=relay-bin']
server_requirements = [BINLOG, BINLOG]
server_requests = {}
SCHEMAS = ["load"]


class LoadTest(KewpieTestCase):
    """Hot backup under concurrent writes."""

    def test_backup_under_write_load(self):
        primary, replica = self.servers
        backups = self.backups(primary)
        load = WriteLoad(primary, "load", tables=4, threads=2)
        with load:
            self.wait_for(lambda: load.statements >= 300, timeout=30, msg="the load to get going")
            backup = backups.backup("under_load", parallel=2)
            during = load.statements
            self.wait_for(lambda: load.statements >= during + 300, timeout=30,
                          msg="more writes after the backup")
        self.assertEqual(load.errors, 0, load.first_errors)
        self.assertTrue(backup.gtid, backup.binlog)

        backups.prepare(backup)
        backups.restore(backup, replica)
        self.assertTrue(replica.is_alive())
        self.assertTablesCheck(replica, SCHEMAS)

        replicate_from_backup(primary, replica, backup.binlog)
        self.wait_for_replica(primary, replica, timeout=120)
        self.assertChecksumsEqual(primary, [replica], SCHEMAS)
        rows = primary.execute("SELECT COUNT(*) FROM load.t1")
        self.assertEqual(replica.execute("SELECT COUNT(*) FROM load.t1"), rows)
