"""kewpie 2012 style: execute_randgen on the master, then check_slaves_by_checksum."""
from lib.util.mysqlBaseTestCase import mysqlBaseTestCase
from lib.util.randgen_methods import execute_randgen

server_requirements = [[], [], []]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
server_manager = None
test_executor = None


class basicTest(mysqlBaseTestCase):

    def test_basic1(self):
        master_server = servers[0]
        other_servers = servers[1:]
        test_cmd = ("./gentest.pl "
                    "--gendata=conf/kewpie/transactions.zz "
                    "--grammar=conf/kewpie/transactions.yy "
                    "--threads=3 "
                    "--queries=100 ")
        retcode, output = execute_randgen(test_cmd, test_executor, servers)
        self.assertEqual(retcode, 0, output)
        server_manager.wait_for_replicas()
        result = self.check_slaves_by_checksum(master_server, other_servers)
        self.assertEqual(result, None, msg=result)
