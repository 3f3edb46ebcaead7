"""Zero-sum transfers on all three nodes at once: certification conflicts, same total everywhere."""
import threading

from lib import ClusterTestCase, SHIPPED, ZERO_SUM_TOTAL, ZERO_SUM_TOTAL_SQL

GRAMMAR = SHIPPED["zero_sum"]


class ZeroSumClusterTest(ClusterTestCase):

    def test_multi_master_transfers(self):
        n0 = self.servers[0]
        setup = self.randgen(n0, gendata=GRAMMAR.gendata)
        self.assertTrue(setup.ok, setup.summary())
        for node in self.servers:
            self.assertEqual(int(self.sync_read(node, ZERO_SUM_TOTAL_SQL.replace(
                "FROM accounts", "FROM test.accounts"))[0][0]), ZERO_SUM_TOTAL)
        results = {}

        def load(node, seed):
            results[node.name] = self.randgen(node, grammar=GRAMMAR.grammar, queries=150,
                                              threads=2, seed=seed)

        workers = [threading.Thread(target=load, args=(node, 30 + i))
                   for i, node in enumerate(self.servers)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for name, result in sorted(results.items()):
            self.assertEqual(result.check(allowed_errors=GRAMMAR.expected_errors), [],
                             f"{name}: {result.summary()}")
        self.assertClusterConsistent(["test"])
        for node in self.servers:
            total = self.sync_read(node, ZERO_SUM_TOTAL_SQL.replace("FROM accounts",
                                                                    "FROM test.accounts"))
            self.assertEqual(int(total[0][0]), ZERO_SUM_TOTAL, f"total on {node.name}")
