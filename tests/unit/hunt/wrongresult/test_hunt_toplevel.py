"""SQL text read at its top level, the one scanner of the oracles: separators outside
quotes and parentheses (case-blind when asked), the parenthesis that closes an argument
list, and its users (a view's constant columns, whether a LEAST/GREATEST call is the whole
text).

Covers: lib/hunt/wrongresult/toplevel.py
"""
from lib.hunt.wrongresult.oracle import constant_function_columns
from lib.hunt.wrongresult.rewrite import context_sensitive
from lib.hunt.wrongresult.toplevel import closing_parenthesis, scan, split_top_level


def test_separators_outside_quotes_and_parentheses():
    assert split_top_level("a, f(b, c), 'd, e', `f,g`, \"h,i\"", ",") == \
        ["a", " f(b, c)", " 'd, e'", " `f,g`", " \"h,i\""]
    assert split_top_level("x", ",") == ["x"]
    assert split_top_level("", ",") == [""]
    # a backslash inside a quote escapes the next character, the quote included
    assert split_top_level(r"'a\', b', c", ",") == [r"'a\', b'", " c"]
    # a separator found is stepped over whole: ",," cut once per ",,"
    assert split_top_level("a,,,b", ",,") == ["a", ",b"]
    # unbalanced: after a ')' too many the text is no longer at depth 0
    assert split_top_level("a), b, (c", ",") == ["a), b, (c"]


def test_case_blind_or_not():
    sql = "SELECT a, (SELECT b from u) FROM t"
    assert split_top_level(sql, " FROM ") == ["SELECT a, (SELECT b from u)", "t"]
    assert split_top_level("select a from t", " FROM ") == ["select a from t"]
    assert split_top_level("select a from t", " FROM ", case_blind=True) == ["select a", "t"]
    # a character whose upper case is longer ('ß' -> 'SS') does not shift the cuts
    assert split_top_level("SELECT 'ß', x FROM t", " FROM ", case_blind=True) == \
        ["SELECT 'ß', x", "t"]
    assert split_top_level("SELECT ß, x FROM t", ",", case_blind=True) == ["SELECT ß", " x FROM t"]


def test_the_parenthesis_that_closes_an_argument_list():
    assert closing_parenthesis("a, b) + 1") == 4
    assert closing_parenthesis("f(a), ')') ") == 9
    assert closing_parenthesis("a, (b") == -1
    assert scan("a, b", ",").unmatched == -1 and scan("a, b", ",").cuts == (1,)
    assert scan("x)", "").cuts == ()


def test_its_users():
    assert context_sensitive("GREATEST('well', '0.5')")
    assert context_sensitive("LEAST(t1.`a`, ')')  ")
    assert not context_sensitive("GREATEST(a, b) + 1")
    assert not context_sensitive("GREATEST(a, b")
    assert not context_sensitive("ABS(GREATEST(a, b))")
    assert constant_function_columns(
        "select abs(5) AS `r1`,`t`.`a` AS `r2`,concat('x', 'y') AS `r3` from `t`") == \
        ["abs(5)", "concat('x', 'y')"]
