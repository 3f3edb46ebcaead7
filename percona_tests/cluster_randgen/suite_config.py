# Three Galera nodes (node 0 bootstraps, 1 and 2 join): randgen loads on the
# nodes, then every node must hold the same data.
server_type = 'galera'
server_requirements = [[], [], []]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
