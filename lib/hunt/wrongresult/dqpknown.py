"""The known wrong results DQP steers clear of: a plan, and which queries meet it under that
plan (KW46-NOT-NULL-RANGE-IS-UNKNOWN).

With ``optimizer_switch='not_null_range_scan=on'`` MariaDB 10.11 adds a range
``c IS NOT NULL`` over the index of each column c a WHERE or ON condition reads,
taking the condition to be false whenever c is NULL.  Below the AND and OR at
the condition's top it reads through every operator as if each were NULL on a
NULL argument, and some are not: the truth tests ``IS TRUE``, ``IS FALSE``,
``IS NOT UNKNOWN`` and ``x IS NOT NULL`` (``NOT (x IS NULL)`` is read as one)
below that top (``(b IS NOT NULL) IS NOT UNKNOWN``, ``(b IS NOT NULL) IN (0,
1)``, ``((b > 0) IS FALSE) <> 0.25``), an AND below it whose other side is a
constant (``((0 = 1) AND (b > 0)) = 0``), and ``CONCAT_WS``, ``CHAR``, ``ELT``,
``FIELD``, ``INTERVAL``, ``JSON_ARRAY``, ``MAKE_SET`` anywhere
(``CONCAT_WS('-', b, 'x') <> ''``, ``CHAR(b) IS NOT NULL``).  The rows where c
is NULL that meet the condition are then lost (``COUNT(*)`` 5, not 10).  It
stops at ``IS NULL``, ``<=>``, ``COALESCE``, ``IFNULL``, ``NULLIF``, ``IF``,
``CASE``, ``NOT``, ``XOR``, ``IS NOT TRUE``, ``IS NOT FALSE``, ``IS UNKNOWN`` and
subqueries, and at the top those tests are right (each shape checked on
10.11.19 and 10.11.18; docs/findings.md, KW46-NOT-NULL-RANGE-IS-UNKNOWN, case
``not_null_range_is_unknown``).

A query meets it (:func:`reads_null_away`) when a WHERE, ON or HAVING condition
of it has, inside anything but the ANDs and ORs at its top, an ``IS NOT NULL``,
a ``NOT (x IS NULL)``, an ``IS TRUE``, ``IS FALSE`` or ``IS NOT UNKNOWN`` or an
AND of the generator's (any AND, constant side or not), or anywhere in it a
``CONCAT_WS`` (the generator writes no other of those functions): DQP does not
run such a query under a plan that turns ``not_null_range_scan`` on, and runs
every other one under it (nor, :meth:`DQPOracle.avoided`, a query that reads a
view: a view's column may be one of those functions).  Read from the text: the generator parenthesises
every compound it writes, so each group is one operator's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from .schema import TableInfo
from .toplevel import closing_parenthesis, scan, split_top_level, unquoted

NOT_NULL_RANGE_SCAN_ON = "switch not_null_range_scan=on"
BNLH_PLANS = ("setting join_cache_level=3", "setting join_cache_level=4")
BIG_TABLES = "setting big_tables=1"
# plan name (as a finding's detail shows it) -> the known wrong result it meets
KNOWN_BUGS: Mapping[str, str] = MappingProxyType({
    NOT_NULL_RANGE_SCAN_ON: "KW46-NOT-NULL-RANGE-IS-UNKNOWN: with not_null_range_scan=on a "
                            "condition that reads a column through an operator that is not NULL "
                            "on NULL (IS NOT NULL, IS TRUE/FALSE/NOT UNKNOWN, AND below its top; "
                            "CONCAT_WS) is taken to imply the column IS NOT NULL: a range scan "
                            "over its index skips the NULLs ((b IS NOT NULL) IS NOT UNKNOWN: "
                            "COUNT(*) 5, not 10)",
    **{plan: "KW46-BNLH-PAD-SPACE: a hashed join buffer (BNLH, join_cache_level 3 and 4) "
             "looking up a string in a key of a PAD SPACE collation misses the key value with "
             "trailing spaces ('a' against 'a  ': 1 row of 2; case bnlh_pad_space, DQP or19a "
             "t7); left out of a query of two tables or more (a subquery's count) that has a "
             "bare character string column in an equality with a value naming another "
             "table's column, or left of or selected by an IN subquery"
       for plan in BNLH_PLANS},
    BIG_TABLES: "KW46-COUNT-DISTINCT-CONST through a const table's column: with big_tables=1 "
                "COUNT(DISTINCT t2.c) of a one-row MyISAM, Aria or MEMORY table (read as a "
                "constant) counts every joined row (COUNT(DISTINCT m3.a) FROM m2, m3 gives 2 "
                "for one value; DQP, 5c541b6d7379); left out of any query with a "
                "COUNT(DISTINCT ...) (which table is const is the optimizer's choice)",
})
# the generator's operators that are not NULL on a NULL argument and that the flag's walk
# reads through below a condition's top: a group ending in one of these tests, an AND;
# CONCAT_WS anywhere in a condition
_TESTS = (" IS NOT NULL", " IS TRUE", " IS FALSE", " IS NOT UNKNOWN")
_CONCAT_WS_RE = re.compile(r"\bCONCAT_WS\s*\(", re.IGNORECASE)
# top-level words of a SELECT: the clause a position belongs to is the last one before it
_CONDITION_WORDS = (" WHERE ", " ON ", " HAVING ")
_OTHER_WORDS = ("SELECT ", " FROM ", " JOIN ", " STRAIGHT_JOIN ", " GROUP BY ", " ORDER BY ",
                " LIMIT ", " UNION ", " INTERSECT ", " EXCEPT ", " WINDOW ")


@dataclass
class _Group:
    """A parenthesised part of a statement: where its text starts and ends (inside the
    parentheses), the group around it, and whether it is a subquery (``(SELECT ...``)."""

    start: int
    end: int = -1
    parent: "_Group | None" = None
    select: bool = False

    def text(self, sql: str) -> str:
        """The group's text, inside its parentheses."""
        return sql[self.start:self.end]


def _groups(sql: str) -> list[_Group]:
    """Every parenthesised group of sql outside quotes, outermost first; the statement
    itself is the first (a SELECT)."""
    top = _Group(0, len(sql), None, True)
    found, stack = [top], [top]
    for i, ch in unquoted(sql):
        if ch == "(":
            group = _Group(i + 1, -1, stack[-1], sql.startswith("SELECT ", i + 1))
            found.append(group)
            stack.append(group)
        elif ch == ")" and len(stack) > 1:
            stack.pop().end = i
    return [g for g in found if g.end >= 0]


def _kind(sql: str, group: _Group) -> str:
    """'and' or 'or' for a group of the generator's AND or OR of two conditions, else ''."""
    text = group.text(sql)
    if group.select or len(split_top_level(text, " BETWEEN ")) > 1:
        return ""
    if len(split_top_level(text, " AND ")) > 1:
        return "and"
    return "or" if len(split_top_level(text, " OR ")) > 1 else ""


def _in_condition(sql: str, group: _Group, at: int) -> tuple[bool, bool]:
    """(whether position at, whose innermost group is group, is in a WHERE, ON or HAVING
    condition of its SELECT; whether every group around it up to that SELECT is an AND or
    an OR, so that only the condition's truth counts there)."""
    chain = True
    while not group.select and group.parent is not None:
        chain = chain and bool(_kind(sql, group))
        at = group.start - 1  # the group's opening parenthesis, in the group around it
        group = group.parent
    body = group.text(sql)
    offset = at - group.start
    last, condition = -1, False
    for words, is_condition in ((_CONDITION_WORDS, True), (_OTHER_WORDS, False)):
        for word in words:
            for cut in scan(body, word).cuts:
                if last < cut < offset:
                    last, condition = cut, is_condition
    return condition, chain


def reads_null_away(sql: str) -> bool:
    """True when a query may meet KW46-NOT-NULL-RANGE-IS-UNKNOWN under not_null_range_scan=on:
    a WHERE, ON or HAVING condition of it holds, below the AND and OR at its top, an ``x IS
    NOT NULL``, a ``NOT (x IS NULL)``, a truth test ``IS TRUE``, ``IS FALSE`` or ``IS NOT
    UNKNOWN`` or an AND, or anywhere a ``CONCAT_WS`` (see the module docstring)."""
    groups = _groups(sql)
    for group in groups[1:]:
        text = group.text(sql).rstrip()
        if not (text.endswith(_TESTS) or _kind(sql, group) == "and" or _not_is_null(text)):
            continue
        if group.parent is not None:
            condition, chain = _in_condition(sql, group.parent, group.start - 1)
            if condition and not chain:
                return True
    for m in _CONCAT_WS_RE.finditer(sql):
        inner = max((g for g in groups if g.start <= m.start() < g.end), key=lambda g: g.start)
        if _in_condition(sql, inner, m.start())[0]:
            return True
    return False


def _not_is_null(text: str) -> bool:
    """True for the text of a group ``NOT (x IS NULL)``: the server reads it as x IS NOT NULL."""
    if not text.startswith("NOT ("):
        return False
    inner = text[len("NOT ("):]
    end = closing_parenthesis(inner)
    if end < 0 or inner[end + 1:].strip():
        return False
    parts = split_top_level(inner[:end], " IS NULL")
    return len(parts) > 1 and not parts[-1].strip()


_COLUMN_RE = re.compile(r"\b([ts]\d+)\.`((?:[^`]|``)+)`")
_ALIAS_RE = re.compile(r"`((?:[^`]|``)+)`\.`((?:[^`]|``)+)` AS ([ts]\d+)\b")
_COUNT_DISTINCT_RE = re.compile(r"\bCOUNT\s*\(\s*DISTINCT\b", re.IGNORECASE)
# character string types whose collation may PAD SPACE (the generator knows no collation)
_PAD_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})


def _string_columns(sql: str, tables: Sequence[TableInfo]) -> set[tuple[str, str]]:
    """(alias, column) of every column sql names that is a character string column of the
    table an alias of sql stands for (an alias a subquery reuses: of any of its tables)."""
    by_name = {(t.schema, t.name): t for t in tables}
    out: set[tuple[str, str]] = set()
    for m in _ALIAS_RE.finditer(sql):
        table = by_name.get((m.group(1).replace("``", "`"), m.group(2).replace("``", "`")))
        if table is not None:
            out |= {(m.group(3), c.name) for c in table.columns if c.data_type in _PAD_TYPES}
    return out


def joins_pad_strings(sql: str, tables: Sequence[TableInfo]) -> bool:
    """True when a query may meet KW46-BNLH-PAD-SPACE under join_cache_level 3 or 4: it reads
    two tables or more (its subqueries' too: a semi-join joins them) and a bare character
    string column of it stands beside ``=`` or ``<=>`` in a parenthesised group (or the
    statement) naming another alias's column, or left of ``IN (SELECT`` or selected by
    ``(SELECT c FROM`` (a hashed join buffer looks a string up in a PAD SPACE key)."""
    aliases = {m.group(3) for m in _ALIAS_RE.finditer(sql)}
    if len(aliases) < 2:
        return False
    strings = _string_columns(sql, tables)
    if not strings:
        return False
    groups = _groups(sql)
    for m in _COLUMN_RE.finditer(sql):
        if (m.group(1), m.group(2).replace("``", "`")) not in strings:
            continue
        before, after = sql[:m.start()], sql[m.end():]
        if before.endswith("(SELECT ") or after.startswith((" IN (SELECT", " NOT IN (SELECT")):
            return True
        if not (before.endswith((" = ", " <=> ")) or after.startswith((" = ", " <=> "))):
            continue
        inner = max((g for g in groups if g.start <= m.start() < g.end), key=lambda g: g.start)
        if any(o.group(1) != m.group(1) for o in _COLUMN_RE.finditer(inner.text(sql))):
            return True
    return False


def counts_distinct(sql: str, tables: Sequence[TableInfo] = ()) -> bool:
    """True when a query has a ``COUNT(DISTINCT ...)``: under big_tables=1 it may meet
    KW46-COUNT-DISTINCT-CONST through a const table's column."""
    return bool(_COUNT_DISTINCT_RE.search(sql))


# plan name -> the queries that meet its known bug, given the generator's tables (a plan
# without an entry: every query)
MEETS: Mapping[str, Callable[[str, Sequence[TableInfo]], bool]] = MappingProxyType({
    NOT_NULL_RANGE_SCAN_ON: lambda sql, tables: reads_null_away(sql),
    **{plan: joins_pad_strings for plan in BNLH_PLANS},
    BIG_TABLES: counts_distinct,
})


def meets_known_bug(plan: str, sql: str, tables: Sequence[TableInfo] = ()) -> bool:
    """True when sql run under the plan may meet a known bug: the queries :data:`MEETS`
    says for a plan it has a test for (tables: the generator's, whose column types some
    tests read), every query for any other plan."""
    test = MEETS.get(plan)
    return test is None or test(sql, tables)
