"""kewpie 2012 style: the lib.util modules of the sysbench, sql-bench and crash-me suites.

sysbenchTestCase runs a sysbench 0.4 command line (mapped to sysbench 1.0);
crashme_methods and sqlbench_methods import, and without sql-bench (not in
any Debian package) say so in one line.
"""
from lib.util import crashme_methods
from lib.util import sqlbench_methods
from lib.util.sysbench_methods import process_sysbench_output
from lib.util.sysbenchTestCase import sysbenchTestCase

servers = []
server_manager = None
test_executor = None


class basicTest(sysbenchTestCase):

    def test_sysbench(self):
        master_server = servers[0]
        test_cmd = ["sysbench", "--test=oltp", "--oltp-table-size=100", "--max-time=1",
                    "--max-requests=0", "--mysql-table-engine=innodb", "--db-ps-mode=disable",
                    "--oltp-read-only=off", "--mysql-db=test", "--db-driver=mysql"]
        run = self.execute_sysbench(test_cmd, test_executor, master_server, 2)
        self.assertGreater(run.get('tps', 0), 0, run)
        self.assertIn('95p_req_lat_ms', run)
        self.assertEqual(process_sysbench_output(
            "    transactions:                        100    (99.50 per sec.)\n"), {'tps': 99.5})

    def test_sqlbench_and_crashme(self):
        master_server = servers[0]
        cmd = "run-all-tests --server=mysql --connect-options=port=%d --user=root --small-test" % (
            master_server.master_port)
        if sqlbench_methods.find_sqlbench(test_executor) is not None:
            self.skipTest("sql-bench is installed: not running it here")
        test_status, retcode, output = sqlbench_methods.execute_sqlbench(cmd, test_executor,
                                                                         servers)
        self.assertEqual((test_status, retcode), ('fail', 1))
        self.assertIn("sql-bench not found", output)
        result = crashme_methods.execute_crashme("./crash-me --force", test_executor, servers)
        self.assertEqual(result, ('fail', 1, sqlbench_methods.missing_line()))
