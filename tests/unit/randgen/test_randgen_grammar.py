"""The randgen grammar parser: rules, comments, includes, redefines, weights, tokens.

Covers: lib/randgen/grammar.py
"""
import glob
import os

import pytest

from lib.randgen.errors import GrammarError
from lib.randgen.grammar import BUILTIN, LIT, PERL, RULE, Grammar
from tests.conftest import ROOT

SHARED = os.path.join(os.path.dirname(ROOT), "shared", "randgen-conf")


def kinds(grammar, rule, alt=0):
    return [(t.kind, t.text) for t in grammar.rules[rule].alternatives[alt].tokens
            if t.text.strip()]


def test_rules_alternatives_and_rule_end():
    g = Grammar.from_string("query:\n  select | insert ;\nselect:\n  SELECT 1 ;\ninsert: INSERT ;\n")
    assert set(g.rules) == {"query", "select", "insert"}
    assert [a.text() for a in g.rules["query"].alternatives] == ["select", "insert"]
    assert kinds(g, "query") == [(RULE, "select")]


def test_semicolon_not_at_end_of_line_stays_in_the_rule():
    g = Grammar.from_string("query:\n  SELECT 1 ; SELECT 2 ;\n")
    assert g.rules["query"].alternatives[0].text() == "SELECT 1 ; SELECT 2"


def test_comments_and_line_continuation():
    g = Grammar.from_string("# a comment\nquery: SELECT 1 | # trailing\n  SELECT \\\n 2 ;\n")
    alts = [a.text() for a in g.rules["query"].alternatives]
    assert alts == ["SELECT 1", "SELECT 2"]


def test_perl_dollar_hash_is_not_a_comment():
    g = Grammar.from_string("query: { $#a } ;\n")
    assert kinds(g, "query") == [(PERL, "{ $#a }")]


def test_literals_rules_builtins_and_lowercase_words():
    g = Grammar.from_string("query: SELECT _field FROM _table WHERE x = _varchar(32) AND "
                            "y = _int_unsigned AND item ;\nitem: 1 ;\n")
    toks = kinds(g, "query")
    assert (BUILTIN, "_field") in toks and (BUILTIN, "_table") in toks
    assert (BUILTIN, "_varchar(32)") in toks and (BUILTIN, "_int_unsigned") in toks
    assert (RULE, "item") in toks
    assert (LIT, "x") in toks          # an unknown lowercase word stays a literal
    assert (LIT, "SELECT") in toks


def test_invariant_on_rules_and_builtins():
    g = Grammar.from_string("query: v[invariant] v _table[invariant] ;\nv: 1 | 2 ;\n")
    toks = g.rules["query"].alternatives[0].tokens
    rule = [t for t in toks if t.kind == RULE]
    assert rule[0].invariant and not rule[1].invariant
    assert [t for t in toks if t.kind == BUILTIN][0].invariant


def test_factor_weights():
    g = Grammar.from_string("query: ==FACTOR:3== a | b | ==FACTOR:0.5== c ;\n")
    rule = g.rules["query"]
    assert [a.weight for a in rule.alternatives] == [3.0, 1.0, 0.5]
    assert rule.cumulative == (3.0, 4.0, 4.5)
    assert Grammar.from_string("query: a | b ;\n").rules["query"].cumulative is None


def test_perl_blocks_keep_file_and_line(tmp_path):
    path = tmp_path / "g.yy"
    path.write_text("query:\n  SELECT 1 |\n  SELECT { $x = 1;\n   $x + 1 } ;\n")
    g = Grammar.from_files([str(path)])
    block = g.perl_blocks()[0]
    assert block.path == str(path) and block.line == 3
    assert "$x + 1" in block.text


def test_pipe_inside_perl_block_does_not_split():
    g = Grammar.from_string("query: { $a || 'x' } | B ;\n")
    assert len(g.rules["query"].alternatives) == 2


def test_include_and_redefine_and_add_rules(tmp_path):
    (tmp_path / "common.yy").write_text("value: 1 | 2 ;\n")
    main = tmp_path / "main.yy"
    main.write_text('#include "common.yy"\nquery_init: SET @a = 1 ;\nquery: SELECT value ;\n'
                    "other: OLD ;\n")
    redefine = tmp_path / "re.yy"
    redefine.write_text("other: NEW ;\nquery_add: DELETE ;\nquery_init_add: SET @b = 2 ;\n"
                        "thread2_init_add: SET @c = 3 ;\n")
    g = Grammar.from_files([str(main), str(redefine)])
    assert [a.text() for a in g.rules["other"].alternatives] == ["NEW"]
    assert [a.text() for a in g.rules["query"].alternatives] == ["SELECT value", "DELETE"]
    assert g.rules["query_init"].alternatives[0].text() == "SET @a = 1 ; SET @b = 2"
    assert g.rules["thread2_init"].alternatives[0].text() == "SET @a = 1 ; SET @b = 2 ; SET @c = 3"
    assert g.start_rule(1, first=True) == "query_init"
    assert g.start_rule(2, first=True) == "thread2_init"
    assert g.start_rule(2, first=False) == "query"
    assert any("rule other is defined again" in w for w in g.warnings)


def test_thread_rules_are_start_rules():
    g = Grammar.from_string("query: A ;\nthread2: B ;\n")
    assert g.start_rule(1, False) == "query" and g.start_rule(2, False) == "thread2"


def test_missing_query_rule_and_missing_files(tmp_path):
    with pytest.raises(GrammarError, match="no 'query'"):
        Grammar.from_string("select: SELECT 1 ;\n")
    with pytest.raises(GrammarError, match="not found"):
        Grammar.from_files([str(tmp_path / "nope.yy")])
    bad = tmp_path / "inc.yy"
    bad.write_text('#include "missing.yy"\nquery: A ;\n')
    with pytest.raises(GrammarError, match=r"inc.yy:1: #include file not found"):
        Grammar.from_files([str(bad)])


def test_text_outside_rules_is_a_warning_like_randgen_skipping_it():
    g = Grammar.from_string("query:\n  A ;\n  B ;\n")
    assert [a.text() for a in g.rules["query"].alternatives] == ["A"]
    assert any("outside any rule" in w for w in g.warnings)


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/randgen-conf not present")
def test_every_stock_grammar_parses():
    files = sorted(glob.glob(os.path.join(SHARED, "**", "*.yy"), recursive=True))
    assert len(files) == 62
    for path in files:
        Grammar.from_files([path])
