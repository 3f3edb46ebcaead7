# Three Galera nodes. Each test forces a real state transfer: a wiped datadir
# means a full SST, a clean restart means IST.  Every test runs once per SST
# method (combinations): 'cluster_sst.full_sst_test 'rsync'' and '... 'mariabackup''.
server_type = 'galera'
server_requirements = [[], [], []]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
combinations = {
    'rsync': {'wsrep_sst_method': 'rsync'},
    'mariabackup': {'wsrep_sst_method': 'mariabackup'},  # slow: the donor sleeps 10 s
}
servers = []
