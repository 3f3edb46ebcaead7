"""CODDTest (constant optimization driven testing): a query against itself with one part
replaced by the constant it evaluates to.

Zhang and Rigger, "Constant Optimization Driven Database System Testing"
(SIGMOD 2025): an expression that does not depend on the query's rows -- an
uncorrelated subquery, an expression over constants -- is evaluated on its
own (the auxiliary query) and replaced by its value; the folded query must
return the same rows, as multisets.  Variants (by what is folded):

- ``exists``: ``EXISTS (S)`` by ``TRUE`` or ``FALSE``;
- ``in``: ``x [NOT] IN (S)`` by ``x [NOT] IN (v1, v2...)`` of S's rows
  (``FALSE``/``TRUE`` when S is empty) -- never when x holds a division: its
  hidden digits take part in an IN list's comparison and not in the
  subquery's (``-2.25 / (k / 9.99)`` of -2e-8 is ``= 0`` and not ``IN (0,
  5)``; bench figure 7 over falcon_backlog.zz);
- ``scalar``: a scalar subquery ``(SELECT MIN(c) ...)`` or ``(SELECT
  COUNT(*) ...)`` by its value;
- ``value``: an expression over constants (``DATE_ADD(DATE'...', INTERVAL
  3 DAY)``, ``(3 + 5)``) by its value -- never one with a decimal division,
  whose value holds more digits than it shows (``CAST(128 / 3.0 AS DOUBLE)``
  is 42.666666667, ``CAST(42.6667 AS DOUBLE)`` is not);
- ``condition``: a condition over constants (a comparison of literals, an
  uncorrelated ``IN`` subquery) by 1, 0 or NULL;
- ``propagate`` (constant propagation): ``WHERE t1.c = L AND q`` with the
  integer column c (not BIT, YEAR or ZEROFILL: their text is no literal's)
  replaced by L everywhere else in the query.

A value becomes a literal of its own type, read from the result's
description: integers as they are, decimals as ``CAST(text AS DECIMAL(p,s))``
of their own precision and scale (a literal's smaller precision would change
the type of a CASE or COALESCE around it), ``DATE'...'``,
``TIMESTAMP'...'`` and ``TIME'...'`` with as many fraction digits as the
type has (so the folded value shows the same in a string), NULL as
``CAST(NULL AS type)``.  Never folded: strings (a literal's collation
derivation is not a column's: it would change which collation a comparison
uses), floats (their text form is not exact), TIMESTAMP values (time zone),
BIT and YEAR values; an IN list that would compare an indexed integer,
decimal or YEAR column with constants it cannot hold (the generator's
``key-constant`` rule); lists of more than :data:`MAX_LIST` values.  A check
whose fold is not possible is skipped (code :data:`UNFOLDABLE`).
"""
from __future__ import annotations

import datetime
import decimal
import re
from typing import Any, Sequence

from .execute import Connection, Outcome, run_query
from .generator import INT_LITERALS, GeneratorOptions, Produced, SqlGenerator
from .oracle import Check, OracleBase, Verdict
from .queries import aggregates, select_query, values
from .result import describe_rows, multiset_difference, render_rows
from .rewrite import is_independent, occurrences
from .schema import quote_name

UNFOLDABLE = -3       # skip code: the value has no literal of its type (or folding it is unsafe)
MAX_LIST = 200
# protocol type codes
INT_TYPES = frozenset({1, 2, 3, 8, 9})
DECIMAL_TYPES = frozenset({0, 246})
DATE_TYPE, TIME_TYPE, DATETIME_TYPE, NULL_TYPE = 10, 11, 12, 6
FOLDABLE_CLASSES = ("int", "dec", "date", "datetime", "time")


def literal(value: Any, type_code: int, decimals: int, length: int = 0,
            unsigned: bool = False) -> str | None:
    """value (of a result column of this type, scale, length and signedness) as a literal of
    the same type, or None when it has none (see the module docstring)."""
    if value is None:
        if type_code in INT_TYPES:
            return "CAST(NULL AS SIGNED)"
        if type_code in DECIMAL_TYPES:
            return f"CAST(NULL AS DECIMAL(65,{min(decimals, 30)}))"
        if type_code == DATE_TYPE:
            return "CAST(NULL AS DATE)"
        if type_code == DATETIME_TYPE:
            return f"CAST(NULL AS DATETIME({min(decimals, 6)}))"
        if type_code == TIME_TYPE:
            return f"CAST(NULL AS TIME({min(decimals, 6)}))"
        return "NULL" if type_code == NULL_TYPE else None
    if type_code in INT_TYPES and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if type_code in DECIMAL_TYPES and isinstance(value, decimal.Decimal):
        text = format(value, "f")
        text = text if "." in text else text + "."  # "2." is a DECIMAL, "2" an integer
        # the length holds a point when there is a scale, and a sign unless UNSIGNED (a
        # DECIMAL(10,0) UNSIGNED is 10 long: taken for a DECIMAL(9,0), 9999999999 was clipped)
        precision = length - (0 if unsigned else 1) - (1 if decimals else 0)
        if 0 < precision <= 65 and decimals <= 38 and decimals <= precision:
            return f"CAST({text} AS DECIMAL({precision},{decimals}))"  # the precision kept too
        return text
    if type_code == DATE_TYPE:
        text = value.isoformat() if isinstance(value, datetime.date) else str(value)
        return f"DATE'{text}'" if re.fullmatch(r"\d{4}-\d\d-\d\d", text) else None
    if type_code == DATETIME_TYPE:
        if isinstance(value, datetime.datetime):
            text = value.strftime("%Y-%m-%d %H:%M:%S")
            if decimals:
                text += "." + f"{value.microsecond:06d}"[:min(decimals, 6)]
        else:
            text = str(value)
        return f"TIMESTAMP'{text}'" if re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?",
                                                   text) else None
    if type_code == TIME_TYPE and isinstance(value, datetime.timedelta):
        sign = "-" if value < datetime.timedelta(0) else ""
        total = abs(value)
        seconds = total.days * 86400 + total.seconds
        text = f"{sign}{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
        if decimals:
            text += "." + f"{total.microseconds:06d}"[:min(decimals, 6)]
        return f"TIME'{text}'"
    return None


def _unsigned(outcome: Outcome) -> bool:
    """True when the first result column of outcome is UNSIGNED."""
    return bool(outcome.unsigned and outcome.unsigned[0])


class CODDTestOracle(OracleBase):
    """The CODDTest oracle (name ``coddtest``) on the first connection's server."""

    name = "coddtest"
    trace = True

    def __init__(self, options: GeneratorOptions | None = None,
                 statement_timeout: float = 10.0) -> None:
        super().__init__(options, statement_timeout)
        self._targets: dict[str, tuple[Produced, SqlGenerator]] = {}
        self._folded = ""

    def default_options(self) -> GeneratorOptions:
        """Both queries fetch every row: joins stay small."""
        return GeneratorOptions(max_join_rows=5_000)

    # ------------------------------------------------------------- generation
    def generate(self, gen: SqlGenerator) -> Check | None:
        """Q and the auxiliary query of the part to fold (the folded Q is built from its
        answer when the check runs)."""
        fc = gen.from_clause()
        if fc is None:
            return None
        if gen.chance(0.15):
            return self._propagate(gen, fc)
        where = f" WHERE {gen.predicate(fc.scope)}"
        if gen.chance(0.6):  # an uncorrelated subquery to fold, beside the generator's own
            sub = gen.note("predicate", "sub", gen.subquery_predicate(fc.scope, 1, False),
                           fc.scope)
            where += f" {gen.choice(('AND', 'OR'))} {sub}"
        sql, variant = select_query(gen, fc, where, rich=True)
        pool = self._foldable(gen, sql)
        if not pool:
            return None
        target = gen.choice(pool)
        kind = self._kind(target)
        aux = (f"SELECT EXISTS ({target.text})" if kind == "exists" else
               target.text if kind == "in" else f"SELECT {_select_item(target)}")
        self._targets[sql] = (target, gen)
        return Check((sql, aux), kind)

    @staticmethod
    def _kind(p: Produced) -> str:
        if p.kind == "subquery":
            return {"exists": "exists", "in": "in"}.get(p.cls, "scalar")
        return "condition" if p.kind == "predicate" else "value"

    def _foldable(self, gen: SqlGenerator, sql: str) -> list[Produced]:
        """The recorded parts of sql that do not depend on its rows and can be folded."""
        out = []
        seen: set[str] = set()
        for p in gen.trace or ():
            if p.text in seen or not is_independent(p.text):
                continue
            seen.add(p.text)
            if p.kind == "subquery":
                if p.cls not in ("exists", "in", "scalar", "count"):
                    continue
                if p.cls == "in" and p.parts[2] not in FOLDABLE_CLASSES:
                    continue
                if p.cls == "scalar" and p.parts[2] not in FOLDABLE_CLASSES:
                    continue
                wrapped = self._wrapped(p)
                if wrapped and occurrences(sql, wrapped):
                    out.append(p)
            elif p.kind == "value" and p.cls in FOLDABLE_CLASSES and "(" in p.text \
                    and "/" not in p.text:  # a division's value has digits it does not show
                if occurrences(sql, p.text):
                    out.append(p)
            elif p.kind == "predicate" and p.cls != "bare" and occurrences(sql, p.text):
                out.append(p)
        return out

    @staticmethod
    def _wrapped(p: Produced) -> str:
        """The text that stands in the query for a recorded subquery."""
        if p.cls == "exists":
            return f"EXISTS ({p.text})"
        if p.cls == "in":
            return f"({p.parts[0]} {p.parts[1]}IN ({p.text}))"
        return f"({p.text})"

    def _propagate(self, gen: SqlGenerator, fc: Any) -> Check | None:
        """``WHERE c = L AND q``: c an integer column (not BIT, not YEAR), L a literal."""
        cols = [(a, c) for a, c in fc.scope.columns("int")
                if c.data_type not in ("bit", "year") and not c.zerofill]  # 00005 is no 5
        if not cols:
            return None
        alias, col = gen.choice(cols)
        column = f"{alias}.{quote_name(col.name)}"
        value = gen.choice([v for v in INT_LITERALS[:12] if not v.startswith("-")])
        q = gen.predicate(fc.scope)
        if gen.chance(0.5):
            items = values(gen, fc.scope, gen.rng.randrange(1, 4))
            if column not in q and not any(column in i for i in items):
                items.append(column)
        else:  # aggregates over the rows: a bare column beside them would be NULL on none
            items = aggregates(gen, fc.scope, gen.rng.randrange(1, 3), True)
        sql = f"SELECT {', '.join(items)} FROM {fc.sql} WHERE ({column} = {value}) AND {q}"
        folded_items = [_swap(i, column, value) for i in items]
        folded = (f"SELECT {', '.join(folded_items)} FROM {fc.sql} WHERE ({column} = {value}) "
                  f"AND {_swap(q, column, value)}")
        if folded == sql:
            return None
        return Check((sql, f"/* coddtest: {column} = {value} propagated */ {folded}"), "propagate")

    # ------------------------------------------------------------- running
    def execute(self, conns: Sequence[Connection], check: Check) -> list[Outcome]:
        """Q, then the auxiliary query, then the folded Q built from its answer."""
        if check.variant == "propagate":
            return super().execute(conns, check)
        outcomes = []
        for sql in check.queries:
            self.stats.statements += 1
            outcome = run_query(conns[0], sql)
            outcomes.append(outcome)
            if outcome.failed:
                return outcomes
        folded = self.fold(check, outcomes[1])
        if folded is None:
            outcomes.append(Outcome(None, UNFOLDABLE, "the value has no literal of its type, "
                                                      "or folding it would meet a known bug"))
            return outcomes
        self.stats.statements += 1
        outcomes.append(run_query(conns[0], folded))
        self._folded = folded
        return outcomes

    def fold(self, check: Check, aux: Outcome) -> str | None:
        """Q with its part replaced by the auxiliary query's answer (None: not foldable)."""
        sql = check.queries[0]
        made = self._targets.get(sql)
        if made is None:
            return None
        target, gen = made
        rows = aux.rows or ()
        kind = check.variant
        if kind == "exists":
            value = rows[0][0] if rows else None
            new = "TRUE" if value else "FALSE"
            return _replace_first(sql, f"EXISTS ({target.text})", new)
        if kind == "in":
            outer, neg, _ = target.parts
            if "/" in outer:  # a division's hidden digits: = rounds them, an IN list does not
                return None
            if not rows:
                return _replace_first(sql, self._wrapped(target), "TRUE" if neg else "FALSE")
            if len(rows) > MAX_LIST:
                return None
            items = [literal(r[0], aux.types[0], aux.decimals[0], aux.lengths[0],
                             _unsigned(aux)) for r in rows]
            listed_items = [i for i in items if i is not None]
            if len(listed_items) != len(items):
                return None
            scope = next((p.scope for p in gen.trace or () if p.kind == "value" and p.text == outer),
                         target.scope)  # where the outer value was written
            if any(gen.constant_risk(scope, outer, i, "=") for i in listed_items
                   if not i.startswith("CAST(NULL")):
                return None
            listed = ", ".join(listed_items)
            return _replace_first(sql, self._wrapped(target), f"({outer} {neg}IN ({listed}))")
        if not rows or len(rows) != 1:
            return None
        value = literal(rows[0][0], aux.types[0], aux.decimals[0], aux.lengths[0],
                        _unsigned(aux))
        if value is None:
            return None
        if kind == "condition":
            return _replace_first(sql, target.text, f"({value})")
        if kind == "scalar":
            return _replace_first(sql, f"({target.text})", f"({value})")
        return _replace_first(sql, target.text, f"({value})")

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when Q and the folded Q return the same rows (as multisets)."""
        first = render_rows(outcomes[0].rows or ())
        last = render_rows(outcomes[-1].rows or ())
        only_first, only_last = multiset_difference(first, last)
        queries: tuple[str, ...] = check.queries
        if check.variant != "propagate":
            queries = (*check.queries, f"/* coddtest: {check.variant} folded */ {self._folded}")
        results = (describe_rows(first),
                   *([describe_rows(render_rows(outcomes[1].rows or ()))]
                     if len(outcomes) > 2 else []), describe_rows(last))
        if not only_first and not only_last:
            return Verdict("agree", results=results, queries=queries)
        return Verdict("differ", results=results, queries=queries,
                       detail=f"CODDTest ({check.variant}): rows only in Q: "
                              f"{describe_rows(only_first)}; rows only in the folded Q: "
                              f"{describe_rows(only_last)}")

    def _one(self, conns: Sequence[Connection], gen: SqlGenerator,
             names: dict[str, str]) -> Any:
        """As OracleBase's; the generator's targets are forgotten after each check."""
        try:
            return super()._one(conns, gen, names)
        finally:
            self._targets.clear()


def _select_item(p: Produced) -> str:
    """What the auxiliary query selects for a scalar subquery, value or condition."""
    return f"({p.text})" if p.kind == "subquery" else p.text


def _replace_first(sql: str, text: str, new: str) -> str | None:
    """sql with the first occurrence of text (at token boundaries) replaced."""
    at = occurrences(sql, text)
    if not at:
        return None
    return sql[:at[0]] + new + sql[at[0] + len(text):]


def _swap(text: str, column: str, value: str) -> str:
    """text with every occurrence of the column replaced by the value."""
    out = text
    for i in reversed(occurrences(text, column)):
        out = out[:i] + value + out[i + len(column):]
    return out
