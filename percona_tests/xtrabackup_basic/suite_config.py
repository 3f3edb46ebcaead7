# Backup and restore with mariabackup (or Percona xtrabackup / innobackupex via
# --xtrabackup-path / --innobackupex-path).  One plain server by default; the
# replica tests (slave_test, load_test) declare two servers with binary logs.
server_requirements = [['--innodb-file-per-table']]
server_requests = {}
