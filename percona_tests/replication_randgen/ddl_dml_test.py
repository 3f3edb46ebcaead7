"""DDL mixed with DML on the primary: tables, columns, indexes and views replicate."""
from lib import KewpieTestCase, SHIPPED

GRAMMAR = SHIPPED["ddl_dml"]


class DdlDmlReplicateTest(KewpieTestCase):

    def test_ddl_and_dml_replicate(self):
        primary = self.servers[0]
        result = self.randgen(primary, grammar=GRAMMAR.grammar, gendata=GRAMMAR.gendata,
                              queries=250, threads=2, seed=9)
        self.assertEqual(result.check(allowed_errors=GRAMMAR.expected_errors), [],
                         result.summary())
        self.assertReplicasInSync(schemas=["test"])
        tables = "SHOW FULL TABLES IN test"
        for replica in self.servers[1:]:
            self.assertEqual(sorted(replica.execute(tables)), sorted(primary.execute(tables)))
