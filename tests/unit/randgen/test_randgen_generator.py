"""Sentence generation: seeds, invariants, weights, built-ins, limits, splitting.

Covers: lib/randgen/generator.py, lib/randgen/builtins.py, lib/randgen/splitter.py,
lib/randgen/metadata.py
"""
import re
from collections import Counter

import pytest

from lib.randgen.builtins import Prng, field_type_kind, field_type_value, grammar_value
from lib.randgen.generator import GenContext, Generator, NativeBlocks, compile_blocks
from lib.randgen.grammar import Grammar
from lib.randgen.metadata import Column, Metadata, Table
from lib.randgen.splitter import clean_sentence, split_statements

MD = Metadata.from_tables([
    Table("test", "t1", (Column("pk", "int", "primary"), Column("col_int_key", "int", "indexed"),
                         Column("col_char", "char", ""))),
    Table("test", "t2", (Column("pk", "int", "primary"), Column("only_t2", "varchar", ""))),
    Table("test", "v1", (Column("pk", "int", ""),), is_view=True),
])


def gen(text, seed=1, thread=1, **kw):
    g = Grammar.from_string(text)
    compiled, unsupported = compile_blocks(g)
    assert not unsupported
    return Generator(g, thread, seed, GenContext(MD, **kw),
                     lambda tid, prng: NativeBlocks(compiled, prng, tid))


GRAMMAR = ("query: SELECT _field FROM _table WHERE x = value | INSERT INTO _table VALUES "
           "( value , value ) | UPDATE _basetable SET _field_no_pk = _varchar(8) ;\n"
           "value: _digit | _tinyint_unsigned | _english | { $n++ } ;\n")


def test_same_seed_same_sentences_other_seed_others():
    a = [gen(GRAMMAR, seed=5).next_sentence() for _ in range(1)]
    g1, g2, g3 = gen(GRAMMAR, seed=5), gen(GRAMMAR, seed=5), gen(GRAMMAR, seed=6)
    s1 = [g1.next_sentence() for _ in range(200)]
    s2 = [g2.next_sentence() for _ in range(200)]
    s3 = [g3.next_sentence() for _ in range(200)]
    assert s1 == s2 and s1 != s3 and a[0] == s1[0]


def test_threads_get_different_streams():
    s1 = [gen(GRAMMAR, thread=1).next_sentence() for _ in range(20)]
    s2 = [gen(GRAMMAR, thread=2).next_sentence() for _ in range(20)]
    assert s1 != s2


def test_invariant_rule_is_expanded_once_per_sentence():
    g = gen("query: v[invariant] v[invariant] v[invariant] ;\nv: 1 | 2 | 3 | 4 | 5 | 6 ;\n")
    for _ in range(50):
        parts = g.next_sentence().split()
        assert len(set(parts)) == 1
    g = gen("query: v v v v v v ;\nv: 1 | 2 | 3 | 4 | 5 | 6 ;\n")
    assert any(len(set(g.next_sentence().split())) > 1 for _ in range(20))


def test_invariant_builtin():
    g = gen("query: _digit[invariant] _digit[invariant] _table[invariant] _table[invariant] ;\n")
    for _ in range(30):
        a, b, c, d = g.next_sentence().split()
        assert a == b and c == d


def test_factor_weights_shape_the_choice():
    g = gen("query: ==FACTOR:9== A | B ;\n")
    counts = Counter(g.next_sentence() for _ in range(4000))
    assert 0.85 < counts["A"] / 4000 < 0.95


def test_uniform_choice_without_factors():
    g = gen("query: A | B | C | D ;\n")
    counts = Counter(g.next_sentence() for _ in range(4000))
    assert all(800 < counts[k] < 1200 for k in "ABCD")


def test_table_then_field_uses_last_table():
    g = gen("query: _table _field ;\n")
    for _ in range(50):
        table, field = g.next_sentence().split()
        cols = {"`t1`": {"`pk`", "`col_int_key`", "`col_char`"}, "`t2`": {"`pk`", "`only_t2`"},
                "`v1`": {"`pk`"}}[table]
        assert field in cols
        assert g.last_table == table.strip("`")


def test_field_variants():
    g = gen("query: { '' } t1_pick _field_pk _field_key _field_no_pk _field_int _field_char "
            "_field_list _field_count ;\nt1_pick: _basetable ;\n")
    for _ in range(40):
        out = g.next_sentence().split()
        if out[0] != "`t1`":
            continue
        assert out[1:] == ["`pk`", out[2], out[3], out[4], "`col_char`",
                           "`col_char`,`col_int_key`,`pk`", "3"]
        assert out[2] in ("`pk`", "`col_int_key`") and out[3] in ("`col_int_key`", "`col_char`")


def test_builtin_values_and_quoting():
    p = Prng(3)
    for _ in range(200):
        assert 0 <= int(grammar_value(p, "_digit")) <= 9
        assert 0 <= int(grammar_value(p, "_tinyint_unsigned")) <= 255
        assert -128 <= int(grammar_value(p, "_tinyint")) <= 127
        assert 0 <= int(grammar_value(p, "_int_unsigned")) <= 4294967295
        v = grammar_value(p, "_varchar(5)")
        assert re.fullmatch(r"'[a-z]{1,5}'", v), v
        assert re.fullmatch(r"'\d{4}-\d\d-\d\d'", grammar_value(p, "_date"))
        assert re.fullmatch(r"'\d\d:\d\d:\d\d\.\d{6}'", grammar_value(p, "_time"))
        assert re.fullmatch(r"'[A-Z]{5}'", grammar_value(p, "_quid"))
        assert re.fullmatch(r"0x[0-9A-F]{1,4}", grammar_value(p, "_hex"))
        assert re.fullmatch(r"b'[01]'", grammar_value(p, "_bit"))
        assert re.fullmatch(r"'[a-z]+'", grammar_value(p, "_english"))
        assert re.fullmatch(r"'\d{4}'", grammar_value(p, "_year"))
    assert grammar_value(p, "_null") == "NULL"
    assert field_type_kind("_mediumint_unsigned") == "numeric"
    assert field_type_kind("_nonsense") is None
    assert field_type_value(Prng(1), "char(3)") is not None


def test_context_builtins():
    g = gen("query: _thread_id _connection_id _pid _thread_count _letter ;\n", thread=3,
            thread_count=4)
    g.connection_id = 77
    tid, conn, pid, count, letter = g.next_sentence().split()
    assert (tid, conn, count) == ("3", "77", "4") and pid == "10003"
    assert re.fullmatch(r"[a-z]", letter)


def test_init_rule_comes_first():
    g = gen("query_init: INIT ;\nquery: Q ;\n")
    assert [g.next_sentence() for _ in range(3)] == ["INIT", "Q", "Q"]


def test_recursion_limit_drops_a_runaway_sentence_with_a_warning():
    g = gen("query: a ;\na: X a ;\n")
    assert g.next_sentence() is None
    assert g.runaways == 1
    assert "possible endless loop" in g.warnings[0] and "rule a" in g.warnings[0]


def test_length_limit():
    g = Grammar.from_string("query: a a a a a a a a a a ;\na: b b b b b b b b b b ;\n"
                            "b: X X X X X X X X X X X X ;\n")
    small = Generator(g, 1, 1, GenContext(MD), max_length=100)
    assert small.next_sentence() is None and "longer than 100" in small.warnings[0]


def test_perl_variables_persist_per_thread():
    g = gen("query: { $n++ } ;\n")
    assert [g.next_sentence() for _ in range(3)] == ["0", "1", "2"]
    other = gen("query: { $n++ } ;\n", thread=2)
    assert other.next_sentence() == "0"


def test_clean_sentence_like_randgen():
    assert clean_sentence("SELECT X . `a` , COUNT (  *  ) FROM t") == "SELECT X.`a`, COUNT( * ) FROM t"


@pytest.mark.parametrize("sentence,expected", [
    ("SELECT 1 ; SELECT 2", ["SELECT 1", "SELECT 2"]),
    ("INSERT INTO t VALUES ('a;b') ; SELECT \"x;y\" ; ;", ["INSERT INTO t VALUES ('a;b')",
                                                         'SELECT "x;y"']),
    ("SELECT `we;ird` FROM t /* c;c */", ["SELECT `we;ird` FROM t /* c;c */"]),
    ("BEGIN ; UPDATE t SET a = 1 ; COMMIT", ["BEGIN", "UPDATE t SET a = 1", "COMMIT"]),
    ("CREATE PROCEDURE p() BEGIN SELECT 1 ; IF 1 THEN SELECT 2 ; END IF ; END ; CALL p()",
     ["CREATE PROCEDURE p() BEGIN SELECT 1 ; IF 1 THEN SELECT 2 ; END IF ; END", "CALL p()"]),
    ("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN SET @a = CASE WHEN 1 THEN 2 END ; "
     "SET @b = 1 ; END ; SELECT 1",
     ["CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN SET @a = CASE WHEN 1 THEN 2 END ; "
      "SET @b = 1 ; END", "SELECT 1"]),
    ("BEGIN NOT ATOMIC SELECT 1 ; SELECT 2 ; END", ["BEGIN NOT ATOMIC SELECT 1 ; SELECT 2 ; END"]),
    ("IF 1 THEN SELECT 1 ; END IF ; SELECT 2", ["IF 1 THEN SELECT 1 ; END IF", "SELECT 2"]),
    ("SELECT IF(1, 2, 3) ; SELECT 4", ["SELECT IF(1, 2, 3)", "SELECT 4"]),
    ("XA BEGIN 'x' ; XA END 'x'", ["XA BEGIN 'x'", "XA END 'x'"]),
    ("INSERT INTO t VALUES ('it''s;') ; SELECT 1", ["INSERT INTO t VALUES ('it''s;')", "SELECT 1"]),
])
def test_split_statements(sentence, expected):
    assert split_statements(sentence) == expected
