# Three Galera nodes in a safe configuration: every commit is durable on the
# node that acknowledged it.  Tests run recorded workloads under faults and
# assert that the checkers find them valid.
server_type = 'galera'
SAFE = ['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1']
server_requirements = [SAFE, SAFE, SAFE]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []

