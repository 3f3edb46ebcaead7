"""The known wrong results of 10.11.19 that session 10's hunts met again, now steered clear
of: each entry's trigger is not written under the default avoidance and is written with
``avoid=frozenset()`` (DQP: the plan is left out of the queries that meet its bug, kept for
the others and when not avoided).

Covers: lib/hunt/wrongresult/generator.py (KNOWN_BUGS aria-icp-binary-ref,
nullsafe-zero-timestamp, cast-hybrid-negative-time, expr-cache-binary-in, nullif-pushdown-convert,
decimal-div-in-list in comparisons; VIEW_KNOWN_BUGS bit-group), lib/hunt/wrongresult/dqpknown.py (join_cache_level
3 and 4, big_tables), lib/hunt/wrongresult/dqp.py (DQPOracle.avoided),
lib/hunt/wrongresult/oracle.py (views_left_out)
"""
from __future__ import annotations

import random
import re

from lib.hunt.wrongresult.dqp import DQPOracle
from lib.hunt.wrongresult.dqpknown import (BIG_TABLES, BNLH_PLANS, KNOWN_BUGS as DQP_KNOWN,
                                           counts_distinct, joins_pad_strings, meets_known_bug)
from lib.hunt.wrongresult.generator import (BINARY_STRINGS, KNOWN_BUGS, GeneratorOptions,
                                            Produced, Scope, SqlGenerator)
from lib.hunt.wrongresult.oracle import views_left_out
from lib.hunt.wrongresult.schema import tables_from
from tests.unit.hunt.wrongresult.fakeconn import AnswerConnection

TABLES = tables_from([
    ("test", "ta", [("pk", "int(11)", "primary"), ("s", "varchar(10)", "indexed"),
                    ("u", "varchar(10)"), ("b", "tinyblob"), ("ts", "timestamp"),
                    ("tm", "time(3)"), ("d", "decimal(10,2)"), ("i", "int(11)")]),
    ("test", "tb", [("pk", "int(11)", "primary"), ("s2", "char(4)", "indexed"),
                    ("vb", "varbinary(10)"), ("ts2", "timestamp", "indexed"),
                    ("d2", "decimal(10,2)")]),
])
ROWS = {("test", "ta"): 10, ("test", "tb"): 4}
HUNTED = GeneratorOptions(avoid=frozenset())
NEW_ENTRIES = ("aria-icp-binary-ref", "nullsafe-zero-timestamp", "cast-hybrid-negative-time",
               "expr-cache-binary-in")


def _traces(options: GeneratorOptions, n: int, name: str) -> list[tuple[str, list[Produced]]]:
    """n (FROM clause and WHERE, the trace of what was written) over the two tables."""
    out = []
    for seed in range(n):
        trace: list[Produced] = []
        g = SqlGenerator(TABLES, random.Random(f"{name}:{seed}"), ROWS, options, trace)
        fc = g.from_clause()
        if fc is not None:
            out.append((f"{fc.sql} WHERE {g.predicate(fc.scope)}", trace))
    return out


def _steered(count, wrapped_when_hunted: bool = True) -> None:
    """count(options) -> (risky, safe): by default no risky shape and some safe ones; with
    avoid=frozenset() the risky shape written (and, when wrapped_when_hunted says the safe
    form is the steer's own, none of it)."""
    default, hunted = count(GeneratorOptions()), count(HUNTED)
    assert default[0] == 0 and default[1] > 0, default
    assert hunted[0] > 0 and (not wrapped_when_hunted or hunted[1] == 0), hunted


def test_the_entries_are_named_and_avoided_by_default():
    for name in NEW_ENTRIES:
        assert KNOWN_BUGS[name] and name in GeneratorOptions().avoid
    for plan in BNLH_PLANS + (BIG_TABLES,):
        assert DQP_KNOWN[plan] and plan in DQPOracle().avoid_plans


_STRING_KEY = r"t\d+\.`(?:s|s2)`"
_BINARY = r"t\d+\.`(?:b|vb)`"
_BARE_BINARY_EQ = re.compile(rf"(?<!CONCAT\(){_STRING_KEY} (?:=|<>|!=|<=>) {_BINARY}"
                             rf"|{_BINARY} (?:=|<>|!=|<=>) {_STRING_KEY}")


def test_aria_icp_binary_ref_no_string_key_equated_with_a_binary_column():
    # KW46-ARIA-ICP-FULL-REF (TLP-distinct, Radar; ox19b t10): an Aria VARCHAR key's ref
    # lookup on t.s = other.tinyblob stops at the first entry the binary comparison rejects
    def count(options: GeneratorOptions) -> tuple[int, int]:
        bare = wrapped = 0
        for sql, _ in _traces(options, 1500, "aria"):
            bare += len(_BARE_BINARY_EQ.findall(sql))
            wrapped += len(re.findall(rf"CONCAT\({_STRING_KEY}\) (?:=|<>|!=|<=>) {_BINARY}"
                                      rf"|{_BINARY} (?:=|<>|!=|<=>) CONCAT\({_STRING_KEY}\)", sql))
        return bare, wrapped
    _steered(count)
    g = SqlGenerator(TABLES, random.Random(1), ROWS, GeneratorOptions())
    both = Scope([("t1", TABLES[0]), ("t2", TABLES[1])])
    assert g.unbinary_ref(both, "t1.`s`", "t2.`vb`") == ("CONCAT(t1.`s`)", "t2.`vb`")
    assert g.unbinary_ref(both, "UPPER(t2.`vb`)", "t2.`s2`") == ("UPPER(t2.`vb`)",
                                                                  "CONCAT(t2.`s2`)")
    # an unindexed string column, or a character string on the other side: as written
    assert g.unbinary_ref(both, "t1.`u`", "t2.`vb`") == ("t1.`u`", "t2.`vb`")
    assert g.unbinary_ref(both, "t1.`s`", "t2.`s2`") == ("t1.`s`", "t2.`s2`")


def test_nullsafe_zero_timestamp_no_nullsafe_comparison_with_a_timestamp_min_max():
    # KW46-NULLSAFE-ZERO-TIMESTAMP (TLP-aggregate; or18a t15): c <=> (SELECT MIN(c) ...) of
    # a TIMESTAMP loses the zero timestamp's row beside another condition on c
    risky = re.compile(r"<=> \(SELECT (?:MIN|MAX)\(s\d+\.`ts2?`\)"
                       r"|t\d+\.`ts2?` <=> \(SELECT (?:MIN|MAX)\(")
    def count(options: GeneratorOptions) -> int:
        return sum(len(risky.findall(sql)) for sql, _ in _traces(options, 3000, "nullsafe"))
    assert count(GeneratorOptions()) == 0
    assert count(HUNTED) > 0
    assert any(re.search(r"= \(SELECT (?:MIN|MAX)\(s\d+\.`ts2?`\)", sql)
               for sql, _ in _traces(GeneratorOptions(), 1500, "nullsafe"))


def test_cast_hybrid_negative_time_no_time_cast_to_signed():
    # KW46-CAST-HYBRID-NEGATIVE-TIME (EET; or19a t3): CAST(COALESCE(TIME'-01:01:01') AS
    # SIGNED) is 10101; EET wraps the cast's argument in a CASE itself
    def count(options: GeneratorOptions) -> tuple[int, int]:
        times = casts = 0
        for _, trace in _traces(options, 3000, "cast"):
            timed = {p.text for p in trace if p.kind == "value" and p.cls == "time"}
            for p in trace:
                m = re.fullmatch(r"CAST\((.*) AS (?:UNSIGNED|SIGNED)\)", p.text, re.S)
                if p.kind == "value" and p.cls == "int" and m:
                    casts += 1
                    times += m.group(1) in timed
        return times, casts
    _steered(count, wrapped_when_hunted=False)


def test_decimal_division_in_no_comparison():
    # KW46-DECIMAL-DIV-IN-LIST's family (TLP-distinct; bd1497bdafe9): (127 / 2147483647) <=>
    # CAST(c AS DECIMAL(12,3)) of a 0 is 1 alone, 0 beside another conjunct
    def count(options: GeneratorOptions) -> tuple[int, int]:
        risky = compared = 0
        for _, trace in _traces(options, 2000, "divcmp"):
            decimals = {p.text for p in trace if p.kind == "value" and p.cls == "dec"}
            for p in trace:
                if p.kind == "predicate" and p.cls == "cmp":
                    sides = [p.parts[0], p.parts[2]]
                    compared += any(s in decimals for s in sides)
                    risky += any(s in decimals and "/" in s for s in sides)
        return risky, compared
    _steered(count, wrapped_when_hunted=False)


def test_expr_cache_binary_in_a_string_left_of_a_binary_subquery_is_cast_to_binary():
    # KW46-EXPR-CACHE-PAD-KEY's mechanism (TLP-aggregate; 67db7468e68c): LEFT(c, 2) IN
    # (SELECT tinyblob ...) -- the cache keys '' and ' ' as one under PAD SPACE
    def count(options: GeneratorOptions) -> tuple[int, int]:
        bare = cast = 0
        for _, trace in _traces(options, 3000, "binin"):
            for p in trace:
                if p.kind != "subquery" or p.cls not in ("in", "anyall"):
                    continue
                selected = re.match(r"SELECT s\d+\.`(\w+)`", p.text)
                if selected is None or selected.group(1) not in ("b", "vb"):
                    continue
                outer = p.parts[0]
                if not re.search(r"t\d+\.`(?:s|s2|u)`", outer):
                    continue
                if outer.startswith("CAST(") and outer.endswith(" AS BINARY)"):
                    cast += 1
                else:
                    bare += 1
        return bare, cast
    _steered(count)
    g = SqlGenerator(TABLES, random.Random(1), ROWS, GeneratorOptions())
    one = Scope([("t1", TABLES[0])])
    blob = next(c for c in TABLES[0].columns if c.name == "b")
    text = next(c for c in TABLES[0].columns if c.name == "u")
    assert blob.data_type in BINARY_STRINGS
    assert g.binary_in_value(one, "LEFT(t1.`u`, 2)", blob) == "CAST(LEFT(t1.`u`, 2) AS BINARY)"
    assert g.binary_in_value(one, "LEFT(t1.`u`, 2)", text) == "LEFT(t1.`u`, 2)"
    assert g.binary_in_value(one, "t1.`b`", blob) == "t1.`b`"


def test_dqp_bnlh_plans_left_out_of_joins_equating_strings():
    # KW46-BNLH-PAD-SPACE (DQP; or19a t7): join_cache_level=4 over t2 JOIN t1 ON t1.a = t2.b
    # misses the key value 'a  ' for 'a'
    join = ("SELECT COUNT(*) FROM `test`.`ta` AS t1 JOIN `test`.`tb` AS t2 ON "
            "t1.`s` = t2.`s2`")
    where = ("SELECT t1.`i` FROM `test`.`ta` AS t1 JOIN `test`.`tb` AS t2 ON t1.`i` = t2.`pk` "
             "WHERE (UPPER(t2.`s2`) <=> t1.`u`)")
    semi = ("SELECT t1.`i` FROM `test`.`ta` AS t1 WHERE (t1.`u` IN (SELECT s1.`s2` FROM "
            "`test`.`tb` AS s1))")
    numbers = ("SELECT COUNT(*) FROM `test`.`ta` AS t1 JOIN `test`.`tb` AS t2 ON "
               "t1.`i` = t2.`pk` WHERE (t1.`u` = 'a')")
    alone = "SELECT COUNT(*) FROM `test`.`ta` AS t1 WHERE (t1.`s` = t1.`u`)"
    for sql in (join, where, semi):
        assert joins_pad_strings(sql, TABLES), sql
        for plan in BNLH_PLANS:
            assert meets_known_bug(plan, sql, TABLES)
    for sql in (numbers, alone):
        assert not joins_pad_strings(sql, TABLES), sql
    assert not joins_pad_strings(join, [])          # no table known: no string column
    dqp = DQPOracle()
    assert dqp.avoided("setting join_cache_level=4", join, tables=TABLES)
    assert not dqp.avoided("setting join_cache_level=4", numbers, tables=TABLES)
    assert not dqp.avoided("setting join_cache_level=2", join, tables=TABLES)
    assert not DQPOracle(avoid_plans=frozenset()).avoided("setting join_cache_level=4", join,
                                                          tables=TABLES)


def test_dqp_big_tables_left_out_of_count_distinct():
    # KW46-COUNT-DISTINCT-CONST through a const table's column (DQP; 5c541b6d7379):
    # SET big_tables=1; SELECT COUNT(DISTINCT m3.a) FROM m2, m3 (m3 one row) gives 2
    counted = "SELECT COUNT(DISTINCT t2.`i`) FROM `test`.`ta` AS t1, `test`.`tb` AS t2"
    assert counts_distinct(counted) and meets_known_bug(BIG_TABLES, counted)
    assert not counts_distinct("SELECT COUNT(*), COUNT(t1.`i`) FROM `test`.`ta` AS t1")
    dqp = DQPOracle()
    assert dqp.avoided(BIG_TABLES, counted)
    assert not dqp.avoided(BIG_TABLES, "SELECT COUNT(*) FROM `test`.`ta` AS t1")
    assert not DQPOracle(avoid_plans=frozenset()).avoided(BIG_TABLES, counted)


class _Views(AnswerConnection):
    """A connection whose information_schema.VIEWS answers the definitions."""

    columns = ("a", "b", "c")

    def __init__(self, definitions: dict[str, str]) -> None:
        self.definitions = definitions

    def answer(self, sql: str) -> list[tuple]:
        assert "information_schema.VIEWS" in sql
        return [("test", n, d) for n, d in self.definitions.items()]


def test_bit_group_grouped_views_with_a_bit_column_are_left_out():
    # KW46-BIT-GROUP through a TEMPTABLE view (TLP-aggregate; 5612ecfef287): the view groups
    # by a MyISAM BIT(1) and shows each group the next one's value
    views = [type(x)(x.schema, x.name, x.columns, True) for x in tables_from([
        ("test", "vg", [("r1", "bit(1)"), ("r2", "bigint(21)")]),
        ("test", "vd", [("r1", "bit(1)")]),
        ("test", "vn", [("r1", "int(11)"), ("r2", "bigint(21)")]),
        ("test", "vp", [("r1", "bit(1)")])])]
    conn = _Views({
        "vg": "select `a`.`c2` AS `r1`,count(`a`.`c0`) AS `r2` from `test`.`t1` `a` "
              "group by `a`.`c2`",
        "vd": "select distinct `a`.`c2` AS `r1` from `test`.`t1` `a`",
        "vn": "select `a`.`c1` AS `r1`,count(`a`.`c0`) AS `r2` from `test`.`t1` `a` "
              "group by `a`.`c1`",
        "vp": "select `a`.`c2` AS `r1` from `test`.`t1` `a`"})
    assert views_left_out(conn, views, GeneratorOptions().avoid) == {("test", "vg"),
                                                                    ("test", "vd")}
    assert views_left_out(conn, views, frozenset()) == set()


def test_nullif_pushdown_convert_nullif_of_numbers_only():
    # KW46-PUSHDOWN-TEMPORAL-STRING's mechanism (TLP-distinct; 2347ba6aba71): NULLIF(a, b) of
    # two strings of other character sets, pushed into a materialized view, keeps the view's
    # column in its ELSE
    def classes(options: GeneratorOptions) -> set[str]:
        return {p.cls for _, trace in _traces(options, 3000, "nullif") for p in trace
                if p.kind == "value" and p.text.startswith("NULLIF(")}
    assert KNOWN_BUGS["nullif-pushdown-convert"]
    assert "nullif-pushdown-convert" in GeneratorOptions().avoid
    assert classes(GeneratorOptions()) and classes(GeneratorOptions()) <= {"int", "dec", "float"}
    assert classes(HUNTED) - {"int", "dec", "float"}


def test_key_constant_no_constant_in_a_list_of_an_indexed_number():
    # KW46-KEY-CONSTANT the other way round (TLP-aggregate; 8c3d59b40b07): -0.5 IN
    # (t1.decimal_key) looks -0.5 up rounded in the member's index and finds -1
    listed = re.compile(r"\((-?[\d.]+(?:e-?\d+)?|'[^']*') (?:NOT )?IN \(([^()]*)\)")
    def risky(sql: str) -> int:   # a literal other than 0..127 tested against a key column
        n = 0
        for m in listed.finditer(sql):
            safe = re.fullmatch(r"\d+", m.group(1)) and int(m.group(1)) <= 127
            n += bool(re.search(r"t\d+\.`(?:d2|pk)`", m.group(2))) and not safe
        return n
    tables = tables_from([("test", "tk", [("pk", "int(11)", "primary"),
                                          ("d2", "decimal(1,0)", "indexed"), ("i", "int(11)")])])
    def count(options: GeneratorOptions) -> int:
        n = 0
        for seed in range(4000):
            g = SqlGenerator(tables, random.Random(f"kc:{seed}"), {("test", "tk"): 3}, options)
            fc = g.from_clause()
            if fc is not None:
                n += risky(g.predicate(fc.scope))
        return n
    assert count(GeneratorOptions()) == 0
    assert count(HUNTED) > 0

