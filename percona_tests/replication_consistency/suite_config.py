# A primary and two crash-safe replicas (GTID position in InnoDB, relay log
# recovery): recorded workloads write on the primary while replicas restart.
REPLICA = ['--relay-log-recovery=1', '--innodb-flush-log-at-trx-commit=1']
server_requirements = [['--innodb-flush-log-at-trx-commit=1', '--sync-binlog=1'], REPLICA, REPLICA]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
# A crash-safe replica (relay-log-recovery) that restarts drops its relay log and says
# from where it fetches again ("Recovery from master pos"): the restarts test's faults
# cause that line, so the warnings check excuses it inside their windows (the fault
# class "relay log recovery", lib/checks/errorlog.py).
