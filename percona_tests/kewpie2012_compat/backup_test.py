"""kewpie 2012 style: backup, prepare and restore through system_manager's default
innobackupex (kewpie's front end over mariadb-backup --innobackupex on MariaDB), with
XtraBackup-era options (--ibbackup, --redo-only, --parallel=-1, --stream=tar), the
innobackupex_* helpers, xtrabackup_binlog_info from the 2012 binlog default, the
restored datadir given back to the server's user, and restore_snapshot."""
import os
import shutil
import tarfile

from lib.util.mysqlBaseTestCase import mysqlBaseTestCase
from lib.util.xtrabackup_methods import innobackupex_backup

server_requirements = [['--innodb-file-per-table']]
servers = []
server_manager = None
test_executor = None


class basicTest(mysqlBaseTestCase):

    def setUp(self):
        mysqlBaseTestCase.setUp(self)
        master_server = servers[0]
        for name in ('_xtrabackup', 'stream_tmp', 'untarred'):
            path = os.path.join(master_server.vardir, name)
            if os.path.exists(path):
                shutil.rmtree(path)

    def load(self, server):
        queries = ["CREATE TABLE t1 (a INT NOT NULL AUTO_INCREMENT, b CHAR(20), PRIMARY KEY (a)) "
                   "ENGINE=InnoDB",
                   "INSERT INTO t1 (a, b) SELECT seq, CONCAT('row', seq) FROM seq_1_to_500",
                   "CREATE TABLE t2 (a INT PRIMARY KEY) ENGINE=MyISAM",
                   "INSERT INTO t2 SELECT seq FROM seq_1_to_50"]
        for query in queries:
            retcode, result = self.execute_query(query, server)
            self.assertEqual(retcode, 0, msg=result)

    def test_backup_prepare_restore(self):
        master_server = servers[0]
        innobackupex = test_executor.system_manager.innobackupex_path
        xtrabackup = test_executor.system_manager.xtrabackup_path
        backup_path = os.path.join(master_server.vardir, '_xtrabackup')
        output_path = os.path.join(master_server.vardir, 'innobackupex.out')
        exec_path = os.path.dirname(innobackupex)
        orig_dumpfile = os.path.join(master_server.vardir, 'orig_dumpfile')
        restored_dumpfile = os.path.join(master_server.vardir, 'restored_dumpfile')
        self.load(master_server)
        retcode, result = self.take_mysqldump(master_server, databases=['test'],
                                              dump_path=orig_dumpfile)
        self.assertEqual(retcode, 0, result)

        # the helper, with an XtraBackup-era --parallel=-1
        retcode, output = innobackupex_backup(innobackupex, xtrabackup, output_path,
                                              master_server, backup_path,
                                              extra_opts='--parallel=-1')
        self.assertEqual(retcode, 0, output)
        self.assertIn('completed OK!', output)
        # 2012 servers had a binlog: the backup records its position
        self.assertTrue(os.path.exists(os.path.join(backup_path, 'xtrabackup_binlog_info')))

        # prepare by hand, as old tests wrote it (--redo-only is dropped)
        cmd = "%s --apply-log --redo-only --use-memory=64M --ibbackup=%s %s" % (
            innobackupex, xtrabackup, backup_path)
        retcode, output = self.execute_cmd(cmd, output_path, exec_path, True)
        self.assertEqual(retcode, 0, output)
        self.assertIn('kewpie innobackupex: --redo-only: dropped', output)

        master_server.stop()
        shutil.rmtree(master_server.datadir)
        os.mkdir(master_server.datadir)
        # restore by hand as root: the front end gives the files back to the server's user
        cmd = "%s --defaults-file=%s --copy-back --ibbackup=%s %s" % (
            innobackupex, master_server.cnf_file, xtrabackup, backup_path)
        retcode, output = self.execute_cmd(cmd, output_path, exec_path, True)
        self.assertEqual(retcode, 0, output)
        vardir_owner = os.stat(master_server.vardir).st_uid
        self.assertEqual(os.stat(os.path.join(master_server.datadir, 'ibdata1')).st_uid,
                         vardir_owner)
        master_server.start()
        self.assertEqual(master_server.status, 1, 'Server failed restart from restored datadir...')
        retcode, result = self.take_mysqldump(master_server, databases=['test'],
                                              dump_path=restored_dumpfile)
        self.assertEqual(retcode, 0, result)
        retcode, result = self.diff_dumpfiles(orig_dumpfile, restored_dumpfile)
        self.assertTrue(retcode, result)

    def test_stream_tar(self):
        master_server = servers[0]
        innobackupex = test_executor.system_manager.innobackupex_path
        xtrabackup = test_executor.system_manager.xtrabackup_path
        stream_tmp = os.path.join(master_server.vardir, 'stream_tmp')
        os.mkdir(stream_tmp)
        tar_file = os.path.join(master_server.vardir, 'backup.tar')
        output_path = os.path.join(master_server.vardir, 'innobackupex_stream.out')
        self.load(master_server)
        cmd = ("%s --defaults-file=%s --user=root --port=%d --host=127.0.0.1 --ibbackup=%s "
               "--stream=tar %s 2>%s > %s" % (innobackupex, master_server.cnf_file,
                                              master_server.master_port, xtrabackup, stream_tmp,
                                              output_path, tar_file))
        retcode, output = self.execute_cmd(cmd, os.devnull, os.path.dirname(innobackupex))
        with open(output_path) as fh:
            log = fh.read()
        self.assertEqual(retcode, 0, log)
        self.assertIn('completed OK!', log)
        with tarfile.open(tar_file) as archive:
            names = archive.getnames()
        self.assertIn('xtrabackup_checkpoints', names)
        self.assertIn('test/t1.frm', names)
        self.assertEqual(os.listdir(stream_tmp), [])  # the scratch directory is gone
        untarred = os.path.join(master_server.vardir, 'untarred')
        os.mkdir(untarred)
        retcode, output = self.execute_cmd("tar -xif %s -C %s" % (tar_file, untarred),
                                           os.devnull, None)
        self.assertEqual(retcode, 0)
        self.assertTrue(os.path.exists(os.path.join(untarred, 'ibdata1')))
        # prepare and restore the streamed backup with the helpers
        retcode, output = self.innobackupex_prepare(innobackupex, xtrabackup, output_path,
                                                    untarred, use_mem='64M')
        self.assertEqual(retcode, 0, output)
        master_server.stop()
        shutil.rmtree(master_server.datadir)
        os.mkdir(master_server.datadir)
        retcode, output = self.innobackupex_restore(innobackupex, xtrabackup, output_path,
                                                    untarred, master_server.cnf_file)
        self.assertEqual(retcode, 0, output)
        self.assertEqual(master_server.start(), 0)
        retcode, result = self.execute_query("SELECT COUNT(*), SUM(a) FROM t1", master_server)
        self.assertEqual((retcode, result), (0, ((500, 125250),)))

    def test_zz_restore_snapshot(self):
        master_server = servers[0]
        self.load(master_server)
        master_server.stop()
        master_server.restore_snapshot()
        master_server.start()
        retcode, result = self.execute_query("SHOW TABLES", master_server)
        self.assertEqual((retcode, result), (0, ()))
