"""A streamed, parallel backup of many tables in several schemas restores equal.

kewpie's bug826632 test had 7 schemas x 100 tables and --parallel=50; scaled
here to 7 schemas x 20 tables (140 tables) and --parallel=8 to fit CI time.
"""
import os

from lib import KewpieTestCase, create_tables

server_requirements = [['--innodb-file-per-table']]
SCHEMAS = [f"db{i}" for i in range(1, 8)]
TABLES = 20


class StreamParallelTest(KewpieTestCase):
    """--stream=mbstream (xbstream) --parallel into the extractor, then prepare and restore."""

    def test_streamed_parallel_backup(self):
        server = self.servers[0]
        for schema in SCHEMAS:
            create_tables(server, schema, tables=TABLES, rows=100)
        before = self.snapshot(server, SCHEMAS)
        self.assertEqual(len(before.checksums), len(SCHEMAS) * TABLES)

        backups = self.backups(server)
        streamed = backups.backup("streamed", stream=True, parallel=8)
        self.assertTrue(streamed.streamed)
        self.assertTrue(streamed.step.extract_argv, "the stream went through an extractor")
        self.assertIn("--parallel=8", streamed.step.argv)

        server.stop()
        backups.prepare(streamed)
        for schema in SCHEMAS:       # tables created since the last checkpoint arrive as .new
            files = [f for f in os.listdir(os.path.join(streamed.target_dir, schema))
                     if f.endswith(".ibd")]
            self.assertEqual(len(files), TABLES, f"{schema}: {sorted(files)}")
        backups.restore(streamed, server, parallel=4)
        self.assertMatchesSnapshot(before, server)
