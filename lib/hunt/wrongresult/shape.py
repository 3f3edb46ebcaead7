"""A query's shape: the same query, whatever its literals and table names.

:func:`query_shape` tokenizes SQL and rewrites it so that the same bug gives
the same shape across seeds and machines (a finding's signature holds it):

- every literal (string, number, hex, bit, ``DATE '...'``'s string, a number's
  unary minus) becomes ``?``, and a list of two or more of them (``IN (1, 2,
  3)``) becomes ``?, ...``;
- names found in the name map (:func:`~lib.hunt.wrongresult.schema.shape_names`:
  schema, table, column, case-insensitive) become their role: ``<schema>``,
  ``<table>``, ``<view>``, ``<int:key>``...; other names (aliases such as
  ``t1``) stay;
- keywords are upper case, whitespace is one space, comments are dropped.
"""
from __future__ import annotations

import re
from typing import Mapping

_TOKEN_RE = re.compile(r"""
    (?P<ws>\s+|/\*.*?\*/|--[^\n]*|\#[^\n]*)
  | (?P<str>[xXbBnN]?'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")
  | (?P<num>0[xX][0-9a-fA-F]+|0[bB][01]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<qid>`(?:[^`]|``)*`)
  | (?P<word>[A-Za-z_$@][A-Za-z0-9_$@]*)
  | (?P<op><=>|<=|>=|<>|!=|:=|\|\||&&|<<|>>|[-+*/%=<>!~^&|(),.;])
""", re.VERBOSE | re.DOTALL)
# after one of these (or at the start) a '-' is a sign, not a subtraction
_SIGN_CONTEXT = frozenset({"(", ",", "=", "<", ">", "<=", ">=", "<>", "!=", "<=>", "+", "-",
                           "*", "/", "%", "AND", "OR", "XOR", "NOT", "BETWEEN", "IN", "WHEN",
                           "THEN", "ELSE", "SELECT", "WHERE", "ON", "LIKE", "DIV", "MOD",
                           "INTERVAL", "RETURN", "HAVING", "BY", "LIMIT", "OFFSET", "IS"})
_CALL = "\x00"  # marks a function name, glued to its "(" at the end
_LIST_RE = re.compile(r"\?(?: , \?)+")
_SPACE_FIXES = ((re.compile(r"\( "), "("), (re.compile(r" \)"), ")"), (re.compile(r" ,"), ","),
                (re.compile(r" \. "), "."))


def tokens(sql: str) -> list[tuple[str, str]]:
    """The (kind, text) tokens of sql: str, num, qid, word, op, or '?' for anything unknown."""
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(sql):
        m = _TOKEN_RE.match(sql, pos)
        if m is None:
            out.append(("?", sql[pos]))
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup or "?"
        if kind != "ws":
            out.append((kind, m.group()))
    return out


def _name(kind: str, text: str) -> str:
    return text[1:-1].replace("``", "`") if kind == "qid" else text


def query_shape(sql: str, names: Mapping[str, str] | None = None) -> str:
    """The shape of sql (see the module docstring); names maps lower-case names to roles.

    A bare name defined as an alias in sql (after ``AS``) stays as it is
    wherever it is bare (a backquoted name is never taken for an alias), and
    so does a name called as a function (followed by ``(``).
    """
    names = names or {}
    toks = tokens(sql)
    aliases = {t.lower() for (pk, pt), (k, t) in zip(toks, toks[1:])
               if pk == "word" and pt.upper() == "AS" and k == "word"}
    out: list[str] = []
    for i, (kind, text) in enumerate(toks):
        if kind in ("str", "num"):
            if out and out[-1] == "-" and (len(out) == 1 or out[-2] in _SIGN_CONTEXT):
                out.pop()
            out.append("?")
        elif kind in ("word", "qid"):
            name = _name(kind, text)
            call = (i + 1 < len(toks) and toks[i + 1][1] == "(" and kind == "word"
                    and text.upper() not in _STRUCTURAL)
            alias = kind == "word" and name.lower() in aliases
            role = None if call or alias else names.get(name.lower())
            if role is not None:
                out.append(role)
            elif kind == "word" and call:
                out.append(text.upper() + _CALL)
            elif kind == "word" and _is_keyword(text):
                out.append(text.upper())
            else:
                out.append(name)
        else:
            out.append(text.upper())
    shape = _LIST_RE.sub("?, ...", " ".join(out)).replace(_CALL + " (", "(")
    for pattern, repl in _SPACE_FIXES:
        shape = pattern.sub(repl, shape)
    return shape


def _is_keyword(word: str) -> bool:
    """SQL's usual keywords, in any case."""
    return word.upper() in _KEYWORDS


# keywords that may precede "(" without being a function call
_STRUCTURAL = frozenset("""
SELECT FROM WHERE AND OR XOR NOT IS IN EXISTS BETWEEN LIKE AS ON JOIN LEFT RIGHT INNER OUTER
CROSS STRAIGHT_JOIN UNION ALL DISTINCT BY HAVING CASE WHEN THEN ELSE END ANY SOME DIV MOD
""".split())
_KEYWORDS = _STRUCTURAL | frozenset("""
NULL TRUE FALSE UNKNOWN GROUP ORDER LIMIT OFFSET ASC DESC SUM COUNT MIN MAX AVG CAST SIGNED
UNSIGNED CHAR DECIMAL DATE TIME DATETIME INTERVAL DAY
""".split())
