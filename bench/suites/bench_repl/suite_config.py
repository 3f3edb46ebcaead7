# Benchmark only (bench/startup.py): a primary and two replicas.
server_requirements = [[], [], []]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
