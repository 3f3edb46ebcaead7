# Three Galera nodes in a safe configuration: every commit is durable on the
# node that acknowledged it.  Tests run recorded workloads under faults and
# assert that the checkers find them valid.
server_type = 'galera'
SAFE = ['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1']
server_requirements = [SAFE, SAFE, SAFE]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []

# Error-log lines this suite's faults cause on purpose (the warnings check fails a test on others):
suppressions = [
    # rejoin_test cuts a node off (gmcast.isolate) and lets it rejoin: while the group is
    # re-forming, a member's last-applied report arrives in a non-primary view
    r"\[Warning\] WSREP: Last Applied Action message in non-primary configuration from member \d+",
]
