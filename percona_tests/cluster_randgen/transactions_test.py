"""A 4-thread transactional load on one node, DDL+DML on another: the cluster stays consistent."""
from lib import ClusterTestCase, SHIPPED


class TransactionsClusterTest(ClusterTestCase):

    def test_loads_on_two_nodes(self):
        n0, n1, _ = self.servers
        trx = SHIPPED["transactions"]
        result = self.randgen(n0, grammar=trx.grammar, gendata=trx.gendata, queries=200,
                              threads=4, seed=40)
        self.assertEqual(result.check(allowed_errors=trx.expected_errors), [], result.summary())
        ddl = SHIPPED["ddl_dml"]
        self.sync_read(n1, "SELECT 1")
        # One DDL thread: two DDL threads on one Galera node of MariaDB 10.11.19
        # can deadlock in total order isolation (both "Waiting to execute in
        # isolation", an information_schema read waiting for a metadata lock,
        # a BF-killed thread spinning at 100% CPU); seen in 2 of 6 runs.
        result = self.randgen(n1, grammar=ddl.grammar, gendata=ddl.gendata, queries=300,
                              threads=1, seed=41)
        self.assertEqual(result.check(allowed_errors=ddl.expected_errors), [], result.summary())
        self.assertClusterConsistent(["test"])
