# Three Galera nodes. Each test forces a real state transfer: a wiped datadir
# means a full SST (rsync or mariabackup), a clean restart means IST.
server_type = 'galera'
server_requirements = [[], [], []]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
