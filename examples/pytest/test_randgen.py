"""A randgen load (kewpie's zero-sum grammar) on the primary: every replica ends with
the same total and the same rows."""
from lib import SHIPPED, ZERO_SUM_TOTAL, ZERO_SUM_TOTAL_SQL

GRAMMAR = SHIPPED["zero_sum"]


def test_zero_sum_load_replicates(kewpie_replication):
    primary = kewpie_replication.primary
    result = kewpie_replication.randgen(primary, grammar=GRAMMAR.grammar, gendata=GRAMMAR.gendata,
                                        queries=150, threads=2, seed=8)
    assert result.check(allowed_errors=GRAMMAR.expected_errors) == [], result.summary()
    kewpie_replication.wait_for_replicas()
    for server in kewpie_replication.servers:
        assert int(server.execute(ZERO_SUM_TOTAL_SQL, db="test")[0][0]) == ZERO_SUM_TOTAL
    kewpie_replication.assertReplicasInSync(["test"])
