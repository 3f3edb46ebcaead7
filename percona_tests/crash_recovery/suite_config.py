# One durable server: every acknowledged commit must survive kill -9.
# storage = 'disk': on /dev/shm MariaDB memory-maps its redo log, so even an
# unsafe server would lose nothing to a process kill; on disk it would.
storage = 'disk'
server_requirements = [['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1',
                        '--log-bin=mysql-bin', '--binlog-format=ROW']]
servers = []
