"""kewpie 2012 style: the xtrabackup basic_test as it was written for dbqp.

Populate, mysqldump as the validation snapshot, back up with a raw
innobackupex command line through execute_cmd, prepare and restore with the
innobackupex_* helpers, restart and diff the dumps.  Without
--innobackupex-path the code tree's mariabackup runs in its innobackupex
mode.
"""
import os
import shutil

from lib.util.mysqlBaseTestCase import mysqlBaseTestCase

server_requirements = [['--innodb-file-per-table']]
servers = []
server_manager = None
test_executor = None


class basicTest(mysqlBaseTestCase):

    def _tools(self, master_server):
        innobackupex = test_executor.system_manager.innobackupex_path
        xtrabackup = test_executor.system_manager.xtrabackup_path
        if innobackupex:
            prefix = "%s --defaults-file=%s" % (innobackupex, master_server.cnf_file)
            if xtrabackup:
                prefix += " --ibbackup=%s" % xtrabackup
        else:
            prefix = "%s --innobackupex --defaults-file=%s" % (
                master_server.tree.tool("mariabackup"), master_server.cnf_file)
        return innobackupex, xtrabackup, prefix

    def test_basic1(self):
        master_server = servers[0]
        innobackupex, xtrabackup, backup_prefix = self._tools(master_server)
        backup_path = os.path.join(master_server.vardir, '_xtrabackup')
        output_path = os.path.join(master_server.vardir, 'innobackupex.out')
        exec_path = os.path.dirname(backup_path)
        orig_dumpfile = os.path.join(master_server.vardir, 'orig_dumpfile')
        restored_dumpfile = os.path.join(master_server.vardir, 'restored_dumpfile')

        # populate our server with a test bed
        queries = ["CREATE TABLE t1 (a INT NOT NULL AUTO_INCREMENT, b CHAR(20), PRIMARY KEY (a)) "
                   "ENGINE=InnoDB",
                   "INSERT INTO t1 (a, b) SELECT seq, CONCAT('row', seq) FROM seq_1_to_1000",
                   "CREATE TABLE t2 (a INT PRIMARY KEY, b TEXT) ENGINE=MyISAM",
                   "INSERT INTO t2 SELECT seq, REPEAT('x', seq) FROM seq_1_to_200"]
        for query in queries:
            retcode, result = self.execute_query(query, master_server)
            self.assertEqual(retcode, 0, msg=result)

        # take a validation snapshot
        retcode, result = self.take_mysqldump(master_server, databases=['test'],
                                              dump_path=orig_dumpfile)
        self.assertEqual(retcode, 0, result)

        # take a backup
        cmd = "%s --user=root --port=%d --host=127.0.0.1 --no-timestamp %s" % (
            backup_prefix, master_server.master_port, backup_path)
        retcode, output = self.execute_cmd(cmd, output_path, exec_path, True)
        self.assertEqual(retcode, 0, output)
        self.assertIn("completed OK!", output)

        # stop the server
        master_server.stop()

        # do prepare on backup
        retcode, output = self.innobackupex_prepare(innobackupex, xtrabackup, output_path,
                                                    backup_path)
        self.assertEqual(retcode, 0, output)

        # remove old datadir
        shutil.rmtree(master_server.datadir)
        os.mkdir(master_server.datadir)

        # restore from backup
        retcode, output = self.innobackupex_restore(innobackupex, xtrabackup, output_path,
                                                    backup_path, master_server.cnf_file)
        self.assertEqual(retcode, 0, output)

        # restart server (and ensure it doesn't crash)
        master_server.start()
        self.assertEqual(master_server.status, 1, 'Server failed restart from restored datadir...')

        # take a mysqldump of the restored server and compare
        retcode, result = self.take_mysqldump(master_server, databases=['test'],
                                              dump_path=restored_dumpfile)
        self.assertEqual(retcode, 0, result)
        retcode, result = self.diff_dumpfiles(orig_dumpfile, restored_dumpfile)
        self.assertTrue(retcode, result)

    def test_backup_helper(self):
        master_server = servers[0]
        innobackupex, xtrabackup, _ = self._tools(master_server)
        backup_path = os.path.join(master_server.vardir, '_xtrabackup_helper')
        output_path = os.path.join(master_server.vardir, 'innobackupex_helper.out')
        retcode, output = self.innobackupex_backup(innobackupex, xtrabackup, output_path,
                                                   master_server, backup_path)
        self.assertEqual(retcode, 0, output)
        self.assertIn("completed OK!", output)
        self.assertTrue(os.path.exists(os.path.join(backup_path, 'xtrabackup_checkpoints')))
        shutil.rmtree(backup_path)
