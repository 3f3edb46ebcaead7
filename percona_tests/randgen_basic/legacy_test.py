"""kewpie 2012 style: execute_randgen with gentest.pl and gendata.pl command lines."""
from lib.util.mysqlBaseTestCase import mysqlBaseTestCase
from lib.util.randgen_methods import execute_randgen

server_requirements = [[]]
servers = []
server_manager = None
test_executor = None


class basicTest(mysqlBaseTestCase):

    def test_gentest_command(self):
        test_cmd = ("./gentest.pl "
                    "--gendata=conf/kewpie/transactions.zz "
                    "--grammar=conf/kewpie/transactions.yy "
                    "--queries=200 "
                    "--threads=2")
        retcode, output = execute_randgen(test_cmd, test_executor, servers)
        self.assertTrue(retcode == 0, output)
        retcode, result = self.execute_query("SELECT COUNT(*) FROM t4", servers[0])
        self.assertEqual(retcode, 0, result)

    def test_gendata_commands(self):
        retcode, output = self.execute_randgen("./gendata.pl --spec=conf/kewpie/zero_sum.zz",
                                               test_executor, servers)
        self.assertEqual(retcode, 0, output)
        retcode, result = self.execute_query("SELECT SUM(balance) FROM accounts_a", servers[0])
        self.assertEqual(int(result[0][0]), 20000)
        # the simple data set, in another schema
        self.execute_query("CREATE SCHEMA test1", servers[0])
        retcode, output = execute_randgen("./gentest.pl --gendata --grammar=conf/kewpie/ddl_dml.yy "
                                          "--queries=20 --threads=1", test_executor, servers,
                                          schema="test1")
        self.assertEqual(retcode, 0, output)
        retcode, result = self.execute_query("SELECT COUNT(*) FROM test1.E", servers[0])
        self.assertEqual(result[0][0], 1000)
        self.execute_query("DROP SCHEMA test1", servers[0], schema="test")

    def test_missing_grammar_is_an_environment_error(self):
        retcode, output = execute_randgen("./gentest.pl --grammar=conf/percona/nope.yy --queries=1",
                                          test_executor, servers)
        self.assertEqual(retcode, 110)
        self.assertIn("grammar not found", output)
