"""RQG's transformers: a SELECT rewritten into statements whose rows must relate to its own.

The ``Transformer`` validator (:mod:`lib.randgen.validators`) runs every
deterministic SELECT of a load again as each transformer rewrites it and
compares: :func:`transform` gives a :class:`TransformPlan` -- the statements,
which of them return rows to check and how (:data:`RELATIONS`), and the
statements that clean up whatever happened.  The transformers (as
``MariaDB/randgen``'s ``lib/GenTest/Transform/``, for MariaDB 10.11):

- the same rows (``same``): ``ExecuteAsDerived`` (``SELECT * FROM (q)``),
  ``ExecuteAsView``, ``ExecuteAsCTE`` (``WITH ... AS (q)``),
  ``ExecuteAsPreparedOnce``, ``ExecuteAsPreparedTwice`` (both EXECUTEs),
  ``ExecuteAsExecuteImmediate``, ``ExecuteAsSPTwice`` (a procedure CALLed
  twice), ``ExecuteAsInsertSelect`` (``CREATE TABLE ... AS q``, then
  ``INSERT ... q`` into it again: its rows each time),
  ``ExecuteAsDeleteReturning`` (``DELETE ... RETURNING *`` of such a table),
  ``ExecuteAsSelectItem`` (``SELECT (q)`` of a one-value result),
  ``OrderBy`` (``ORDER BY 1``), ``SelectOption`` (``SQL_BIG_RESULT``,
  ``SQL_SMALL_RESULT``, ``SQL_BUFFER_RESULT``), ``StraightJoin``,
  ``NullIf`` (``NULLIF(a, b)`` as ``IF((a) = (b), NULL, a)``),
  ``LimitIncrease`` (a LIMIT far beyond the rows), and the plan changers
  ``DisableOptimizations`` (every optimizer_switch flag off but
  ``in_to_exists``), ``EnableOptimizations`` (every flag on),
  ``DisableJoinCache`` (``join_cache_level=0``) and ``DisableChosenPlan``
  (EXPLAIN's plan read, and the switch that forbids a part of it set:
  ``firstmatch=off`` when it says FirstMatch...), each as ``SET STATEMENT ...
  FOR q``;
- set operations: ``ExecuteAsUnion`` (``q UNION ALL (q LIMIT 0)``: same;
  ``q UNION q``: distinct; ``q UNION ALL q``: every row twice),
  ``ExecuteAsIntersect`` (``q INTERSECT q``: distinct; ``q INTERSECT ALL q``:
  same; with ``q LIMIT 0``: empty), ``ExecuteAsExcept`` (``q EXCEPT q`` and
  ``q EXCEPT ALL q``: empty; ``q EXCEPT (q LIMIT 0)``: distinct);
- ``Distinct`` (``SELECT DISTINCT``: distinct), ``Count`` (``SELECT COUNT(*)
  FROM (q)``: the row count), ``Having`` (HAVING dropped: a superset).

Distinct rows are compared loosely for strings: under a case- or
accent-insensitive collation DISTINCT keeps one of ``'a'`` and ``'A'`` (which
one depends on the plan), so every distinct row must be one of q's rows and
every row of q must have a distinct row equal to it ignoring case, accents
and trailing spaces.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

TRANSFORMERS = ("Distinct", "ExecuteAsDerived", "ExecuteAsView", "ExecuteAsPreparedOnce",
                "Count", "OrderBy", "ExecuteAsPreparedTwice", "ExecuteAsExecuteImmediate",
                "ExecuteAsSPTwice", "ExecuteAsCTE", "ExecuteAsInsertSelect",
                "ExecuteAsDeleteReturning", "ExecuteAsSelectItem", "ExecuteAsUnion",
                "ExecuteAsIntersect", "ExecuteAsExcept", "SelectOption", "StraightJoin",
                "NullIf", "LimitIncrease", "Having", "DisableOptimizations",
                "EnableOptimizations", "DisableJoinCache", "DisableChosenPlan")
RELATIONS = ("same", "distinct", "count", "twice", "empty", "superset")
_ORDER_RE = re.compile(r"\bORDER\s+BY\b", re.I)
_LIMIT_RE = re.compile(r"\bLIMIT\b", re.I)
_SELECT_HEAD_RE = re.compile(r"^\s*SELECT\s+(DISTINCT\s+|DISTINCTROW\s+|ALL\s+)?", re.I)
_MODIFIER_RE = re.compile(r"\b(SQL_BIG_RESULT|SQL_SMALL_RESULT|SQL_BUFFER_RESULT|STRAIGHT_JOIN|"
                          r"HIGH_PRIORITY|SQL_CALC_FOUND_ROWS)\b", re.I)
# EXPLAIN EXTENDED's words -> the switch that forbids that part of the plan (randgen's
# DisableChosenPlan)
EXPLAIN_SWITCHES = (
    ("sort_intersect", "optimizer_switch='index_merge_sort_intersection=off'"),
    ("intersect", "optimizer_switch='index_merge_intersection=off'"),
    ("firstmatch", "optimizer_switch='firstmatch=off'"),
    ("<expr_cache>", "optimizer_switch='subquery_cache=off'"),
    ("materializ", "optimizer_switch='materialization=off,in_to_exists=on'"),
    ("start temporary", "optimizer_switch='semijoin=off'"),
    ("loosescan", "optimizer_switch='loosescan=off'"),
    ("<subquery", "optimizer_switch='materialization=off,in_to_exists=on'"),
    ("<exists>", "optimizer_switch='in_to_exists=off,materialization=on'"),
    ("bnlh", "optimizer_switch='join_cache_hashed=off'"),
    ("bkah", "optimizer_switch='join_cache_hashed=off'"),
    ("bka", "optimizer_switch='join_cache_bka=off'"),
    ("incremental", "optimizer_switch='join_cache_incremental=off'"),
    ("join buffer", "join_cache_level=0"),
    ("rowid-ordered", "optimizer_switch='mrr=off'"),
    ("key-ordered", "optimizer_switch='mrr_sort_keys=off'"),
    ("index condition", "optimizer_switch='index_condition_pushdown=off'"),
    ("derived", "optimizer_switch='derived_merge=off'"),
    ("rowid filter", "optimizer_switch='rowid_filter=off'"),
    ("using index for group-by", "optimizer_switch='index_merge=off'"),
)


@dataclass(frozen=True)
class TransformPlan:
    """What a transformer runs: statements, (statement index, relation) checks, cleanup."""

    statements: tuple[str, ...]
    checks: tuple[tuple[int, str], ...]
    cleanup: tuple[str, ...] = ()


def _one(sql: str, relation: str = "same") -> TransformPlan:
    """A plan of one statement checked with relation."""
    return TransformPlan((sql,), ((0, relation),))


def _after_select(q: str, keyword: str) -> str:
    """q with keyword after SELECT [DISTINCT]."""
    m = _SELECT_HEAD_RE.match(q)
    if m is None:
        return q
    return q[:m.end()] + keyword + " " + q[m.end():]


def _quote(text: str) -> str:
    """A string literal of text."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def split_call_args(text: str, start: int) -> tuple[list[str], int] | None:
    """The comma-separated arguments of the call whose '(' is at start, and the index after
    its ')': quotes and nested parentheses respected; None when unbalanced."""
    depth, quote, args, current = 0, "", [], ""
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            current += ch
            if ch == "\\" and i + 1 < len(text):
                current += text[i + 1]
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
            current += ch
        elif ch == "(":
            depth += 1
            if depth > 1:
                current += ch
        elif ch == ")":
            depth -= 1
            if depth == 0:
                args.append(current.strip())
                return args, i + 1
            current += ch
        elif ch == "," and depth == 1:
            args.append(current.strip())
            current = ""
        else:
            current += ch
        i += 1
    return None


def rewrite_nullif(q: str) -> str | None:
    """q with every NULLIF(a, b) as IF((a) = (b), NULL, a); None when it has none."""
    out, changed, pos = "", False, 0
    for m in re.finditer(r"\bNULLIF\s*\(", q, re.I):
        if m.start() < pos:
            continue
        parsed = split_call_args(q, m.end() - 1)
        if parsed is None or len(parsed[0]) != 2:
            return None
        (a, b), end = parsed
        inner_a, inner_b = rewrite_nullif(a) or a, rewrite_nullif(b) or b
        out += q[pos:m.start()] + f"IF(({inner_a}) = ({inner_b}), NULL, {inner_a})"
        pos = end
        changed = True
    return out + q[pos:] if changed else None


@dataclass(frozen=True)
class _Query:
    """The SELECT a transformer rewrites, and what its rewrites look at."""

    name: str              # the transformer
    q: str                 # the SELECT without its trailing semicolon
    ordered: bool          # it has an ORDER BY
    limited: bool          # it has a LIMIT
    suffix: str            # the thread's number: its objects' names
    optimizer_switch: str
    explain: str


def transform(name: str, sql: str, thread: int, optimizer_switch: str = "",
              explain: str = "") -> TransformPlan | None:
    """The plan of transformer name for a deterministic SELECT (None: it does not apply).

    optimizer_switch: the session's ``@@optimizer_switch`` (for the plan
    changers); explain: EXPLAIN EXTENDED's text of sql (DisableChosenPlan).
    """
    q = sql.strip().rstrip(";")
    query = _Query(name, q, bool(_ORDER_RE.search(q)), bool(_LIMIT_RE.search(q)), f"{thread}",
                   optimizer_switch, explain)
    for group in (_executed_as, _set_operations, _rewritten, _plan_changed):
        plan = group(query)  # each group knows its own names only
        if plan is not None:
            return plan
    return None


def _executed_as(t: _Query) -> TransformPlan | None:
    """The plans that run the SELECT another way: DISTINCT, as a derived table, a view,
    a CTE, prepared, in a procedure, through a table, as a select item, counted."""
    name, q, suffix = t.name, t.q, t.suffix
    if name == "Distinct":
        if re.match(r"^\s*SELECT\s+DISTINCT\b", q, re.I):
            return None
        return _one(re.sub(r"^\s*SELECT\b", "SELECT DISTINCT", q, count=1, flags=re.I), "distinct")
    if name == "ExecuteAsDerived":
        return _one(f"SELECT * FROM ( {q} ) AS kewpie_derived")
    if name == "ExecuteAsView":
        view = f"kewpie_transform_view_{suffix}"
        return TransformPlan((f"CREATE OR REPLACE VIEW {view} AS {q}", f"SELECT * FROM {view}"),
                             ((1, "same"),), (f"DROP VIEW IF EXISTS {view}",))
    if name == "ExecuteAsCTE":
        return _one(f"WITH kewpie_cte AS ( {q} ) SELECT * FROM kewpie_cte")
    if name in ("ExecuteAsPreparedOnce", "ExecuteAsPreparedTwice"):
        stmt = f"kewpie_stmt_{suffix}"
        twice = name.endswith("Twice")
        runs = (f"EXECUTE {stmt}",) * (2 if twice else 1)
        return TransformPlan((f"PREPARE {stmt} FROM {_quote(q)}", *runs),
                             tuple((i, "same") for i in range(1, len(runs) + 1)),
                             (f"DEALLOCATE PREPARE {stmt}",))
    if name == "ExecuteAsExecuteImmediate":
        return _one(f"EXECUTE IMMEDIATE {_quote(q)}")
    if name == "ExecuteAsSPTwice":
        proc = f"kewpie_transform_sp_{suffix}"
        return TransformPlan((f"DROP PROCEDURE IF EXISTS {proc}",
                              f"CREATE PROCEDURE {proc}() {q}", f"CALL {proc}()", f"CALL {proc}()"),
                             ((2, "same"), (3, "same")), (f"DROP PROCEDURE IF EXISTS {proc}",))
    if name in ("ExecuteAsInsertSelect", "ExecuteAsDeleteReturning"):
        table = f"kewpie_transform_table_{suffix}"
        if name == "ExecuteAsDeleteReturning":
            return TransformPlan((f"DROP TABLE IF EXISTS {table}", f"CREATE TABLE {table} AS {q}",
                                  f"DELETE FROM {table} RETURNING *"),
                                 ((2, "same"),), (f"DROP TABLE IF EXISTS {table}",))
        return TransformPlan((f"DROP TABLE IF EXISTS {table}", f"CREATE TABLE {table} AS {q}",
                              f"SELECT * FROM {table}", f"DELETE FROM {table}",
                              f"INSERT INTO {table} {q}", f"SELECT * FROM {table}"),
                             ((2, "same"), (5, "same")), (f"DROP TABLE IF EXISTS {table}",))
    if name == "ExecuteAsSelectItem":
        return _one(f"SELECT ( {q} ) AS kewpie_item")  # applied to one-value results only
    if name == "Count":
        return _one(f"SELECT COUNT(*) FROM ( {q} ) AS kewpie_count", "count")
    return None


def _set_operations(t: _Query) -> TransformPlan | None:
    """The plans of the SELECT in UNION, INTERSECT and EXCEPT with itself or with nothing."""
    name, q, limited = t.name, t.q, t.limited
    if name in ("ExecuteAsUnion", "ExecuteAsIntersect", "ExecuteAsExcept"):
        none = f"( {q} ) LIMIT 0" if limited else f"{q} LIMIT 0"
        empty_q = f"SELECT * FROM ( {none} ) AS kewpie_none"
        both = f"( {q} )"
        if name == "ExecuteAsUnion":
            return TransformPlan((f"{both} UNION ALL ( {empty_q} )", f"{both} UNION {both}",
                                  f"{both} UNION ALL {both}"),
                                 ((0, "same"), (1, "distinct"), (2, "twice")))
        if name == "ExecuteAsIntersect":
            return TransformPlan((f"{both} INTERSECT {both}", f"{both} INTERSECT ALL {both}",
                                  f"{both} INTERSECT ( {empty_q} )"),
                                 ((0, "distinct"), (1, "same"), (2, "empty")))
        return TransformPlan((f"{both} EXCEPT {both}", f"{both} EXCEPT ALL {both}",
                              f"{both} EXCEPT ( {empty_q} )"),
                             ((0, "empty"), (1, "empty"), (2, "distinct")))
    return None


def _rewritten(t: _Query) -> TransformPlan | None:
    """The plans that rewrite the SELECT's text: ORDER BY, options, STRAIGHT_JOIN,
    NULLIF, LIMIT, HAVING."""
    name, q, ordered, limited = t.name, t.q, t.ordered, t.limited
    if name == "OrderBy":
        if ordered or limited or re.search(r"\b(UNION|INTERSECT|EXCEPT)\b", q, re.I):
            return None
        return _one(f"{q} ORDER BY 1")
    if name == "SelectOption":
        if _MODIFIER_RE.search(q):
            return None
        options = ("SQL_BIG_RESULT", "SQL_SMALL_RESULT", "SQL_BUFFER_RESULT")
        return TransformPlan(tuple(_after_select(q, o) for o in options),
                             tuple((i, "same") for i in range(len(options))))
    if name == "StraightJoin":
        if _MODIFIER_RE.search(q) or limited or not re.search(r"\bJOIN\b|,", q, re.I):
            return None
        return _one(_after_select(q, "STRAIGHT_JOIN"))
    if name == "NullIf":
        rewritten = rewrite_nullif(q)
        return _one(rewritten) if rewritten else None
    if name == "LimitIncrease":
        if re.search(r"\bOFFSET\b|\bLIMIT\s+\d+\s*,", q, re.I):
            return None
        if limited:
            bigger = re.sub(r"\bLIMIT\s+\d+\s*$", "LIMIT 4294836225", q, flags=re.I)
            return _one(bigger, "superset") if bigger != q else None
        return _one(f"{q} LIMIT 4294836225")
    if name == "Having":
        if len(re.findall(r"\bSELECT\b", q, re.I)) != 1 or len(re.findall(r"\bHAVING\b", q, re.I)) != 1:
            return None
        m = re.search(r"\bHAVING\b", q, re.I)
        if m is None or ordered or limited:
            return None
        return _one(q[:m.start()].rstrip(), "superset")
    return None


def _plan_changed(t: _Query) -> TransformPlan | None:
    """The plans that run the SELECT under other optimizer settings."""
    name, q, optimizer_switch, explain = t.name, t.q, t.optimizer_switch, t.explain
    if name in ("DisableOptimizations", "EnableOptimizations"):
        flags = [f.partition("=")[0] for f in optimizer_switch.split(",") if "=" in f]
        if not flags:
            return None
        if name == "DisableOptimizations":
            setting = ",".join(f"{f}={'on' if f == 'in_to_exists' else 'off'}" for f in flags)
        else:
            setting = ",".join(f"{f}=on" for f in flags)
        return _one(f"SET STATEMENT optimizer_switch='{setting}' FOR {q}")
    if name == "DisableJoinCache":
        return _one(f"SET STATEMENT join_cache_level=0 FOR {q}")
    if name == "DisableChosenPlan":
        words = explain.lower()
        chosen = [s for w, s in EXPLAIN_SWITCHES if w in words]
        if not chosen:
            return None
        unique = list(dict.fromkeys(chosen))
        return TransformPlan(tuple(f"SET STATEMENT {s} FOR {q}" for s in unique),
                             tuple((i, "same") for i in range(len(unique))))
    return None


def _loose(value: str) -> str:
    """A string as a case- and accent-insensitive collation with PAD SPACE sees it."""
    text = unicodedata.normalize("NFKD", value)
    return "".join(c for c in text if not unicodedata.combining(c)).casefold().rstrip(" ")


def relation_holds(relation: str, original: Sequence[Sequence[Any]], got: Sequence[Sequence[Any]],
                   norm: Callable[[Any], str]) -> bool:
    """True when the rows got stand in relation to the original rows (each value compared as
    norm renders it)."""
    first = [tuple(norm(v) for v in row) for row in original]
    second = [tuple(norm(v) for v in row) for row in got]
    if relation == "same":
        return Counter(first) == Counter(second)
    if relation == "twice":
        return Counter(first + first) == Counter(second)
    if relation == "empty":
        return not second
    if relation == "count":
        return second == [(norm(len(first)),)]
    if relation == "superset":
        return not (Counter(first) - Counter(second))
    if relation == "distinct":
        if len(set(second)) != len(second) or not set(second) <= set(first):
            return False
        covered = {tuple(_loose(v) for v in row) for row in second}
        return all(tuple(_loose(v) for v in row) in covered for row in first)
    raise ValueError(f"unknown relation {relation!r}")


def describe_relation(relation: str) -> str:
    """What a relation expects, in words (for a difference's report)."""
    return {"same": "the same rows", "twice": "every row twice", "empty": "no row",
            "count": "the row count", "superset": "at least the rows",
            "distinct": "the distinct rows"}.get(relation, relation)
