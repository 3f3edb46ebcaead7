"""kewpie 2012 style: check_slaves_by_checksum and check_slaves_by_query."""
import time

from lib.util.mysqlBaseTestCase import mysqlBaseTestCase

servers = []
server_manager = None
test_executor = None


class basicTest(mysqlBaseTestCase):

    def test_checksums(self):
        master_server = servers[0]
        other_servers = servers[1:]
        for query in ["CREATE TABLE t1 (a INT NOT NULL AUTO_INCREMENT, b CHAR(10), PRIMARY KEY (a))",
                      "INSERT INTO t1 (b) VALUES ('x'),('y'),('z')"]:
            retcode, result = self.execute_query(query, master_server)
            self.assertEqual(retcode, 0, msg=result)
        server_manager.wait_for_replicas()
        result = self.check_slaves_by_checksum(master_server, other_servers)
        self.assertEqual(result, None, msg=result)
        result = self.check_slaves_by_query(master_server, other_servers, "SELECT COUNT(*) FROM t1")
        self.assertEqual(result, None, msg=result)
