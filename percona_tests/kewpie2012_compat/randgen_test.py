"""kewpie 2012 style: randgen test beds and loads.

``./gentest.pl --gendata=X`` without a grammar only loads the data (the 2012
backup suites' test beds); get_randgen_process starts a load and hands back
the process to poll or signal; conf/percona/ is not bundled, and the error
says where to get it in one line.
"""
import os
import signal
import time

from lib.util.mysqlBaseTestCase import mysqlBaseTestCase
from lib.util.randgen_methods import execute_randgen

servers = []
server_manager = None
test_executor = None


class basicTest(mysqlBaseTestCase):

    def test_gendata_without_grammar(self):
        master_server = servers[0]
        test_cmd = "./gentest.pl --gendata=conf/kewpie/zero_sum.zz --seed=%d" % (
            test_executor.system_manager.randgen_seed)
        retcode, output = execute_randgen(test_cmd, test_executor, servers)
        self.assertEqual(retcode, 0, output)
        retcode, result = self.execute_query("SELECT SUM(balance) FROM accounts_a", master_server)
        self.assertEqual(retcode, 0, result)
        self.assertEqual(int(result[0][0]), 20000)

    def test_get_randgen_process(self):
        master_server = servers[0]
        outfile = os.path.join(test_executor.logdir, 'randgen_process.out')
        test_seq = ["./gentest.pl",
                    "--gendata=conf/kewpie/transactions.zz",
                    "--grammar=conf/kewpie/transactions.yy",
                    "--queries=100",
                    "--threads=2",
                    "--seed=%s" % (test_executor.system_manager.randgen_seed)]
        randgen_process = self.get_randgen_process(test_seq, test_executor, master_server,
                                                   randgen_outfile=outfile)
        timeout = 60
        while randgen_process.poll() is None and timeout > 0:
            time.sleep(0.1)
            timeout -= 0.1
        if randgen_process.poll() is None:
            randgen_process.send_signal(signal.SIGINT)
            randgen_process.wait()
        with open(outfile) as fh:
            output = fh.read()
        self.assertEqual(randgen_process.returncode, 0, output)
        retcode, result = self.execute_query("SELECT COUNT(*) FROM t1", master_server)
        self.assertEqual(retcode, 0, result)
        # a long load can be stopped, as crash tests did
        test_seq[3] = "--queries=1000000"
        test_seq[1] = "--gendata=conf/kewpie/zero_sum.zz"
        test_seq[2] = "--grammar=conf/kewpie/zero_sum.yy"
        randgen_process = self.get_randgen_process(test_seq, test_executor, master_server,
                                                   randgen_outfile=outfile, shell_flag=True)
        time.sleep(1)
        self.assertEqual(randgen_process.poll(), None)
        randgen_process.send_signal(signal.SIGINT)
        randgen_process.wait(timeout=30)
        self.assertTrue(master_server.ping(quiet=True))

    def test_stock_grammars_need_randgen_path(self):
        randgen_path = test_executor.system_manager.randgen_path
        if os.path.exists(os.path.join(randgen_path, 'conf', 'percona', 'percona.zz')):
            self.skipTest("--randgen-path has conf/percona")
        retcode, output = execute_randgen("./gentest.pl --gendata=conf/percona/percona.zz",
                                          test_executor, servers)
        self.assertEqual(retcode, 110)
        self.assertIn("--randgen-path", output)
        self.assertEqual(len(output.strip().splitlines()), 1, output)
