# Three Galera nodes: node 0 bootstraps the cluster, nodes 1 and 2 join it.
server_type = 'galera'
server_requirements = [[], [], []]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
