# A 3-node Galera cluster on the old code tree (the same Galera provider serves both
# trees); the test replaces the nodes one at a time by the new tree while clients write.
server_type = 'galera'
SAFE = ['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1']
server_requirements = [SAFE, SAFE, SAFE]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
server_basedirs = ['old', 'old', 'old']
servers = []
