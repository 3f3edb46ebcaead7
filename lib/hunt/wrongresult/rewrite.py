"""Rewriting one expression of a generated query: where it is, what it may be replaced with.

The oracles that rewrite a query (EET, CODDTest, Pinolo) let the generator
record every expression it writes (:class:`~lib.hunt.wrongresult.generator.Produced`)
and then replace one occurrence of one of them in the query's SQL.  Any
occurrence of a recorded text means the same thing wherever it appears --
the main query's aliases are ``t1``..``t3``, a subquery's ``s1``, ``s2``...
and a subquery's own aliases are defined inside its text -- so replacing it
with an equivalent expression keeps the query equivalent.  This module finds
an occurrence at token boundaries (:func:`replace_once`), the aliases an
expression needs from outside (:func:`free_aliases`), a scope holding only
those (:func:`own_scope`: a new expression built over it is valid wherever
the old one stood, an ON clause of an earlier join included), and which
expressions change their type when wrapped (:func:`type_sensitive`: ENUM,
SET and BIT columns become strings or numbers inside ``CASE``; a YEAR
column compared with a small number reads it as a year -- ``y = 5`` is true
for 2005 -- and ``CASE``/``COALESCE`` of it does not; a ZEROFILL column's
``00005`` is ``5`` inside ``CASE``), and which change their value with the
context they are read in (:func:`context_sensitive`: ``LEAST``/``GREATEST``;
:func:`date_arithmetic`: ``+ INTERVAL`` over a string).
"""
from __future__ import annotations

import re
from typing import Sequence

from .generator import Produced, Scope, SqlGenerator
from .schema import TableInfo
from .toplevel import closing_parenthesis

_ALIAS_REF_RE = re.compile(r"\b([ts]\d+)\.`((?:[^`]|``)+)`")
_ALIAS_DEF_RE = re.compile(r"\bAS ([ts]\d+)\b")
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_$`]")
# FLOAT: CASE WHEN TRUE THEN f END is a DOUBLE, and 1e15 stored in a FLOAT shows as 1e15
# there, 999999986991104 here (EET, hunt or18-sf5)
TYPE_SENSITIVE_TYPES = frozenset({"enum", "set", "bit", "year", "float"})
# LEAST and GREATEST compare their arguments by the context their value is read in
_CONTEXT_CALL_RE = re.compile(r"\s*(?:LEAST|GREATEST)\s*\(", re.IGNORECASE)
# date arithmetic: '2000-01-01' + INTERVAL 9 DAY is a string a temporal context reads as
# a DATETIME; COALESCE or CASE of it is a VARCHAR that TIME() parses as a time
_INTERVAL_RE = re.compile(r"\b(?:INTERVAL|DATE_ADD|DATE_SUB|ADDDATE|SUBDATE)\b", re.IGNORECASE)
_QUOTED_RE = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`]|``)*`")


def free_aliases(text: str) -> set[str]:
    """The table aliases text names but does not define (``AS s1`` inside it defines s1)."""
    used = {m.group(1) for m in _ALIAS_REF_RE.finditer(text)}
    return used - set(_ALIAS_DEF_RE.findall(text))


def is_independent(text: str) -> bool:
    """True when text names no table from outside it: its value is the same for every row
    of the query (a constant, or an uncorrelated subquery)."""
    return not free_aliases(text)


def visible_tables(scope: Scope) -> list[tuple[str, object]]:
    """(alias, table) pairs of the scope and the queries it is nested in."""
    out: list[tuple[str, object]] = []
    s: Scope | None = scope
    while s is not None:
        out += s.tables
        s = s.outer
    return out


def own_scope(produced: Produced) -> Scope:
    """A scope of only the tables produced's text names from outside: an expression built
    over it is valid wherever the text stands."""
    wanted = free_aliases(produced.text)
    tables: list[tuple[str, TableInfo]] = []
    s: Scope | None = produced.scope
    while s is not None:
        tables += [(a, t) for a, t in s.tables if a in wanted and a not in dict(tables)]
        s = s.outer
    return Scope(tables, rows=produced.scope.rows)


def context_sensitive(text: str) -> bool:
    """True when text is one call of LEAST or GREATEST (the call is the whole text).

    Their arguments are compared by the context the value is read in
    (documented: "If the return value is used in an INTEGER context ... they are
    compared as integers; ... in a REAL context ... as reals"): ``GREATEST('well',
    '0.5')`` is ``'well'`` as a string, and ``CAST(GREATEST('well', '0.5') AS
    DECIMAL(12,3))`` is 0.500 (the arguments compared as numbers, 0 and 0.5),
    while ``CAST((CASE WHEN TRUE THEN GREATEST('well', '0.5') END) AS
    DECIMAL(12,3))`` reads it as a string through the ``CASE`` and casts
    ``'well'``: 0.000 (EET, bench figure 7 over falcon_recovery.zz).  Wrapped in
    CASE, COALESCE or IF such a call loses the context of what stands around it."""
    m = _CONTEXT_CALL_RE.match(text)
    if not m:
        return False
    close = closing_parenthesis(text[m.end():])
    return close >= 0 and not text[m.end() + close + 1:].strip()


def date_arithmetic(text: str) -> bool:
    """True when text (outside its quoted literals and names) holds date arithmetic:
    ``+ INTERVAL``, ``- INTERVAL``, DATE_ADD, DATE_SUB, ADDDATE or SUBDATE.

    Over a string such a value is a string that a temporal context still reads as a
    DATETIME: ``TIME('2000-01-01' + INTERVAL 9 DAY)`` is 00:00:00, while
    ``TIME(COALESCE('2000-01-01' + INTERVAL 9 DAY, NULL))`` converts the VARCHAR
    '2000-01-10' as a time, 00:20:00 with warning 1292 (EET, hunt or19-sf8
    fad7d181c708): wrapped in CASE, COALESCE or IF it loses the context of what stands
    around it."""
    return bool(_INTERVAL_RE.search(_QUOTED_RE.sub("''", text)))


def type_sensitive(produced: Produced, tables: Sequence[TableInfo]) -> bool:
    """True when the text names an ENUM, SET, BIT, YEAR, FLOAT or ZEROFILL column (of any of
    tables by that name: a subquery's inside the text too): wrapped in CASE or COALESCE
    such a value changes type, loses its leading zeros or its column's conversion of
    constants (an ENUM compared with a
    number compares its index, a string does not; ``year_col = 5`` is true for 2005,
    ``COALESCE(year_col, NULL) = 5`` is not), so value rewrites leave it alone; so they
    leave a LEAST or GREATEST call (:func:`context_sensitive`) and date arithmetic
    (:func:`date_arithmetic`)."""
    if context_sensitive(produced.text) or date_arithmetic(produced.text):
        return True
    names = {m.group(2).replace("``", "`") for m in _ALIAS_REF_RE.finditer(produced.text)}
    return any(c.name in names and (c.data_type in TYPE_SENSITIVE_TYPES or c.zerofill)
               for t in tables for c in t.columns)


def occurrences(sql: str, text: str) -> list[int]:
    """Where text stands in sql as a whole expression (not inside a longer name)."""
    found = []
    start = sql.find(text)
    while start >= 0:
        end = start + len(text)
        before = sql[start - 1] if start > 0 else " "
        after = sql[end] if end < len(sql) else " "
        if not (_IDENT_CHAR.match(text[0]) and _IDENT_CHAR.match(before)) and \
                not (_IDENT_CHAR.match(text[-1]) and _IDENT_CHAR.match(after)) and before != ".":
            found.append(start)
        start = sql.find(text, start + 1)
    return found


def replace_once(sql: str, text: str, new: str, gen: SqlGenerator | None = None) -> str | None:
    """sql with one occurrence of text (a random one when gen is given, else the first)
    replaced by new; None when text does not stand in sql."""
    at = occurrences(sql, text)
    if not at:
        return None
    i = at[gen.rng.randrange(len(at))] if gen is not None else at[0]
    return sql[:i] + new + sql[i + len(text):]


def candidates(trace: Sequence[Produced], sql: str, kinds: Sequence[str]) -> list[Produced]:
    """The recorded expressions of these kinds that stand in sql and are no bare literal
    (duplicates of one text once)."""
    seen: set[str] = set()
    out = []
    for p in trace:
        if p.kind not in kinds or p.text in seen or not _compound_or_column(p.text):
            continue
        seen.add(p.text)
        if occurrences(sql, p.text):
            out.append(p)
    return out


def _compound_or_column(text: str) -> bool:
    """True for a column reference or an expression with an operator or a call: not a bare
    literal (rewriting a literal tests little and a number's text may stand inside another)."""
    return bool(_ALIAS_REF_RE.search(text)) or "(" in text
