"""A 3-node Galera cluster: writes on any node are seen on every node."""


def test_writes_on_every_node(kewpie_cluster):
    n0, n1, n2 = kewpie_cluster.servers
    n0.execute("CREATE TABLE test.t (id INT PRIMARY KEY, node VARCHAR(4))")
    kewpie_cluster.sync_execute(n1, "INSERT INTO test.t VALUES (1, 'n1')")  # after it applied the CREATE
    kewpie_cluster.sync_execute(n2, "INSERT INTO test.t VALUES (2, 'n2')")
    assert kewpie_cluster.sync_read(n0, "SELECT COUNT(*) FROM test.t") == [(2,)]
    assert n2.status_var("wsrep_cluster_size") == "3"
    kewpie_cluster.assertClusterConsistent(["test"])
