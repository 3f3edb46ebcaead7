# Three Galera nodes, each in its own network namespace (a "host" with its own
# address on a bridge kewpie owns), durable commits.  Tests cut the network
# between them (partitions, one-way links, loss) while clients write, and
# assert that the minority refuses, nothing acknowledged is lost and the
# nodes agree once healed.
server_type = 'galera'
network = 'namespaces'
SAFE = ['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1']
server_requirements = [SAFE, SAFE, SAFE]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
