"""A kewpie 2012-style test: module globals, execute_query, dump and diff."""
import os

from lib.util.mysqlBaseTestCase import mysqlBaseTestCase

server_requirements = [[]]
servers = []
server_manager = None
test_executor = None


class basicTest(mysqlBaseTestCase):

    def test_dump_restore_roundtrip(self):
        master_server = servers[0]
        queries = ["CREATE TABLE t1 (a INT NOT NULL AUTO_INCREMENT, PRIMARY KEY (a))",
                   "INSERT INTO t1 VALUES (),(),(),(),()"]
        for query in queries:
            retcode, result = self.execute_query(query, master_server)
            self.assertEqual(retcode, 0, msg=result)
        retcode, result = self.execute_query("SELECT COUNT(*) FROM t1", master_server)
        self.assertEqual(result[0][0], 5)
        retcode, result = self.execute_query("SELECT * FROM no_such_table", master_server)
        self.assertEqual(retcode, 1)
        self.assertIn("1146", result)

        orig = os.path.join(master_server.vardir, "orig.sql")
        again = os.path.join(master_server.vardir, "again.sql")
        retcode, output = self.take_mysqldump(master_server, databases=["test"], dump_path=orig)
        self.assertEqual(retcode, 0, output)
        cmd = "%s --no-defaults -uroot -h127.0.0.1 -P%d test < %s" % (
            master_server.mysql_client, master_server.master_port, orig)
        retcode, output = self.execute_cmd(cmd, os.path.join(master_server.vardir, "load.out"),
                                           None, True)
        self.assertEqual(retcode, 0, output)
        retcode, output = self.take_mysqldump(master_server, databases=["test"], dump_path=again)
        self.assertEqual(retcode, 0, output)
        same, diff = self.diff_dumpfiles(orig, again)
        self.assertTrue(same, diff)
        self.assertTrue(test_executor.name.startswith("bot"))
