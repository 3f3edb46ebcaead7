"""A primary and replicas wired with GTID replication, as a suite_config.py with
``server_requests = {'join_cluster': [(0, 1), (0, 2)]}`` declares them."""
import pytest


def test_rows_reach_both_replicas(kewpie_replication):
    primary = kewpie_replication.primary
    primary.execute("CREATE DATABASE shop")
    primary.execute("CREATE TABLE shop.orders (id INT PRIMARY KEY, total INT)")
    primary.execute("INSERT INTO shop.orders VALUES (1, 10), (2, 20), (3, 30)")
    kewpie_replication.assertReplicasInSync(["shop"])  # waits, checks threads, compares checksums
    for replica in kewpie_replication.replicas:
        assert replica.execute("SELECT SUM(total) FROM shop.orders") == [(60,)]
    primary.execute("DROP DATABASE shop")  # leave the servers as we found them: they are reused


@pytest.mark.kewpie(replicas=1, options=["--binlog-row-image=minimal"])
def test_one_replica_with_options(kewpie_replication):
    primary, replica = kewpie_replication.servers
    assert replica.variable("binlog_row_image") == "MINIMAL"
    primary.execute("CREATE TABLE test.t (id INT PRIMARY KEY)")
    primary.execute("INSERT INTO test.t VALUES (1), (2)")
    kewpie_replication.wait_for_replicas()
    assert replica.execute("SELECT COUNT(*) FROM test.t") == [(2,)]
