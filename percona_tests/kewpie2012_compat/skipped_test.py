"""kewpie 2012 style: skip_checks(system_manager) -> (skip, reason), called before any
server starts.  XtraDB is Percona Server's; on MariaDB 10.11 this test is skipped."""
from lib.util.mysqlBaseTestCase import mysqlBaseTestCase

servers = []
server_manager = None
test_executor = None


def skip_checks(system_manager):
    if not system_manager.code_manager.test_tree.xtradb_version:
        return True, "Test requires XtraDB."
    return False, ''


class basicTest(mysqlBaseTestCase):

    def test_xtradb(self):
        retcode, result = self.execute_query("SELECT @@innodb_version", servers[0])
        self.assertEqual(retcode, 0, result)
        self.assertIn("rel", result[0][0])
