"""The backup layer fails loudly, with the tool's own message.

- backing up a stopped server: the tool cannot connect;
- preparing a damaged backup (its redo log header overwritten): the tool
  reports the corruption;
- restoring a backup that was never prepared is refused before the server
  is touched.
"""
import os

from lib import BackupToolError, KewpieTestCase, RestoreError


class FailureTest(KewpieTestCase):
    """Typed errors carrying the tool's message and log tail."""

    def test_backup_of_stopped_server_fails(self):
        server = self.servers[0]
        backups = self.backups(server)
        server.stop()
        with self.assertRaises(BackupToolError) as ctx:
            backups.backup("from_stopped_server")
        err = ctx.exception
        self.assertEqual(err.step, "backup")
        self.assertNotIn(err.returncode, (0, None))
        self.assertTrue(err.tool_message, str(err))
        self.assertIn(err.tool_message.split(" / ")[0], str(err))      # message and log tail
        self.assertIn("log tail", str(err))
        if backups.tool.name == "mariabackup":
            self.assertIn("Failed to connect to MariaDB server", err.tool_message)
        server.start()

    def test_prepare_of_damaged_backup_fails(self):
        server = self.servers[0]
        server.execute("CREATE TABLE test.t (id INT PRIMARY KEY) ENGINE=InnoDB")
        server.execute("INSERT INTO test.t VALUES (1), (2)")
        backups = self.backups(server)
        full = backups.backup("to_damage")
        redo = next(os.path.join(full.target_dir, name) for name in ("ib_logfile0", "xtrabackup_logfile")
                    if os.path.exists(os.path.join(full.target_dir, name)))
        with open(redo, "r+b") as fh:                      # overwrite the redo log header
            fh.write(bytes((i * 37 + 11) % 256 for i in range(4096)))
        with self.assertRaises(BackupToolError) as ctx:
            backups.prepare(full)
        err = ctx.exception
        self.assertEqual(err.step, "prepare")
        self.assertTrue(err.tool_message, str(err))
        self.assertIn(err.tool_message.split(" / ")[0], str(err))
        if backups.tool.name == "mariabackup":
            self.assertIn("Invalid log header checksum", err.tool_message)

    def test_restore_of_unprepared_backup_is_refused(self):
        server = self.servers[0]
        backups = self.backups(server)
        full = backups.backup("unprepared")
        with self.assertRaises(RestoreError) as ctx:
            backups.restore(full, server)
        self.assertIn("not prepared", str(ctx.exception))
        self.assertTrue(server.is_alive(), "the server was touched before the refusal")
