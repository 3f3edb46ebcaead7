"""A 4-thread transactional load on the primary; both replicas end up identical."""
from lib import KewpieTestCase, SHIPPED

GRAMMAR = SHIPPED["transactions"]


class TransactionsReplicateTest(KewpieTestCase):

    def test_transactions_replicate(self):
        primary = self.servers[0]
        result = self.randgen(primary, grammar=GRAMMAR.grammar, gendata=GRAMMAR.gendata,
                              queries=250, threads=4, seed=7)
        self.assertEqual(result.check(allowed_errors=GRAMMAR.expected_errors), [],
                         result.summary())
        self.assertReplicasInSync(schemas=["test"])
