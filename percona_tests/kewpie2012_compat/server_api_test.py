"""kewpie 2012 style: the 2012 Server attributes and methods, 2012 server defaults and
execute_query's 2012 connection semantics, on a primary and its replica."""
import os
import time

from lib.util.mysqlBaseTestCase import mysqlBaseTestCase

servers = []
server_manager = None
test_executor = None


class basicTest(mysqlBaseTestCase):

    def test_attributes(self):
        master_server = servers[0]
        self.assertTrue(os.access(master_server.mysqladmin, os.X_OK))
        self.assertTrue(master_server.version[0].isdigit(), master_server.version)
        if master_server.std_data:
            self.assertTrue(os.path.isdir(master_server.std_data))
        self.assertEqual(master_server.get_pid(), master_server.pid)
        self.assertTrue(master_server.ping(quiet=True))
        retcode, output = self.execute_cmd("%s --no-defaults --user=root --port=%d "
                                           "--host=127.0.0.1 --protocol=tcp ping"
                                           % (master_server.mysqladmin, master_server.master_port),
                                           os.path.join(master_server.vardir, 'ping.out'),
                                           None, True)
        self.assertEqual(retcode, 0, output)
        self.assertIn('mysqld is alive', output)
        self.assertIn('ready for connections', master_server.dump_errlog())

    def test_2012_server_defaults(self):
        # kewpie 2012 started every server with a binlog, ROW format and latin1
        for server in servers:
            retcode, result = self.execute_query("SELECT @@log_bin, @@binlog_format, "
                                                 "@@character_set_server", server)
            self.assertEqual(retcode, 0, result)
            self.assertEqual(result[0], (1, 'ROW', 'latin1'))
        retcode, result = self.execute_query("SHOW MASTER STATUS", servers[0])
        self.assertEqual(retcode, 0, result)
        self.assertTrue(result and result[0][0], result)

    def test_connection_semantics(self):
        master_server = servers[0]
        retcode, result = self.execute_query("SELECT CURRENT_USER(), @@character_set_client, "
                                             "@@character_set_server", master_server)
        self.assertEqual(retcode, 0, result)
        self.assertEqual(result[0][0], 'root@localhost')
        self.assertEqual(result[0][1], result[0][2])
        queries = ["CREATE TABLE t1 (a INT PRIMARY KEY)",
                   "CREATE VIEW v1 AS SELECT a FROM t1"]
        retcode, result = self.execute_queries(queries, master_server)
        self.assertEqual(retcode, 0, result)
        retcode, result = self.execute_query("SELECT DEFINER FROM information_schema.VIEWS "
                                             "WHERE TABLE_NAME='v1'", master_server)
        self.assertEqual(result, (('root@localhost',),))
        retcode, result = self.execute_query("SELECT * FROM no_such_table", master_server)
        self.assertEqual(retcode, 1)
        self.assertTrue(result.startswith("Error 1146:"), result)

    def test_replication_methods(self):
        master_server = servers[0]
        slave_server = servers[1]
        master_server.wait_sync_with_slaves([slave_server], timeout=60)  # earlier tearDowns
        retcode, result = slave_server.slave_stop()
        self.assertEqual(retcode, 0, result)
        self.assertFalse(slave_server.slave_ready())
        # re-point the slave by binlog file and position, as 2012 set_master did
        retcode, result = slave_server.set_master(master_server)
        self.assertEqual(retcode, 0, result)
        retcode, result = slave_server.slave_start()
        self.assertEqual(retcode, 0, result)
        self.wait_slaves_ready(master_server, [slave_server])
        queries = ["CREATE TABLE t2 (a INT PRIMARY KEY, b CHAR(10)) ENGINE=InnoDB",
                   "INSERT INTO t2 VALUES (1, 'one'), (2, 'two'), (3, 'three')"]
        retcode, result = self.execute_queries(queries, master_server)
        self.assertEqual(retcode, 0, result)
        master_server.wait_sync_with_slaves([slave_server], timeout=60)
        result = self.check_slaves_by_query(master_server, [slave_server],
                                            "SELECT * FROM t2 ORDER BY a")
        self.assertEqual(result, None, msg=result)
        result = self.check_slaves_by_checksum(master_server, [slave_server])
        self.assertEqual(result, None, msg=result)
        # back to GTID positioning for the tests after this one
        slave_server.slave_stop()
        self.execute_query("CHANGE MASTER TO MASTER_USE_GTID=slave_pos", slave_server)
        slave_server.slave_start()
        self.wait_slaves_ready(master_server, [slave_server])

    def test_die_and_restart(self):
        master_server = servers[0]
        old_pid = master_server.get_pid()
        self.assertEqual(master_server.die(), 0)
        self.assertEqual(master_server.status, 0)
        self.assertEqual(master_server.start(), 0)
        timeout = 30
        while timeout and not master_server.ping(quiet=True):
            time.sleep(0.1)
            timeout -= 0.1
        self.assertNotEqual(master_server.get_pid(), old_pid)
        self.wait_slaves_ready(master_server, [servers[1]])
