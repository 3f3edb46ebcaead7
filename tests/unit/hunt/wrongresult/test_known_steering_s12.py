"""The known wrong results of 10.11.19 that session 11's hunt met, steered clear of in
session 12: views of a set operation with a DECIMAL(20+,0) column (setop-pushdown-cast) and
views with a constant column (view-constant-column: KW46-KEY-CONSTANT and
KW46-MAX-CONST-EMPTY through a view) are left out under the default avoidance and read with
``avoid=frozenset()``; under sql_mode=ORACLE no REPLACE is written (oracle-replace-null); an
a BETWEEN's bound holds no NULL in an expression (between-unsigned-null).

Covers: lib/hunt/wrongresult/generator.py (KNOWN_BUGS setop-pushdown-cast,
view-constant-column, oracle-replace-null, between-unsigned-null, null_expression; VIEW_KNOWN_BUGS, VIEW_WIDE_INTEGER), lib/hunt/wrongresult/oracle.py
(views_left_out, constant_value_columns)
"""
from __future__ import annotations

import random
import re

from lib.hunt.wrongresult.generator import KNOWN_BUGS, GeneratorOptions, SqlGenerator
from lib.hunt.wrongresult.oracle import constant_value_columns, views_left_out
from lib.hunt.wrongresult.schema import tables_from
from tests.unit.hunt.wrongresult.test_known_steering import _Server, _views, string_predicates


def test_the_entries_are_named_and_avoided_by_default():
    for bug in ("setop-pushdown-cast", "view-constant-column"):
        assert KNOWN_BUGS[bug] and bug in GeneratorOptions().avoid


def test_constant_value_columns():
    assert constant_value_columns(
        "select 0.000001 AS `r1`,'x' AS `r2`,abs(5) AS `r3`,`a`.`c1` AS `r4`,"
        "coalesce(-1,greatest(`a`.`x2`,`a`.`x2`)) AS `r5`,coalesce(null,`a`.`x`) AS `r6`,"
        "ifnull('a',`a`.`s`) AS `r7`,coalesce(`a`.`x`,-1) AS `r8` from `t1` `a`") == [
        "0.000001", "'x'", "abs(5)", "coalesce(-1,greatest(`a`.`x2`,`a`.`x2`))",
        "ifnull('a',`a`.`s`)"]
    # the recursive CTE's view of session 11's 7e0874a0572c: the SELECT after the CTEs
    assert constant_value_columns(
        "with recursive cte176(`x1`,`x2`) as (select `t4`.`c0` AS `c0`,0 AS `0` from `t4` "
        "union all select `r`.`x1` AS `x1`,`r`.`x2` + 1 AS `r.x2 + 1` from (`cte176` `r` "
        "join `t4` `q`) where `q`.`c0` = `r`.`x1` and `r`.`x2` < 5)select coalesce(-1,"
        "greatest(coalesce(`a1798`.`x2`,`a1798`.`x2`),`a1798`.`x2`)) AS `r1` from "
        "`cte176` `a1798`") == [
        "coalesce(-1,greatest(coalesce(`a1798`.`x2`,`a1798`.`x2`),`a1798`.`x2`))"]


def test_view_constant_column_views_are_left_out():
    # KW46-KEY-CONSTANT (radar, or19a t56, 8880aa4b30cb: ON t1.decimal_key = t2.r1, r1 the
    # view's 0.000001) and KW46-MAX-CONST-EMPTY (EET, or18a t30, 7e0874a0572c: MIN(t2.r1)
    # of an empty view's COALESCE(-1, ...)) through a view's constant column
    t = _views({"vl": [("r1", "decimal(7,6)")], "vc": [("r1", "bigint(20)")],
                "vok": [("r1", "int(11)")]})
    conn = _Server({
        "vl": "select 0.000001 AS `r1` from (`test`.`t4` `a3265` left join `test`.`t2` "
              "`a3266` on(`a3265`.`c2` = `a3266`.`c2`))",
        "vc": "select coalesce(-1,`a`.`x2`) AS `r1` from `test`.`t1` `a`",
        "vok": "select coalesce(`a`.`x2`,-1) AS `r1` from `test`.`t1` `a`"})
    assert views_left_out(conn, t, GeneratorOptions().avoid) == {("test", "vl"), ("test", "vc")}
    assert views_left_out(conn, t, frozenset()) == set()


def test_setop_pushdown_cast_views_of_a_set_operation_with_a_wide_integer_are_left_out():
    # KW46-SETOP-PUSHDOWN-CAST (TLP-distinct, or19a t9, ba53fd745ec5): CAST(r AS SIGNED)
    # pushed into a UNION ALL of an INT and a BIGINT UNSIGNED, r a DECIMAL(20,0)
    t = _views({"vu": [("r", "decimal(20,0)")], "vn": [("r", "decimal(11,0)")],
                "vp": [("r", "decimal(20,0)")], "vf": [("r", "decimal(20,2)")]})
    conn = _Server({
        "vu": "select `t1`.`i` AS `r` from `test`.`t1` union all select `t2`.`u` AS `u` "
              "from `test`.`t2`",
        "vn": "select `t1`.`i` AS `r` from `test`.`t1` union all select `t3`.`j` AS `j` "
              "from `test`.`t3`",
        "vp": "select `t2`.`u` + 0 AS `r` from `test`.`t2`",
        "vf": "select `t1`.`d` AS `r` from `test`.`t1` except select `t2`.`d` AS `d` "
              "from `test`.`t2`"})
    assert views_left_out(conn, t, GeneratorOptions().avoid) == {("test", "vu")}
    assert views_left_out(conn, t, frozenset()) == set()


def test_oracle_replace_null_no_replace_under_sql_mode_oracle():
    # KW46-ORACLE-REPLACE-NULL (TLP-distinct, or19b t29, b163d42cff5e, --sql-mode=ORACLE):
    # REPLACE's empty result is NULL, yet IS NULL says 0
    written = string_predicates
    assert KNOWN_BUGS["oracle-replace-null"]
    assert "REPLACE(" not in written(GeneratorOptions(oracle_mode=True))
    assert "REPLACE(" in written(GeneratorOptions())          # the default sql_mode: as before
    assert "REPLACE(" in written(GeneratorOptions(oracle_mode=True, avoid=frozenset()))


def test_between_unsigned_null_no_null_expression_as_a_between_bound():
    # KW46-NOT-BETWEEN-UNSIGNED-NULL (DQE, ox19b t9, 8ca7b51e4387): (10 | (- 4294967295))
    # NOT BETWEEN ((5 - 32767) MOD NULL) AND (c0 <= c0) false in a WHERE, true as a value
    from lib.hunt.wrongresult.generator import null_expression
    assert null_expression("((5 - 32767) MOD NULL)") and null_expression("(1 + null)")
    assert not null_expression("NULL") and not null_expression("(NULL)")
    assert not null_expression("t1.`nullable`") and not null_expression("5")
    bound = re.compile(r"BETWEEN (.+?) AND (.+?)\)")
    def risky(options: GeneratorOptions) -> int:
        return sum(1 for line in _integer_predicates(options).splitlines()
                   for m in bound.finditer(line)
                   if null_expression(m.group(1)) or null_expression(m.group(2)))
    assert KNOWN_BUGS["between-unsigned-null"]
    assert risky(GeneratorOptions()) == 0
    assert risky(GeneratorOptions(avoid=frozenset())) > 0


def _integer_predicates(options: GeneratorOptions) -> str:
    """A WHERE predicate of each of 3,000 seeds over a table of integer columns."""
    ints = tables_from([("test", "n1", [("pk", "int(11)", "primary"), ("a", "int(11)"),
                                        ("u", "bigint(20) unsigned")])])
    rows = {("test", "n1"): 5}
    out = []
    for seed in range(3000):
        g = SqlGenerator(ints, random.Random(seed), rows, options)
        fc = g.from_clause()
        if fc is not None:
            out.append(g.predicate(fc.scope))
    return "\n".join(out)


def test_a_bare_condition_as_an_integer_value_is_a_truth_value():
    # an oracle's defect (TLP-groupby, or19b t6, 1136eac9e1bc): an integer value that was a
    # condition, itself a bare DOUBLE column -- (t1.`c2`) -- was summed: AVG((t1.c2) + 0) of
    # 1.8e308, -1.8e308 and 2.2e-308 is 0 or 7.4e-309 by the order of summation
    floats = tables_from([("test", "f1", [("pk", "int(11)", "primary"), ("c2", "double")])])
    bare = re.compile(r"\(t\d+\.`c2`\)")
    values = []
    for seed in range(3000):
        g = SqlGenerator(floats, random.Random(seed), {("test", "f1"): 5}, GeneratorOptions())
        fc = g.from_clause()
        if fc is not None:
            values.append(g.value(fc.scope, "int"))
    assert not [v for v in values if bare.fullmatch(v)]
    assert any(re.search(r"\(t\d+\.`c2` IS TRUE\)", v) for v in values)


def test_in_const_double_no_float_left_of_an_integer_in_subquery():
    # KW46-IN-CONST-DOUBLE (TLP-distinct, ox19b t36, 67c6e171076e): (9223372036854775807 *
    # 1e0 + 0.5e0) IN (SELECT minimum_value FROM a one-row SEQUENCE) is 1 as a value, and
    # neither it nor its NOT holds in a WHERE
    tables = tables_from([("test", "q1", [("pk", "int(11)", "primary"), ("f", "double"),
                                          ("m", "bigint(20)")])])
    def left_classes(options: GeneratorOptions) -> set[str]:
        out = set()
        for seed in range(1500):
            trace: list = []
            g = SqlGenerator(tables, random.Random(seed), {("test", "q1"): 5}, options, trace)
            fc = g.from_clause()
            if fc is None:
                continue
            g.predicate(fc.scope)
            classes = {p.text: p.cls for p in trace if p.kind == "value"}
            out |= {classes.get(p.parts[0], "?") for p in trace
                    if p.kind == "subquery" and p.cls in ("in", "anyall") and p.parts[-1] == "int"}
        return out
    assert KNOWN_BUGS["in-const-double"]
    assert "float" not in left_classes(GeneratorOptions())
    assert "float" in left_classes(GeneratorOptions(avoid=frozenset()))
