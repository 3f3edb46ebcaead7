# Two primary -> replica pairs on different code trees: s0 (old) -> s1 (new) and
# s2 (new) -> s3 (old).  'old'/'new' are the lowest/highest server version among the
# run's trees (--basedir given twice, or scripts/get-tree's trees/ in the checkout).
server_requirements = [[], [], [], []]
server_requests = {'join_cluster': [(0, 1), (2, 3)]}
server_basedirs = ['old', 'new', 'new', 'old']
servers = []
