"""transactions.yy with 1 and 4 threads: the server survives, errors are the expected ones."""
from lib import KewpieTestCase, SHIPPED

GRAMMAR = SHIPPED["transactions"]
QUERIES = 300  # per thread: every rule gets used, and CI stays quick


class TransactionsTest(KewpieTestCase):

    def run_grammar(self, threads):
        server = self.servers[0]
        result = self.randgen(server, grammar=GRAMMAR.grammar, gendata=GRAMMAR.gendata,
                              queries=QUERIES, threads=threads, seed=threads)
        problems = result.check(allowed_errors=GRAMMAR.expected_errors,
                                min_statements=QUERIES * threads)
        self.assertEqual(problems, [], result.summary())
        self.assertTrue(server.is_alive())
        self.assertEqual(server.execute("SELECT COUNT(*) FROM information_schema.TABLES "
                                        "WHERE TABLE_SCHEMA='test' AND TABLE_NAME LIKE 't_'"),
                         [(4,)])
        return result

    def test_1_thread(self):
        result = self.run_grammar(1)
        self.assertEqual(len(result.per_thread), 1)

    def test_4_threads(self):
        result = self.run_grammar(4)
        self.assertEqual(len(result.per_thread), 4)
        self.assertTrue(all(t.sentences == QUERIES for t in result.per_thread))
