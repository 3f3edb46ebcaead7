"""ddl_dml.yy with 1 and 4 threads: DDL and DML together; metadata follows the DDL."""
from lib import KewpieTestCase, SHIPPED

GRAMMAR = SHIPPED["ddl_dml"]
QUERIES = 300  # per thread: every rule gets used, and CI stays quick


class DdlDmlTest(KewpieTestCase):

    def run_grammar(self, threads):
        server = self.servers[0]
        result = self.randgen(server, grammar=GRAMMAR.grammar, gendata=GRAMMAR.gendata,
                              queries=QUERIES, threads=threads, seed=20 + threads)
        self.assertEqual(result.check(allowed_errors=GRAMMAR.expected_errors), [],
                         result.summary())
        self.assertTrue(server.is_alive())
        self.assertGreater(result.ok_statements, result.statements // 2, result.summary())
        return result

    def test_1_thread(self):
        self.run_grammar(1)

    def test_4_threads(self):
        result = self.run_grammar(4)
        self.assertGreaterEqual(result.metadata_refreshes, 1, result.summary())
