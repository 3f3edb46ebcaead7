"""Whole SELECTs over a generated FROM clause, for the oracles that compare one query with
itself under another plan, on other tables or rewritten (differential, DQP, EET, Radar).

:func:`select_query` builds one deterministic SELECT in one of its variants:

- ``plain``: values of every class (optionally a WHERE);
- ``aggregate``: COUNT, SUM/AVG of integers and decimals, MIN/MAX of numbers
  and temporal values, BIT_AND/OR/XOR;
- ``grouped``: ``GROUP BY`` values that are not strings, with aggregates;
- ``distinct``: ``DISTINCT`` values that are not strings;
- ``ordered``: ``ORDER BY`` the values and then every table's primary key (a
  total order), with a ``LIMIT``.

With ``rich`` (the oracles of issue 46; the differential oracle keeps the
first five) also:

- ``having``: ``GROUP BY`` with a ``HAVING`` over the keys and aggregates;
- ``window``: values and window functions whose result is deterministic:
  ``ROW_NUMBER``/``LAG``/``LEAD``/``FIRST_VALUE``/``NTILE`` and framed
  aggregates only over a total order (the values, then every primary key),
  ``RANK``/``DENSE_RANK``/``CUME_DIST``/``PERCENT_RANK`` and unframed
  ``COUNT``/``SUM``/``MIN``/``MAX`` over any partition;
- ``union``: two SELECTs of the same FROM with other WHEREs, ``UNION ALL``,
  or ``UNION``/``INTERSECT``/``EXCEPT`` [``ALL``] of values that are not
  strings (which of two equal strings a set operation keeps depends on the
  plan).

What every variant avoids: strings where a plan picks one of several equal
values (DISTINCT, GROUP BY, MIN/MAX, set operations: collation ties), floats
in SUM/AVG (their rounding depends on the order rows are added in),
``LIMIT`` without a total order, non-deterministic functions.
"""
from __future__ import annotations

import re
from typing import Sequence

from .generator import CLASSES, FromClause, Scope, SqlGenerator
from .schema import free_aliases, quote_name

NOT_STR = tuple(c for c in CLASSES if c != "str")
_COLUMN_RE = re.compile(r"\b[ts]\d+\.`")
_COLUMN_NAME_RE = re.compile(r"\b[ts]\d+\.`((?:[^`]|``)+)`")
_BARE_COLUMN_RE = re.compile(r"[ts]\d+\.`(?:[^`]|``)+`")
_MAIN_COLUMN_RE = re.compile(r"\bt\d+\.`")  # a column of the main query's FROM clause
MINMAX_CLASSES = ("int", "dec", "date", "datetime", "time", "year")
NUMBER_CLASSES = ("int", "dec", "float")
WIDE_DECIMAL = 43   # digits: SUM of a DECIMAL(p, s) is a DECIMAL(p + 22, s), at most 65
SET_OPERATIONS = ("UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL")


def exact_value(gen: SqlGenerator, scope: Scope, cls: str) -> str:
    """A value of the class without a decimal division: ``x / y`` carries more digits than
    its type says until it is stored, so grouped, aggregated, compared for DISTINCT or
    stored in a temporary table by one plan and not by another it may differ in its last
    digits (documented precision behaviour, not a bug); a column or literal after four
    tries.  Arithmetic on a DECIMAL wider than :data:`WIDE_DECIMAL` digits is left out
    too (at the type's limit, ``d - -0.5`` does not fit the type: shown it is right,
    stored it is clipped).  A value naming a BIT column is written ``(v + 0)`` (its stored
    form changes type; the known bug bit-group), and so is a YEAR value that is no bare
    column (grouped, the year 0000 of a const table becomes 2000: year-zero-group)."""
    text = gen.leaf(scope, cls)
    for _ in range(4):
        made = gen.value(scope, cls)
        if "/" not in made and (_BARE_COLUMN_RE.fullmatch(made) or not _names_wide(gen, made)):
            text = made
            break
    if cls == "int" and _names_bit(gen, text):
        # stored, a BIT value changes type (bytes in a UNION or a derived table, a number in
        # a plain SELECT: MIN(COALESCE(NULL, b))), and a BIT column grouped through a sort
        # meets the known bug bit-group
        return f"({text} + 0)"
    if cls == "year" and gen.avoids("year-zero-group") and not _BARE_COLUMN_RE.fullmatch(text):
        return f"({text} + 0)"
    return text


def _names_wide(gen: SqlGenerator, text: str) -> bool:
    """True when text names a DECIMAL column wider than :data:`WIDE_DECIMAL` digits (in one
    of the generator's tables)."""
    names = {m.group(1).replace("``", "`") for m in _COLUMN_NAME_RE.finditer(text)}
    return any(c.name in names and c.precision > WIDE_DECIMAL for t in gen.tables
               for c in t.columns)


def _names_bit(gen: SqlGenerator, text: str) -> bool:
    """True when text names a column that is BIT in one of the generator's tables."""
    names = {m.group(1).replace("``", "`") for m in _COLUMN_NAME_RE.finditer(text)}
    return any(c.name in names and c.data_type == "bit" for t in gen.tables for c in t.columns)


def column_value(gen: SqlGenerator, scope: Scope, classes: Sequence[str],
                 exact: bool = False) -> str | None:
    """A value of one of the classes that names a column of the main query: COUNT(DISTINCT
    ...), MIN and MAX of a constant meet known bugs (count-distinct-constant,
    minmax-constant-empty), and a value that names only an uncorrelated subquery's columns
    is a constant too (``MAX(IF(NOT EXISTS (SELECT ... s1.c ...), 255, 9))`` over an empty
    join is 255: session 10's 78e7c6bcbc55); None when the scope has no column of these
    classes."""
    present = [c for c in scope.classes() if c in classes]
    if not present:
        return None
    cls = gen.choice(present)
    text = ""
    for _ in range(4):
        text = exact_value(gen, scope, cls) if exact else gen.value(scope, cls)
        if _MAIN_COLUMN_RE.search(text) or not (gen.avoids("count-distinct-constant")
                                           or gen.avoids("minmax-constant-empty")):
            return text
    column = gen.column(scope, cls)
    if column is None:
        return None
    col = gen.bare_column(scope, column)
    return f"({column} + 0)" if col is not None and col.data_type == "bit" else column


def summable(gen: SqlGenerator, scope: Scope, exact: bool = False) -> str | None:
    """A value to SUM or AVG: of an integer or decimal class, naming no DECIMAL column wider
    than :data:`WIDE_DECIMAL` digits (the sum of a few DECIMAL(65,30) values at their limit
    does not fit the type: shown directly it is right, stored -- a derived table, a
    temporary table of one plan and not another -- it is clipped); None after four tries."""
    for _ in range(4):
        cls = gen.choice(("int", "dec"))
        text = exact_value(gen, scope, cls) if exact else gen.value(scope, cls)
        if not _names_wide(gen, text):
            return text
    return None


def avg_argument(gen: SqlGenerator, text: str) -> str:
    """text as AVG's argument: ``(text + 0)`` unless it is a bare column, while the generator
    avoids the known int-precision bug (an integer function's DECIMAL precision a digit
    short: a stored AVG of it is clipped; adding 0 gives the precision back)."""
    if not gen.avoids("int-precision") or _BARE_COLUMN_RE.fullmatch(text):
        return text
    return f"({text} + 0)"


def values(gen: SqlGenerator, scope: Scope, n: int, classes: Sequence[str] = CLASSES,
           exact: bool = False, storable: bool = False) -> list[str]:
    """n values of these classes (mostly of classes the scope has columns of); exact: without
    a decimal division (:func:`exact_value`); storable: one plan may store them and another
    send them as computed (:func:`storable_value`)."""
    out = []
    for _ in range(n):
        present = [c for c in scope.classes() if c in classes]
        cls = gen.choice(present) if present and gen.chance(0.85) else gen.choice(classes)
        out.append(exact_value(gen, scope, cls) if exact else
                   storable_value(gen, scope, cls) if storable else gen.value(scope, cls))
    return out


def storable_value(gen: SqlGenerator, scope: Scope, cls: str) -> str:
    """A value of the class that is the same sent as computed and stored first: no
    arithmetic on a DECIMAL wider than :data:`WIDE_DECIMAL` digits (``ABS(d) * 0.5`` of a
    DECIMAL(65,0) has 66 digits: sent whole, but a plan that stores the row first --
    DQP's ``SQL_BUFFER_RESULT`` -- clips it to the type's 65: documented, not a bug;
    session 10's 97198b1b6de7); a column or literal after four tries."""
    for _ in range(4):
        made = gen.value(scope, cls)
        if _BARE_COLUMN_RE.fullmatch(made) or not _names_wide(gen, made):
            return made
    return gen.leaf(scope, cls)


def aggregates(gen: SqlGenerator, scope: Scope, n: int, exact: bool = False) -> list[str]:
    """n deterministic aggregates: COUNT, SUM, AVG, MIN/MAX (not of strings), BIT_*; exact:
    of values without a decimal division (:func:`exact_value`)."""
    def value(cls: str) -> str:
        """The aggregate's argument."""
        return exact_value(gen, scope, cls) if exact else gen.value(scope, cls)
    out = []
    for _ in range(n):
        kind = gen.weighted([(3, "count"), (2, "sum"), (2, "avg"), (3, "minmax"), (1, "bit")])
        if kind == "count":
            if gen.chance(0.5):
                out.append("COUNT(*)")
            elif gen.chance(0.5):
                out.append(f"COUNT({values(gen, scope, 1, NOT_STR, exact)[0]})")
            else:
                distinct = column_value(gen, scope, NOT_STR, exact)
                out.append(f"COUNT(DISTINCT {distinct})" if distinct else "COUNT(*)")
        elif kind in ("sum", "avg"):
            arg = summable(gen, scope, exact)
            if arg is None:
                out.append("COUNT(*)")
            else:
                out.append(f"SUM({arg})" if kind == "sum" else f"AVG({avg_argument(gen, arg)})")
        elif kind == "minmax":
            e = column_value(gen, scope, MINMAX_CLASSES, exact)
            out.append(f"{gen.choice(('MIN', 'MAX'))}({e})" if e else "COUNT(*)")
        else:
            out.append(f"{gen.choice(('BIT_AND', 'BIT_OR', 'BIT_XOR'))}({value('int')})")
    return out


def primary_keys(scope: Scope) -> list[str] | None:
    """Every table's primary-key columns (qualified), or None when a table has none: ordered
    by them last, the rows of the scope's FROM clause are in a total order."""
    keys: list[str] = []
    for alias, table in scope.tables:
        pk = table.primary_key
        if not pk:
            return None
        keys += [f"{alias}.{quote_name(c.name)}" for c in pk]
    return keys


def _over(*parts: str) -> str:
    """``OVER (...)`` of the non-empty parts."""
    return f"OVER ({' '.join(p for p in parts if p)})"


def _window(gen: SqlGenerator, scope: Scope, keys: list[str] | None) -> str:
    """One window function whose value is deterministic (see the module docstring); every
    value in it exact (:func:`exact_value`): the window buffer stores them."""
    partition = ""
    if gen.chance(0.6):
        partition_values = values(gen, scope, gen.rng.randrange(1, 3), NOT_STR, True)
        if gen.avoids("window-const-partition"):
            partition_values = [v for v in partition_values if _varies(v)]
        partition = "PARTITION BY " + ", ".join(partition_values) if partition_values else ""
    order_values = values(gen, scope, gen.rng.randrange(1, 3), NOT_STR, True)
    if gen.avoids("window-const-partition"):  # a constant partitions and orders nothing:
        # left out, the window's rows are the same (the known bug: another window's sort
        # is dropped when one is over constants only)
        order_values = [v for v in order_values if _varies(v)]
    options: list[tuple[float, str]] = [(2, "rank"), (2, "count"), (2, "sum"), (1, "minmax")]
    if keys is not None:
        options += [(3, "row_number"), (2, "lag"), (1, "first"), (1, "ntile"), (2, "framed")]
    kind = gen.weighted(options)
    order_values = [v for v in order_values if not is_position(v)]
    ordered = f"ORDER BY {', '.join(order_values)}" if order_values else ""
    total = f"ORDER BY {', '.join(order_values + (keys or []))}" if order_values or keys else ""
    if kind == "rank":  # these need an ORDER BY: every value ordered by may be a constant
        fn = gen.choice(("RANK", "DENSE_RANK", "CUME_DIST", "PERCENT_RANK"))
        return f"{fn}() {_over(partition, ordered or total)}" if ordered or total else \
            f"COUNT(*) {_over(partition)}"
    if kind == "count":
        return f"COUNT(*) {_over(partition, ordered if gen.chance(0.5) else '')}"
    if kind == "sum":
        arg = summable(gen, scope, True) or "1"
        return f"SUM({arg}) {_over(partition, ordered if gen.chance(0.5) else '')}"
    if kind == "minmax":
        arg = exact_value(gen, scope, gen.choice(MINMAX_CLASSES))
        return f"{gen.choice(('MIN', 'MAX'))}({arg}) {_over(partition)}"
    if kind == "row_number":
        return f"ROW_NUMBER() {_over(partition, total)}"
    if kind == "lag":
        arg = values(gen, scope, 1, exact=True)[0]
        return f"{gen.choice(('LAG', 'LEAD'))}({arg}, {gen.rng.randrange(1, 3)}) {_over(partition, total)}"
    if kind == "first":
        arg = values(gen, scope, 1, exact=True)[0]
        return f"{gen.choice(('FIRST_VALUE', 'LAST_VALUE'))}({arg}) {_over(partition, total)}"
    if kind == "ntile":
        return f"NTILE({gen.rng.randrange(1, 5)}) {_over(partition, total)}"
    arg = summable(gen, scope, True) or "1"
    frame = gen.choice(("ROWS BETWEEN 1 PRECEDING AND CURRENT ROW",
                        "ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING",
                        "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 FOLLOWING"))
    return f"{gen.choice(('SUM', 'COUNT', 'MAX'))}({arg}) {_over(partition, total, frame)}"


def whole_select(gen: SqlGenerator) -> tuple[str, str] | None:
    """(a rich SELECT over a new FROM clause, with a WHERE 7 times in 10, its variant) --
    the query EET rewrites and Radar runs over the raw copies; None when no FROM fits."""
    fc = gen.from_clause()
    if fc is None:
        return None
    where = f" WHERE {gen.predicate(fc.scope)}" if gen.chance(0.7) else ""
    return select_query(gen, fc, where, rich=True)


def select_query(gen: SqlGenerator, fc: FromClause, where: str, rich: bool = False
                 ) -> tuple[str, str]:
    """(one SELECT over fc with the WHERE clause where -- ``''`` or `` WHERE p`` --, its
    variant); see the module docstring."""
    scope = fc.scope
    pk_tables = [t for a, t in scope.tables if t.primary_key]
    keys = primary_keys(scope) if rich else None
    ordered_weight = 2 if (len(scope.tables) == 1 and pk_tables) or keys is not None else 0
    options: list[tuple[float, str]] = [(5, "plain"), (3, "aggregate"), (3, "grouped"),
                                        (1, "distinct"), (ordered_weight, "ordered")]
    if rich:
        options += [(2, "having"), (2, "window"), (2, "union")]
    variant = gen.weighted(options)
    n = gen.rng.randrange(1, 4)
    if variant == "plain":
        items = values(gen, scope, n, storable=rich)
        return f"SELECT {', '.join(items)} FROM {fc.sql}{where}", variant
    if variant == "aggregate":
        return f"SELECT {', '.join(aggregates(gen, scope, n, rich))} FROM {fc.sql}{where}", variant
    if variant in ("grouped", "having"):
        group = values(gen, scope, gen.rng.randrange(1, 3), NOT_STR, rich)
        aggs = aggregates(gen, scope, gen.rng.randrange(1, 3), rich)
        if variant == "having":  # HAVING names the keys by alias (a column inside a grouped
            # expression is no column HAVING knows)
            names = free_aliases("g", len(group), scope.column_names())
            items = [f"{g} AS {n}" for g, n in zip(group, names)] + aggs
            keys = [n for g, n in zip(group, names) if not is_position(g)]
            grouping = f" GROUP BY {', '.join(keys)}" if keys else ""
            if not keys and empty_join_having_risk(gen, scope):
                return f"SELECT {', '.join(items)} FROM {fc.sql}{where}", "grouped"
            return (f"SELECT {', '.join(items)} FROM {fc.sql}{where}{grouping} "
                    f"HAVING {having_predicate(gen, scope, names, group)}", variant)
        keys = [g for g in group if not is_position(g)]
        grouping = f" GROUP BY {', '.join(keys)}" if keys else ""
        return f"SELECT {', '.join(group + aggs)} FROM {fc.sql}{where}{grouping}", variant
    if variant == "distinct":
        return (f"SELECT DISTINCT {', '.join(values(gen, scope, n, NOT_STR, rich))} "
                f"FROM {fc.sql}{where}", variant)
    if variant == "window":
        items = values(gen, scope, gen.rng.randrange(1, 3), storable=True)
        items += [_window(gen, scope, keys) for _ in range(gen.rng.randrange(1, 3))]
        return f"SELECT {', '.join(items)} FROM {fc.sql}{where}", variant
    if variant == "union":
        operation = gen.weighted([(4, "UNION ALL")] + [(1, op) for op in SET_OPERATIONS
                                                        if op != "UNION ALL"])
        classes = CLASSES if operation == "UNION ALL" else NOT_STR
        first = values(gen, scope, n, classes, exact=True)
        other = f" WHERE {gen.predicate(scope)}"
        second = [exact_value(gen, scope, _class_of(gen, scope, v)) if gen.chance(0.3) else v
                  for v in first]
        return (f"SELECT {', '.join(first)} FROM {fc.sql}{where} {operation} "
                f"SELECT {', '.join(second)} FROM {fc.sql}{other}", variant)
    if keys is None:  # one table with a primary key (the differential oracle's variant):
        # every column of it, or a composite key's first column leaves ties before the LIMIT
        keys = [f"t1.{quote_name(c.name)}" for c in scope.tables[0][1].primary_key]
    items = values(gen, scope, n, exact=rich) + keys
    order = [i for i in items if not is_position(i)]
    return (f"SELECT {', '.join(items)} FROM {fc.sql}{where} "
            f"ORDER BY {', '.join(order)} LIMIT {gen.rng.randrange(1, 11)}", variant)


def _varies(item: str) -> bool:
    """True when a window's PARTITION BY or ORDER BY item names a column of the main
    query (one that names none -- a literal, a function of literals, an uncorrelated
    subquery -- is constant over the rows)."""
    return bool(_MAIN_COLUMN_RE.search(item))


def empty_join_having_risk(gen: SqlGenerator, scope: Scope) -> bool:
    """True when an implicitly grouped SELECT (no GROUP BY) over the scope's FROM clause
    would meet the known bug empty-join-having, which the generator avoids: three tables
    or more, one of them of at most one row (a const table), so that a HAVING over an
    empty join returns a row."""
    return (gen.avoids("empty-join-having") and len(scope.tables) >= 3
            and any(gen.table_rows(t) <= 1 for _, t in scope.tables))


def is_position(item: str) -> bool:
    """True for an item that names no column: ORDER BY and GROUP BY read an integer literal
    (and a constant expression that folds to one, such as ``(- 10)``) as a column's position,
    and a constant orders and groups nothing, so such items are left out of those lists."""
    return not _COLUMN_RE.search(item)


def _class_of(gen: SqlGenerator, scope: Scope, text: str) -> str:
    """The class the generator wrote text as (its trace, when it keeps one), else the
    class of a bare column, else 'int'."""
    for produced in reversed(gen.trace or ()):
        if produced.kind == "value" and produced.text == text:
            return produced.cls
    col = gen.bare_column(scope, text)
    return col.type_class if col is not None else "int"


def _aggregate_class(gen: SqlGenerator, scope: Scope, agg: str) -> str:
    """The class of an aggregate :func:`aggregates` wrote: its argument's for MIN/MAX, else
    'int' (COUNT, BIT_*) or 'dec' (SUM, AVG)."""
    if agg.startswith(("MIN(", "MAX(")):
        return _class_of(gen, scope, agg[4:-1])
    return "dec" if agg.startswith(("SUM(", "AVG(")) else "int"


def having_predicate(gen: SqlGenerator, scope: Scope, names: Sequence[str],
                     group: Sequence[str]) -> str:
    """A HAVING condition: aggregates and the group's values (by their names in the select
    list; group holds their expressions) compared with literals or with each other, joined
    with AND/OR/NOT now and then.  A group value that is an indexed integer, decimal or
    YEAR column is compared with small integer literals only (the condition is pushed
    into the WHERE, where the generator's ``key-constant`` rule applies)."""
    def atom() -> str:
        """One comparison of an aggregate (or a group value)."""
        kind = gen.weighted([(4, "agg"), (1, "group"), (1, "null")])
        if kind == "group" and names:
            i = gen.rng.randrange(len(names))
            op = gen.choice(('=', '<>', '<', '>=', '<=>'))
            # a literal of the key's own class (a temporal key against a number meets the
            # known bug temporal-number once the condition is pushed into the WHERE)
            literal = gen.literal(_class_of(gen, scope, group[i]))
            if gen.constant_risk(scope, group[i], literal, "="):
                literal = gen.safe_literal()
            return f"({names[i]} {op} {literal})"
        agg = aggregates(gen, scope, 1, True)[0]
        if kind == "null":
            return f"({agg} IS {gen.choice(('', 'NOT '))}NULL)"
        cls = _aggregate_class(gen, scope, agg)
        if cls in NUMBER_CLASSES:
            other = (aggregates(gen, scope, 1, True)[0] if gen.chance(0.3)
                     else gen.literal(gen.choice(("int", "dec"))))
            if _aggregate_class(gen, scope, other) not in NUMBER_CLASSES:
                other = gen.literal(gen.choice(("int", "dec")))
        else:  # MIN/MAX of a temporal value: a literal of its class (temporal-number)
            other = gen.literal(cls)
        return f"({agg} {gen.choice(('=', '<>', '<', '<=', '>', '>='))} {other})"
    kind = gen.weighted([(5, "atom"), (2, "and"), (2, "or"), (1, "not")])
    if kind == "atom":
        return atom()
    if kind == "not":
        return f"(NOT {atom()})"
    return f"({atom()} {kind.upper()} {atom()})"
