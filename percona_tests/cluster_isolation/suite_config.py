# Three Galera nodes in their own network namespaces (the same servers as
# cluster_partitions, so a run of both shares one cluster).  ListAppend
# transactions on every node, checked for isolation anomalies by the
# Elle-style checker, at the default isolation and with causal reads
# (wsrep_sync_wait), with and without a partition.  A silent peer is
# suspected after 2 s instead of 5 s.
server_type = 'galera'
network = 'namespaces'
NET = ['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1',
       '--wsrep-provider-options=evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S;'
       'evs.keepalive_period=PT0.5S']
server_requirements = [NET, NET, NET]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
