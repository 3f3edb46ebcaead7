# A primary and two replicas: servers 1 and 2 replicate from server 0.
server_requirements = [[], [], []]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
