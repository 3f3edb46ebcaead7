# Three Galera nodes, each in its own network namespace (a "host" with its own
# address on a bridge kewpie owns), durable commits.  Tests cut the network
# between them (partitions, one-way links, flapping links, loss) while
# clients write, and assert that the minority refuses, nothing acknowledged is
# lost and the nodes agree once healed.  A silent peer is suspected after 2 s
# instead of 5 s, so a partition forms quickly.
server_type = 'galera'
network = 'namespaces'
NET = ['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1',
       '--wsrep-provider-options=evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S;'
       'evs.keepalive_period=PT0.5S']
server_requirements = [NET, NET, NET]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
