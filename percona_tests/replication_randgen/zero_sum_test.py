"""Zero-sum transfers on the primary: every server still holds the same total, and the same rows."""
from lib import KewpieTestCase, SHIPPED, ZERO_SUM_TOTAL, ZERO_SUM_TOTAL_SQL

GRAMMAR = SHIPPED["zero_sum"]


class ZeroSumReplicateTest(KewpieTestCase):

    def test_totals_match_everywhere(self):
        primary = self.servers[0]
        result = self.randgen(primary, grammar=GRAMMAR.grammar, gendata=GRAMMAR.gendata,
                              queries=250, threads=4, seed=8)
        self.assertEqual(result.check(allowed_errors=GRAMMAR.expected_errors), [],
                         result.summary())
        self.wait_for_replicas()
        for server in self.servers:
            total = server.execute(ZERO_SUM_TOTAL_SQL, db="test")[0][0]
            self.assertEqual(int(total), ZERO_SUM_TOTAL, f"total on {server.name}")
        self.assertReplicasInSync(schemas=["test"])
