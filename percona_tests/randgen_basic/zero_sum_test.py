"""zero_sum.yy with 1 and 4 threads: the total over both account tables never changes."""
from lib import KewpieTestCase, SHIPPED, ZERO_SUM_TOTAL, ZERO_SUM_TOTAL_SQL

GRAMMAR = SHIPPED["zero_sum"]
QUERIES = 300  # per thread: every rule gets used, and CI stays quick


class ZeroSumTest(KewpieTestCase):

    def run_grammar(self, threads):
        server = self.servers[0]
        result = self.randgen(server, grammar=GRAMMAR.grammar, gendata=GRAMMAR.gendata,
                              queries=QUERIES, threads=threads, seed=10 + threads)
        self.assertEqual(result.check(allowed_errors=GRAMMAR.expected_errors), [],
                         result.summary())
        self.assertEqual(int(server.execute(ZERO_SUM_TOTAL_SQL, db="test")[0][0]), ZERO_SUM_TOTAL)

    def test_1_thread(self):
        self.run_grammar(1)

    def test_4_threads(self):
        self.run_grammar(4)
