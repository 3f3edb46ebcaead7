# A primary and two crash-safe replicas, each in its own network namespace:
# replicas fetch the binlog over the namespaces' bridge, so a partition or
# packet loss between them and the primary is real.  The harness still
# talks to every server over its socket.
network = 'namespaces'
REPLICA = ['--relay-log-recovery=1', '--innodb-flush-log-at-trx-commit=1']
server_requirements = [['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1'], REPLICA, REPLICA]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
