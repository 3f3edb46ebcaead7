"""RQG's transformers as the built-in randgen's Transformer validator runs them: each
transformer's statements, checks and cleanup, the relations (same, distinct, count, twice,
empty, superset), NULLIF rewriting, the plan changers, unknown names.

Covers: lib/randgen/transformers.py, lib/randgen/validators.py
"""
from __future__ import annotations

import decimal

import pytest

from lib.randgen.transformers import (TRANSFORMERS, relation_holds, rewrite_nullif,
                                      split_call_args, transform)
from lib.randgen.validators import Difference, Outcome, Validators, _norm

Q = "SELECT a, b FROM t WHERE a > 1"


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_every_transformer_plans_statements_checks_and_cleanup(name):
    plan = transform(name, Q if name not in ("NullIf", "Having") else
                     {"NullIf": "SELECT NULLIF(a, b) FROM t",
                      "Having": "SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 1"}[name],
                     7, "index_merge=on,mrr=off,in_to_exists=on", "1 SIMPLE t ALL Using join buffer")
    assert plan is not None, name
    assert plan.statements and plan.checks
    for index, relation in plan.checks:
        assert 0 <= index < len(plan.statements)
        assert relation in ("same", "distinct", "count", "twice", "empty", "superset")
    if name in ("ExecuteAsView", "ExecuteAsSPTwice", "ExecuteAsInsertSelect",
                "ExecuteAsDeleteReturning", "ExecuteAsPreparedOnce", "ExecuteAsPreparedTwice"):
        assert plan.cleanup and all("7" in c for c in plan.cleanup)  # per thread


def test_plan_details():
    assert transform("DisableOptimizations", Q, 1, "mrr=on,in_to_exists=on").statements == \
        ("SET STATEMENT optimizer_switch='mrr=off,in_to_exists=on' FOR " + Q,)
    assert "mrr=on,in_to_exists=on" in transform("EnableOptimizations", Q, 1,
                                                    "mrr=off,in_to_exists=off").statements[0]
    chosen = transform("DisableChosenPlan", Q, 1, "", "t2 hash_ALL BNLH join buffer firstmatch")
    assert any("join_cache_hashed=off" in s for s in chosen.statements)
    assert any("firstmatch=off" in s for s in chosen.statements)
    assert transform("DisableChosenPlan", Q, 1, "", "1 SIMPLE t const") is None
    union = transform("ExecuteAsUnion", Q, 1)
    assert [r for _, r in union.checks] == ["same", "distinct", "twice"]
    assert transform("OrderBy", Q + " ORDER BY a", 1) is None
    assert transform("LimitIncrease", Q + " ORDER BY a LIMIT 3", 1).checks == ((0, "superset"),)
    assert transform("Having", "SELECT a FROM t GROUP BY a HAVING a > (SELECT 1)", 1) is None
    assert transform("StraightJoin", "SELECT a FROM t", 1) is None  # no join
    assert transform("SelectOption", "SELECT SQL_BIG_RESULT a FROM t", 1) is None
    assert transform("NoSuchTransformer", Q, 1) is None


def test_nullif_is_rewritten_as_if_with_nested_calls_and_strings():
    assert rewrite_nullif("SELECT NULLIF(a, 'x,y') FROM t") == \
        "SELECT IF((a) = ('x,y'), NULL, a) FROM t"
    assert rewrite_nullif("SELECT NULLIF(NULLIF(a, 1), COALESCE(b, 2))") == \
        "SELECT IF((IF((a) = (1), NULL, a)) = (COALESCE(b, 2)), NULL, IF((a) = (1), NULL, a))"
    assert rewrite_nullif("SELECT a FROM t") is None
    assert split_call_args("f(a, (b, c), 'd)')", 1) == (["a", "(b, c)", "'d)'"], 18)


def test_relations():
    rows = [("a", 1), ("A", 1), ("b", 2), ("b", 2)]
    assert relation_holds("same", rows, list(reversed(rows)), _norm)
    assert not relation_holds("same", rows, rows[:3], _norm)
    assert relation_holds("twice", rows[:2], rows[:2] * 2, _norm)
    assert relation_holds("empty", rows, [], _norm)
    assert relation_holds("count", rows, [(4,)], _norm)
    assert relation_holds("count", [], [(decimal.Decimal("0"),)], _norm)
    assert relation_holds("superset", rows[:2], rows, _norm)
    # DISTINCT under a case-insensitive collation keeps 'a' or 'A': either is right
    assert relation_holds("distinct", rows, [("A", 1), ("b", 2)], _norm)
    assert relation_holds("distinct", rows, [("a", 1), ("A", 1), ("b", 2)], _norm)  # _bin
    assert not relation_holds("distinct", rows, [("b", 2)], _norm)  # a row lost
    assert not relation_holds("distinct", rows, [("a", 1), ("b", 2), ("b", 2)], _norm)
    assert not relation_holds("distinct", rows, [("c", 3)], _norm)  # a row made up


class Cursor:
    """A cursor that answers by script (the validator's run loop, without a server)."""

    def __init__(self, answers):
        self.answers = answers
        self.log = []
        self.description = None
        self.rows = []
        self.rowcount = 0
        self.connection = None

    def execute(self, sql):
        self.log.append(sql)
        answer = next((a for k, a in self.answers if k in sql), [(1,)])
        if isinstance(answer, Exception):
            raise answer
        self.rows = answer
        self.description = [("c",)] if answer is not None else None

    def fetchall(self):
        return self.rows

    def nextset(self):
        return None


def test_the_validator_reports_a_broken_relation_and_always_cleans_up():
    import pymysql
    found: list[Difference] = []
    cursor = Cursor([("optimizer_switch", [("mrr=on",)]), ("kewpie_transform_view", [(9,)]),
                     ("CREATE OR REPLACE VIEW", None)])
    v = Validators(["Transformer"], ["ExecuteAsView"], [], 3, lambda d, stop: found.append(d))
    v.check(cursor, "SELECT a FROM t", Outcome("s1", rows=[(1,)]))
    assert found and found[0].validator == "Transformer/ExecuteAsView"
    assert cursor.log[-1] == "DROP VIEW IF EXISTS kewpie_transform_view_3"
    found.clear()
    failing = Cursor([("CREATE OR REPLACE VIEW", pymysql.err.OperationalError(1050, "exists"))])
    v.check(failing, "SELECT a FROM t", Outcome("s1", rows=[(1,)]))
    assert not found and failing.log[-1] == "DROP VIEW IF EXISTS kewpie_transform_view_3"
    # what the transformers did, for the run's notes: one compared, one refused
    assert v.checked == {"ExecuteAsView": 1} and v.refused == {"ExecuteAsView": 1}
    assert v.transform_note() == ("thread 3: Transformer compared 1 rewrites (1 refused by the "
                                  "server); by transformer: ExecuteAsView 1")
    assert Validators(["Transformer"], [], [], 1, lambda d, s: None).transform_note() == ""


def test_select_item_only_for_one_value_results():
    found: list[Difference] = []
    cursor = Cursor([])
    v = Validators(["Transformer"], ["ExecuteAsSelectItem"], [], 1, lambda d, s: found.append(d))
    v.check(cursor, "SELECT a, b FROM t", Outcome("s1", rows=[(1, 2)]))
    assert not any("kewpie_item" in s for s in cursor.log)
    v.check(cursor, "SELECT a FROM t", Outcome("s1", rows=[(1,)]))
    assert any("kewpie_item" in s for s in cursor.log) and not found
