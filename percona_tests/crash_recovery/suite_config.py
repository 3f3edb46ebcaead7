# One durable server: every acknowledged commit must survive kill -9.
server_requirements = [['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1',
                        '--log-bin=mysql-bin', '--binlog-format=ROW']]
servers = []
