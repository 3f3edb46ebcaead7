# One server for short sysbench sweeps.
server_requirements = [['--innodb-buffer-pool-size=256M']]
