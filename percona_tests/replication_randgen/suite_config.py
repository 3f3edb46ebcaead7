# A primary and two replicas (servers 1 and 2 replicate from server 0): randgen
# loads on the primary, then the replicas must hold the same data.
server_requirements = [[], [], []]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
