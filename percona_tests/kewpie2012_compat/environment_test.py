"""kewpie 2012 style: what test_executor and system_manager hold.

The backup paths are filled in by default, --randgen-seed is
system_manager.randgen_seed, --opt-matrix is matrix_manager.option_matrix,
code_manager.test_tree describes the server, the 2012 managers are there and
server_manager.start_server/stop_server take their old arguments.  Run with
``--opt-matrix expect_seed=N --randgen-seed=N`` to check the seed end to end.
"""
import os

from lib.util.mysqlBaseTestCase import mysqlBaseTestCase

servers = []
server_manager = None
test_executor = None


def skip_checks(system_manager):
    # called before any server starts; must see the code tree
    if not system_manager.code_manager.test_tree.innodb_version:
        return True, "Test requires InnoDB."
    return False, ''


class basicTest(mysqlBaseTestCase):

    def test_backup_paths_default(self):
        system_manager = test_executor.system_manager
        for path in (system_manager.xtrabackup_path, system_manager.innobackupex_path):
            self.assertTrue(path, "empty backup tool path")
            self.assertTrue(os.access(path, os.X_OK), path)
        self.assertTrue(os.path.dirname(system_manager.innobackupex_path))
        xb_manager = test_executor.xtrabackup_manager
        self.assertEqual(xb_manager.xb_bin_path, system_manager.xtrabackup_path)
        self.assertEqual(xb_manager.ib_bin_path, system_manager.innobackupex_path)
        self.assertIs(xb_manager.backup_full('innobackupex', servers[0]), xb_manager)
        self.assertEqual(xb_manager.datadir, servers[0].datadir)

    def test_randgen_seed_and_opt_matrix(self):
        system_manager = test_executor.system_manager
        option_matrix = test_executor.matrix_manager.option_matrix
        self.assertTrue(isinstance(system_manager.randgen_seed, int))
        if 'expect_seed' in option_matrix:
            self.assertEqual(system_manager.randgen_seed, int(option_matrix['expect_seed']))
            test_executor.matrix_manager.matrix_check_req(['expect_seed'])
        self.assertRaises(KeyError, test_executor.matrix_manager.matrix_check_req,
                          ['no_such_option'])
        self.assertEqual(test_executor.randgen_manager.seed, system_manager.randgen_seed)
        self.assertEqual(test_executor.randgen_manager.randgen_path, system_manager.randgen_path)

    def test_code_manager(self):
        code_manager = test_executor.system_manager.code_manager
        test_tree = code_manager.test_tree
        self.assertEqual(code_manager.test_type, 'mysql')
        self.assertTrue(test_tree.server_version.startswith(servers[0].version[:4]))
        # MariaDB 10.10+ has no @@innodb_version: its InnoDB is the server's version
        self.assertTrue(test_tree.innodb_version)
        self.assertEqual(servers[0].get_innodb_version(), test_tree.innodb_version)
        if 'MariaDB' in servers[0].version:
            self.assertEqual(test_tree.xtradb_version, None)
            self.assertEqual(servers[0].get_xtradb_version(), None)

    def test_server_manager_2012_signatures(self):
        slave_server = servers[1]
        self.assertEqual(server_manager.stop_server(slave_server), 0)
        self.assertEqual(slave_server.status, 0)
        retcode = server_manager.start_server(slave_server, test_executor,
                                              test_executor.working_environment, 0)
        self.assertEqual(retcode, 0)
        self.assertEqual(slave_server.status, 1)
        self.assertEqual(slave_server.start(), 0)  # already running
        self.assertTrue(slave_server.ping(quiet=True))
        slave_server.slave_start()
        self.wait_slaves_ready(servers[0], [slave_server])
