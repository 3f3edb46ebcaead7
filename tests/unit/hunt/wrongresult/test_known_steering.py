"""The known wrong results of 10.11.19 (session 8's ledger) the wrong-result generator and
the oracles now steer clear of: each entry's trigger is not written under the default
avoidance and is written with ``avoid=frozenset()`` (where the generator can be driven
to it).

Covers: lib/hunt/wrongresult/generator.py (KNOWN_BUGS, VIEW_KNOWN_BUGS),
lib/hunt/wrongresult/queries.py, lib/hunt/wrongresult/oracle.py (views_left_out)
"""
from __future__ import annotations

import random
import re

from lib.hunt.wrongresult.dqe import DQEOracle
from lib.hunt.wrongresult.generator import KNOWN_BUGS, VIEW_KNOWN_BUGS, GeneratorOptions, SqlGenerator
from lib.hunt.wrongresult.oracle import OracleBase, views_left_out
from lib.hunt.wrongresult.queries import select_query
from lib.hunt.wrongresult.schema import tables_from
from lib.hunt.wrongresult.toplevel import closing_parenthesis, split_top_level
from tests.unit.hunt.wrongresult.fakeconn import AnswerConnection

TABLES = tables_from([
    ("test", "ta", [("pk", "int(11)", "primary"), ("i", "int(11)"), ("ik", "int(11)", "indexed"),
                    ("d", "decimal(10,2)"), ("dk", "decimal(10,2)", "indexed"),
                    ("dt", "date"), ("tm", "time")]),
    ("test", "tb", [("pk", "int(11)", "primary"), ("i", "int(11)"), ("ik", "int(11)", "indexed"),
                    ("d", "decimal(10,2)")]),
    ("test", "tc", [("pk", "int(11)", "primary"), ("i", "int(11)"), ("dk", "decimal(10,2)",
                                                                     "indexed")]),
])
ROWS = {("test", "ta"): 10, ("test", "tb"): 1, ("test", "tc"): 8}
HUNTED = GeneratorOptions(avoid=frozenset())
NEW_ENTRIES = ("window-const-partition", "empty-join-having", "bnlh-is-null",
               "oracle-concat-outer-join", "decimal-round-scale",
               "setop-pushdown-collation", "vers-outer-join-dml", "decimal-div-in-list")


def _queries(options: GeneratorOptions, n: int, name: str) -> list[tuple[str, str]]:
    """n rich SELECTs (query, variant) over the three tables."""
    out = []
    for seed in range(n):
        g = SqlGenerator(TABLES, random.Random(f"{name}:{seed}"), ROWS, options)
        fc = g.from_clause()
        if fc is not None:
            where = f" WHERE {g.predicate(fc.scope)}" if g.chance(0.5) else ""
            out.append(select_query(g, fc, where, rich=True))
    return out


def test_the_new_entries_are_named_and_avoided_by_default():
    for name in NEW_ENTRIES:
        assert KNOWN_BUGS[name] and name in GeneratorOptions().avoid
    for name in VIEW_KNOWN_BUGS:
        assert name in KNOWN_BUGS


def _window_lists(sql: str) -> list[list[str]]:
    """The PARTITION BY and ORDER BY lists of every window of sql (items at top level)."""
    lists = []
    for m in re.finditer(r"\bOVER \(", sql):
        body = sql[m.end():m.end() + closing_parenthesis(sql[m.end():])]
        body = re.split(r" (?:ROWS|RANGE) BETWEEN ", body)[0]
        for part in re.split(r"(?:^| )(?:PARTITION|ORDER) BY ", body)[1:]:
            lists.append([i.strip() for i in split_top_level(part, ",")])
    return lists


def test_window_const_partition_no_constant_partition_or_order_item():
    # KW46-WINDOW-CONST-PARTITION (EET, hunt or19-sf8 trial 11): COUNT(*) OVER (PARTITION BY
    # ((ABS(-127) + 0) * 3.0), '2000-01-01 00:00:00') beside SUM(c6) OVER (PARTITION BY c6)
    # dropped the second window's sort
    def constant_items(options: GeneratorOptions) -> int:
        found = 0
        for sql, variant in _queries(options, 1500, "window"):
            if variant != "window":
                continue
            for items in _window_lists(sql):
                found += sum(1 for i in items if not re.search(r"\bt\d+\.`", i))
        return found
    assert constant_items(GeneratorOptions()) == 0
    assert constant_items(HUNTED) > 0


def test_empty_join_having_no_implicit_group_having_over_a_const_table_join():
    # KW46-EMPTY-JOIN-HAVING (Radar, live19 trial 31): SUM(...) ... FROM t3 CROSS JOIN t1
    # JOIN s1 ... HAVING MAX(t1.c0) > 128, s1 a one-row sequence, returned a row
    def risky(options: GeneratorOptions) -> int:
        n = 0
        for sql, _ in _queries(options, 3000, "having"):
            if " HAVING " in sql and " GROUP BY " not in sql and " AS t3" in sql \
                    and "`tb` AS" in sql:
                n += 1
        return n
    assert risky(GeneratorOptions()) == 0
    assert risky(HUNTED) > 0


def test_bnlh_is_null_no_null_test_of_an_indexed_column_in_a_join():
    # KW46-BNLH-IS-NULL (DQP, hunt or19-sf8 trial 66, --join-cache-level=4): t1
    # STRAIGHT_JOIN t2 ON t2.k IS NULL found no row through a hashed join buffer
    bare = re.compile(r"(?<!COALESCE\()\bt\d+\.`(?:ik|dk|pk)` (?:IS NULL|<=> NULL)"
                      r"|NULL <=> t\d+\.`(?:ik|dk|pk)`")
    def tests(options: GeneratorOptions) -> tuple[int, int]:
        bare_in_join = wrapped = 0
        for seed in range(1500):
            g = SqlGenerator(TABLES, random.Random(f"null:{seed}"), ROWS, options)
            fc = g.from_clause()
            if fc is None or len(fc.scope.tables) < 2:
                continue
            sql = fc.sql + " WHERE " + g.predicate(fc.scope)
            bare_in_join += len(bare.findall(sql))
            wrapped += len(re.findall(r"COALESCE\(t\d+\.`(?:ik|dk|pk)`\) (?:IS NULL|<=> NULL)",
                                      sql))
        return bare_in_join, wrapped
    default, hunted = tests(GeneratorOptions()), tests(HUNTED)
    assert default[0] == 0 and default[1] > 0
    assert hunted[0] > 0 and hunted[1] == 0
    # one table: the test stays as written (no join buffer)
    g = SqlGenerator(TABLES, random.Random(1), ROWS, GeneratorOptions())
    from lib.hunt.wrongresult.generator import Scope
    assert g.null_key_lookup(Scope([("t1", TABLES[0])]), "t1.`ik`") == "t1.`ik`"
    assert g.null_key_lookup(Scope([("t1", TABLES[0]), ("t2", TABLES[1])]),
                             "t2.`ik`") == "COALESCE(t2.`ik`)"
    assert g.null_key_lookup(Scope([("t1", TABLES[0]), ("t2", TABLES[1])]), "t2.`i`") == "t2.`i`"


class _Server(AnswerConnection):
    """A connection whose information_schema answers VIEWS and the versioned TABLES."""

    columns = ("a", "b", "c")

    def __init__(self, definitions: dict[str, str], versioned: tuple[str, ...] = ()) -> None:
        self.definitions = definitions
        self.versioned = versioned
        self.asked: list[str] = []

    def answer(self, sql: str) -> list[tuple]:
        self.asked.append(sql)
        if "information_schema.VIEWS" in sql:
            return [("test", n, d) for n, d in self.definitions.items()]
        assert "SYSTEM VERSIONED" in sql
        return [("test", n) for n in self.versioned]


def _views(columns: dict[str, list[tuple[str, str]]]):
    return [type(x)(x.schema, x.name, x.columns, True)
            for x in tables_from([("test", n, c) for n, c in columns.items()])]


def test_setop_pushdown_collation_views_of_a_set_operation_with_strings_are_left_out():
    # KW46-SETOP-PUSHDOWN-COLLATION (TLP-distinct, TLP-groupby, CODDTest; hunt or18-sf8
    # trial 32): the view SELECT 0e0, 'Abc' INTERSECT ALL SELECT ..., c1 (c1 as_cs)
    t = _views({"vs": [("r1", "double"), ("r2", "varchar(3)")],
                "vn": [("r1", "int(11)")],
                "vb": [("r1", "varbinary(3)")],
                "vok": [("r2", "varchar(3)")]})
    conn = _Server({
        "vs": "select 0e0 AS `r1`,'Abc' AS `r2` intersect all select `a`.`c0` AS `c0`,"
              "`a`.`c1` AS `c1` from `test`.`t5` `a`",
        "vn": "select 1 AS `r1` union all select `a`.`c0` AS `c0` from `test`.`t5` `a`",
        "vb": "select 'x' AS `r1` except select `a`.`c2` AS `c2` from `test`.`t5` `a`",
        "vok": "select `a`.`c1` AS `r2` from `test`.`t5` `a`"})
    assert views_left_out(conn, t, GeneratorOptions().avoid) == {("test", "vs")}
    assert views_left_out(conn, t, frozenset()) == set()


def test_views_with_a_wide_decimal_column_are_left_out():
    # an oracle's defect (TLP-aggregate, session 11's 5c30bc4cc1c8): the view's
    # GREATEST(ROUND(c8, 1), ABS(c8)) of a DECIMAL(65,0) at its limit is 66 digits typed
    # DECIMAL(65,1): MAX(r3) shows it whole, the TLP union stores it clipped
    t = _views({"vw": [("r3", "decimal(65,1)")], "vn": [("r3", "decimal(20,1)")]})
    conn = _Server({
        "vw": "select greatest(round(`a`.`c8`,1),abs(`a`.`c8`)) AS `r3` from `test`.`t1` `a`",
        "vn": "select `a`.`c0` AS `r3` from `test`.`t1` `a`"})
    assert views_left_out(conn, t, frozenset()) == {("test", "vw")}


def test_cast_time_views_are_left_out():
    # KW46-CAST-TIME-COMPARE (TLP-distinct, CODDTest; hunt or19-sf8 trial 68): the view's
    # CAST(tinytext AS TIME(3)) of 'e', pushed into it, compares as 00:00:00
    # ... and a cast to DATETIME or DATE (EET, session 11's 625697ff64f9: CAST(CASE ... THEN
    # '1:1:59.999' END AS DATETIME(6)) is NULL, yet compares as 0000-00-00 00:00:00)
    t = _views({"vt": [("r1", "time(3)")], "vt0": [("r1", "time")],
                "vts": [("r1", "datetime")], "vd": [("r1", "date")],
                "vok": [("r1", "varchar(10)")]})
    conn = _Server({
        "vt": "select cast(`a`.`c3` as time(3)) AS `r1` from `test`.`t2` `a`",
        "vt0": "select cast(`a`.`c3` as time) AS `r1` from `test`.`t2` `a`",
        "vts": "select cast(`a`.`c3` as datetime(6)) AS `r1` from `test`.`t2` `a`",
        "vd": "select cast(`a`.`c3` as date) AS `r1` from `test`.`t2` `a`",
        "vok": "select `a`.`time` AS `r1`, `a`.`c3` AS `date` from `test`.`t2` `a`"})
    assert views_left_out(conn, t, GeneratorOptions().avoid) == {
        ("test", "vt"), ("test", "vt0"), ("test", "vts"), ("test", "vd")}
    assert views_left_out(conn, t, frozenset()) == set()


def test_vers_outer_join_dml_views_left_out_for_dqe_only():
    # KW46-VERS-OUTER-JOIN-DML (DQE, hunt or19-sf8 trial 77): EXISTS over a view that LEFT
    # JOINs an empty system-versioned table is 1 in the SELECT, false in UPDATE and DELETE
    t = _views({"vj": [("r1", "int(11)")], "vi": [("r1", "int(11)")],
                "vu": [("r1", "int(11)")]})
    definitions = {
        "vj": "select `a`.`c0` AS `r1` from (`test`.`t1` `a` left join `test`.`t2` `b` "
              "on(`a`.`p` = `b`.`q`))",
        "vi": "select `a`.`c0` AS `r1` from (`test`.`t1` `a` join `test`.`t2` `b` "
              "on(`a`.`p` = `b`.`q`))",
        "vu": "select `a`.`c0` AS `r1` from (`test`.`t1` `a` left join `test`.`t3` `b` "
              "on(`a`.`p` = `b`.`q`))"}
    conn = _Server(definitions, versioned=("t2",))
    assert views_left_out(conn, t, GeneratorOptions().avoid, writes=True) == {("test", "vj")}
    assert views_left_out(conn, t, frozenset(), writes=True) == set()
    conn = _Server(definitions, versioned=("t2",))
    assert views_left_out(conn, t, GeneratorOptions().avoid, writes=False) == set()
    assert not any("SYSTEM VERSIONED" in q for q in conn.asked)   # not read when not needed
    assert DQEOracle.writes and not OracleBase.writes


def string_predicates(options: GeneratorOptions) -> str:
    """A FROM clause and WHERE predicate of each of 600 seeds over two tables of a VARCHAR
    column each, one a line."""
    strings = tables_from([("test", "s1", [("pk", "int(11)", "primary"), ("c", "varchar(10)")]),
                           ("test", "s2", [("pk", "int(11)", "primary"), ("b", "varchar(10)")])])
    rows = {("test", "s1"): 5, ("test", "s2"): 5}
    text = []
    for seed in range(600):
        g = SqlGenerator(strings, random.Random(seed), rows, options)
        fc = g.from_clause()
        if fc is not None:
            text.append(fc.sql + " WHERE " + g.predicate(fc.scope))
    return "\n".join(text)


def test_oracle_concat_outer_join_no_concat_under_sql_mode_oracle():
    # KW46-ORACLE-CONCAT-OUTER-JOIN (TLP oracles, hunt or19-sf8 trial 44, --sql-mode=ORACLE):
    # WHERE CONCAT('q', b) = 'q' made the LEFT JOIN an inner one
    from dataclasses import replace
    written = string_predicates
    oracle = written(GeneratorOptions(oracle_mode=True))
    assert "CONCAT(" not in oracle and "CONCAT_WS(''," in oracle
    assert "CONCAT(" in written(GeneratorOptions())          # the default sql_mode: as before
    assert "CONCAT(" in written(replace(HUNTED, oracle_mode=True))


def test_the_oracle_reads_the_sessions_sql_mode():
    from lib.hunt.wrongresult.oracle import oracle_mode

    class Mode(AnswerConnection):
        columns = ("m",)

        def __init__(self, mode):
            self.mode = mode

        def answer(self, sql):
            assert "sql_mode" in sql
            return [(self.mode,)]

    assert oracle_mode(Mode("PIPES_AS_CONCAT,ANSI_QUOTES,ORACLE,NO_KEY_OPTIONS"))
    assert not oracle_mode(Mode("STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION"))


def test_decimal_round_scale_a_65_digit_decimal_is_rounded_to_no_places():
    # a254a3958dfa (DQP, hunt or19-sf8 trial 62): ROUND(c1, 1) of a DECIMAL(65,0) -99...9 is
    # -99...9.0 sent directly and -99...9.9 (64 nines) through SQL_BUFFER_RESULT
    wide = tables_from([("test", "w", [("pk", "int(11)", "primary"), ("w", "decimal(65,0)"),
                                       ("n", "decimal(10,2)")])])
    from lib.hunt.wrongresult.generator import Scope
    def rounded(options: GeneratorOptions) -> tuple[int, int]:
        wide_places = narrow_places = 0
        for seed in range(3000):
            g = SqlGenerator(wide, random.Random(seed), {("test", "w"): 5}, options)
            text = g.value(Scope([("t1", wide[0])]), "dec")
            wide_places += len(re.findall(r"(?:ROUND|TRUNCATE)\(t1\.`w`, [12]\)", text))
            narrow_places += len(re.findall(r"(?:ROUND|TRUNCATE)\(t1\.`n`, [12]\)", text))
        return wide_places, narrow_places
    default, hunted = rounded(GeneratorOptions()), rounded(HUNTED)
    assert default[0] == 0 and default[1] > 0
    assert hunted[0] > 0


def test_to_days_is_written_with_its_precision_back_while_int_precision_is_avoided():
    # TO_DAYS('9999-01-01') * 9.99 UNION ALL SELECT 1 gives 9999999.99 on 10.11.19 (session 9,
    # hunt or18 t43, cab99aaf417b): TO_DAYS declares a digit too few, as ASCII and the rest
    default = [q for q, _ in _queries(GeneratorOptions(), 400, "to-days")]
    hunted = [q for q, _ in _queries(HUNTED, 400, "to-days")]
    assert any("TO_DAYS(" in q for q in default) and any("TO_DAYS(" in q for q in hunted)
    assert all(_to_days_wrapped(q) for q in default)
    assert not all(_to_days_wrapped(q) for q in hunted)


def _to_days_wrapped(sql: str) -> bool:
    """Every TO_DAYS(...) of sql is written (TO_DAYS(...) + 0)."""
    for m in re.finditer(r"TO_DAYS\(", sql):
        end = m.end() + closing_parenthesis(sql[m.end():]) + 1
        if sql[m.start() - 1:m.start()] != "(" or not sql[end:].startswith(" + 0)"):
            return False
    return True


def test_decimal_div_in_list_no_decimal_division_on_either_side_of_an_in_list():
    # KW46-DECIMAL-DIV-IN-LIST (Pinolo, bench figure 7 over replication_single_engine.zz):
    # x NOT IN (y) against x NOT IN (y, 1.5) -- 0.001/29083 is = 0 and IN (0), not IN (0, 1.5)
    def divisions(options: GeneratorOptions) -> tuple[int, int]:
        """(IN lists with a decimal division on a side, IN lists of decimals) written."""
        risky = lists = 0
        for seed in range(1500):
            g = SqlGenerator(TABLES, random.Random(f"in:{seed}"), ROWS, options, [])
            fc = g.from_clause()
            if fc is None:
                continue
            g.predicate(fc.scope)
            decimals = {p.text for p in g.trace if p.kind == "value" and p.cls == "dec"}
            for p in g.trace:
                if p.kind != "predicate" or p.cls != "in":
                    continue
                tested, _, items = p.parts
                sides = [tested] + [i.strip() for i in split_top_level(items, ",")]
                if any(s in decimals for s in sides):
                    lists += 1
                    risky += any("/" in s for s in sides if s in decimals)
        return risky, lists
    default, hunted = divisions(GeneratorOptions()), divisions(HUNTED)
    assert default[0] == 0 and default[1] > 0, default
    assert hunted[0] > 0, hunted
    # the value is replaced where it stands: a division elsewhere in the list's class is kept
    g = SqlGenerator(TABLES, random.Random(1), ROWS, GeneratorOptions())
    assert g.list_division("dec", "(ta.`d` / 3)") and not g.list_division("int", "SIGN((1 / 3))")
    assert not SqlGenerator(TABLES, random.Random(1), ROWS, HUNTED).list_division("dec", "(1 / 3)")
