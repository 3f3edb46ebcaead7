# One server on the old code tree; the test restarts it on the new one (its datadir
# stays), runs mariadb-upgrade and checks the data.  The trees are the run's
# --basedir ones, or scripts/get-tree's (trees/ in the checkout): 'old' and 'new'
# are the lowest and highest server version among them.
server_requirements = [[]]
server_basedirs = ['old']
servers = []
