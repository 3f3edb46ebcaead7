"""Drawing SELECTs over a schema: joins of every kind, derived tables, views, CTEs
(recursive ones too), JSON_TABLE, subqueries of every kind, aggregates with GROUP BY ...
WITH ROLLUP and HAVING, window functions, DISTINCT, set operations (UNION, INTERSECT,
EXCEPT, with ALL), ORDER BY and LIMIT, index hints and select modifiers, system time.

:class:`QueryGenerator` is given a :class:`~lib.hunt.surface.schema.SchemaSpec` and a
``random.Random``; :meth:`QueryGenerator.select` returns a
:class:`~lib.hunt.surface.select.Select` tree.  ``deterministic=True`` leaves out
what makes an answer depend on more than the data (lib.hunt.surface.expr.NONDETERMINISM):
no nondeterministic functions, LIMIT only under an ORDER BY of every selected column,
window functions that number rows only over an ORDER BY that is a total order, no
GROUP_CONCAT or JSON_ARRAYAGG without ORDER BY, no float aggregates; what is left
that still depends on ties is marked (``ties``) rather than avoided, so an oracle can
skip it.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from .expr import KNOWN_BUGS, Expr, column, op
from .exprgen import ORDERABLE, ExprGenerator, Scope, Source, collation_of, has_ties
from .schema import SchemaSpec, TableSpec
from .select import Cte, Join, Select, TableRef, items_from
from .types import ColumnType

JOINS = ("JOIN", "LEFT JOIN", "RIGHT JOIN", "CROSS JOIN", "STRAIGHT_JOIN", "NATURAL JOIN",
         "NATURAL LEFT JOIN", "LEFT OUTER JOIN", "INNER JOIN")
SETOPS = ("UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL",
          "UNION DISTINCT")
MODIFIERS = ("SQL_SMALL_RESULT", "SQL_BIG_RESULT", "SQL_BUFFER_RESULT", "SQL_NO_CACHE",
             "STRAIGHT_JOIN", "HIGH_PRIORITY", "SQL_CALC_FOUND_ROWS")
# a synthetic column type per family, for derived tables' and CTEs' columns
FAMILY_TYPES: Mapping[str, ColumnType] = MappingProxyType({
    "int": ColumnType("BIGINT", "int", "BIGINT"),
    "dec": ColumnType("DECIMAL(65,30)", "dec", "DECIMAL", length=65, scale=30),
    "real": ColumnType("DOUBLE", "real", "DOUBLE"),
    "str": ColumnType("VARCHAR(512)", "str", "VARCHAR", length=512),
    "bin": ColumnType("VARBINARY(512)", "bin", "VARBINARY", length=512),
    "date": ColumnType("DATE", "date", "DATE"),
    "datetime": ColumnType("DATETIME(6)", "datetime", "DATETIME", scale=6),
    "time": ColumnType("TIME(6)", "time", "TIME", scale=6),
    "json": ColumnType("JSON", "json", "JSON", blob=True),
    "geom": ColumnType("GEOMETRY", "geom", "GEOMETRY", blob=True),
    "inet6": ColumnType("INET6", "inet6", "INET6"),
    "uuid": ColumnType("UUID", "uuid", "UUID"),
    "bool": ColumnType("BIGINT", "int", "BIGINT"),
})


def _typed(family: str, collation: str = "") -> ColumnType:
    base = FAMILY_TYPES[family]
    if family == "str" and collation:
        return ColumnType(base.sql, "str", base.kind, base.length, collation=collation)
    return base


@dataclass
class _Names:
    """Alias counters of one statement."""

    table: int = 0
    derived: int = 0
    cte: int = 0

    def alias(self, prefix: str = "a") -> str:
        """The next table alias (a1, a2...; s1... in subqueries)."""
        self.table += 1
        return f"{prefix}{self.table}"


def _over_clause(partitions: int, holes: int, frame: str) -> str:
    """A window's OVER clause text: PARTITION BY the first hole (when partitions), ORDER
    BY the holes after it up to holes, then the frame."""
    over = "PARTITION BY {0}" if partitions else ""
    if holes > partitions:
        keys = ", ".join(f"{{{i}}}" for i in range(partitions, holes))
        over += (" " if over else "") + "ORDER BY " + keys
    return over + frame


class QueryGenerator:
    """SELECTs over a schema (see the module docstring)."""

    def __init__(self, schema: SchemaSpec, rng: random.Random, deterministic: bool = True,
                 max_depth: int = 3, max_tables: int = 3,
                 avoid: frozenset[str] = frozenset(KNOWN_BUGS)) -> None:
        self.schema = schema
        self.rng = rng
        self.deterministic = deterministic
        self.max_tables = max_tables
        self.exprs = ExprGenerator(rng, max_depth, self._subquery, deterministic, avoid)
        self.names = _Names()
        self._nesting = 0

    # ------------------------------------------------------------ sources
    def table_source(self, table: TableSpec, alias: str) -> Source:
        """A base table as a FROM source."""
        keys = tuple(tuple(p.column for p in k.parts) for k in table.keys
                     if k.unique and not k.period and not any(p.prefix for p in k.parts))
        indexes = tuple(k.name for k in table.keys if k.kind in ("INDEX", "UNIQUE", "PRIMARY"))
        fulltext = tuple(k.parts[0].column for k in table.keys if k.kind == "FULLTEXT")
        return Source.of(alias, table.columns, table.name, keys, indexes, fulltext, table.rows)

    def table_ref(self, scope: Scope, allow_lateral: bool = True) -> TableRef:
        """A FROM item of any kind."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.08 and self.schema.views:
            view = rng.choice(self.schema.views)
            base = self.schema.table(view.table)
            alias = self.names.alias()
            cols = [c for c in base.columns if c.name in view.columns]
            return TableRef(view.name, alias, Source.of(alias, cols, rows=base.rows), "view",
                            features=frozenset({"VIEW"}))
        if roll < 0.16 and self._nesting < 2:
            return self.derived(scope)
        if roll < 0.20 and allow_lateral:
            return self.json_table(scope)
        table = rng.choice(self.schema.tables)
        alias = self.names.alias()
        source = self.table_source(table, alias)
        features = {"TABLE"}
        hint = ""
        if source.indexes and rng.random() < 0.15:
            verb = rng.choice(("USE INDEX", "FORCE INDEX", "IGNORE INDEX", "USE KEY",
                               "IGNORE INDEX FOR ORDER BY", "FORCE INDEX FOR JOIN"))
            picked = rng.sample(source.indexes, rng.randint(1, min(2, len(source.indexes))))
            hint = f"{verb} ({', '.join(picked)})"
            features.add(f"index hint {verb.split()[0]}")
        system_time = ""
        nondet: frozenset[str] = frozenset()
        if table.versioned and rng.random() < 0.4:
            system_time = rng.choice(("ALL", "AS OF NOW()", "BETWEEN '1970-01-01 00:00:01' AND "
                                      "NOW()", "FROM '2000-01-01' TO '2100-01-01'"))
            features.add("FOR SYSTEM_TIME")
            nondet = frozenset({"history"})
        return TableRef(table.name, alias, source, "table", hint, system_time,
                        frozenset(features), nondet)

    def derived(self, scope: Scope) -> TableRef:
        """A derived table: (SELECT ...) AS dN, with its columns typed."""
        self._nesting += 1
        try:
            inner = self.select(Scope(outer=None), allow_setops=self.rng.random() < 0.2,
                                simple=True)
        finally:
            self._nesting -= 1
        self.names.derived += 1
        alias = f"d{self.names.derived}"
        cols = tuple((i.alias, _typed(i.expr.family, i.expr.collation), True)
                     for i in inner.items if i.expr.family != "bool")
        source = Source(alias, cols, rows=10)
        text = "(" + inner.sql() + ")"
        return TableRef(text, alias, source, "derived",
                        features=frozenset({"derived table"}) | inner.all_features(),
                        nondet=inner.nondet())

    def json_table(self, scope: Scope) -> TableRef:
        """JSON_TABLE over a JSON column in scope (lateral) or a literal document."""
        rng = self.rng
        docs = scope.columns("json", outer=False)
        doc = rng.choice(docs).sql() if docs and rng.random() < 0.6 else \
            rng.choice(("'[{\"a\": 1, \"b\": \"x\"}, {\"a\": 2, \"c\": [1, 2]}, {}]'",
                        "'[1, 2, null, \"a\", {\"a\": 3}]'", "'{\"a\": [1, 2, 3]}'", "'[]'"))
        path = rng.choice(("'$[*]'", "'$'", "'$.a[*]'", "'$[1 to 2]'"))
        columns = ["id FOR ORDINALITY", "ja INT PATH '$.a' DEFAULT '0' ON EMPTY NULL ON ERROR",
                   "jb VARCHAR(32) PATH '$.b'", "je INT EXISTS PATH '$.c'"]
        extra = ", NESTED PATH '$.c[*]' COLUMNS (jn INT PATH '$')" if rng.random() < 0.5 else ""
        self.names.derived += 1
        alias = f"j{self.names.derived}"
        int_t, str_t = FAMILY_TYPES["int"], ColumnType("VARCHAR(32)", "str", "VARCHAR", 32)
        cols = [("id", int_t, True), ("ja", int_t, True), ("jb", str_t, True), ("je", int_t, True)]
        if extra:
            cols.append(("jn", int_t, True))
        text = f"JSON_TABLE({doc}, {path} COLUMNS ({', '.join(columns)}{extra}))"
        return TableRef(text, alias, Source(alias, tuple(cols), rows=5), "json_table",
                        features=frozenset({"JSON_TABLE"} | ({"NESTED PATH"} if extra else set())))

    def from_clause(self, scope: Scope, tables: int) -> tuple[TableRef, tuple[Join, ...]]:
        """A FROM clause of up to tables items, joined; scope gets their sources."""
        rng = self.rng
        first = self.table_ref(scope, allow_lateral=False)
        scope.sources.append(first.source)
        joins: list[Join] = []
        for _ in range(tables - 1):
            right = self.table_ref(scope)
            kind = "CROSS JOIN" if right.kind == "json_table" else rng.choice(JOINS)
            if kind.startswith("NATURAL") and not self._natural_ok(scope, right.source):
                kind = "JOIN"
            on: Expr | None = None
            using: tuple[str, ...] = ()
            if kind.startswith("NATURAL") or kind == "CROSS JOIN":
                pass
            elif rng.random() < 0.12 and kind not in ("STRAIGHT_JOIN",) and \
                    len(scope.sources) == 1:
                left = {c[0]: c[1] for c in scope.sources[0].columns}
                shared = sorted(c[0] for c in right.source.columns if c[0] in left
                                and _same_kind(left[c[0]], c[1]))
                if shared:
                    using = (rng.choice(shared),)
            if not using and not kind.startswith("NATURAL") and kind != "CROSS JOIN":
                inner = Scope([*scope.sources, right.source], scope.outer)
                on = self._join_condition(inner, right.source)
            scope.sources.append(right.source)
            joins.append(Join(kind, right, on, using))
        return first, tuple(joins)

    @staticmethod
    def _natural_ok(scope: Scope, right: Source) -> bool:
        """NATURAL JOIN only to one source, over same-named columns of one kind."""
        if len(scope.sources) != 1:
            return False
        left = {c[0]: c[1] for c in scope.sources[0].columns}
        return all(_same_kind(left[name], ctype) for name, ctype, _ in right.columns
                   if name in left)

    def _join_condition(self, scope: Scope, right: Source) -> Expr:
        rng = self.rng
        left_cols = Scope(scope.sources[:-1]).columns(outer=False)
        right_cols = Scope([right]).columns(outer=False)
        pairs = [(a, b) for a in left_cols for b in right_cols if a.family == b.family
                 and a.family in ORDERABLE and (a.collation == b.collation or
                                                 a.family != "str")]
        if pairs and rng.random() < 0.85:
            a, b = rng.choice(pairs)
            cond = op("({0} = {1})", (a, b), "bool", "=")
            if rng.random() < 0.3:
                extra = self.exprs.predicate(scope, 1)
                cond = op("({0} AND {1})", (cond, extra), "bool", "AND")
            return cond
        return self.exprs.predicate(scope, 1)

    # ------------------------------------------------------------ subqueries
    def _subquery(self, egen: ExprGenerator, outer: Scope, kind: str, family: str) -> Expr:
        rng = self.rng
        self._nesting += 1
        try:
            table = rng.choice(self.schema.tables)
            alias = self.names.alias("s")
            source = self.table_source(table, alias)
            scope = Scope([source], outer)
            where = egen.predicate(scope, 2) if rng.random() < 0.7 else None
            where_sql = f" WHERE {where.sql()}" if where is not None else ""
            features = {f"subquery {kind}"}
            nondet: set[str] = set(where.all_nondet()) if where is not None else set()
            if where is not None:
                features |= where.all_features()
            frm = f"{table.name} AS {alias}"
            if kind == "EXISTS":
                sql = f"(EXISTS (SELECT 1 FROM {frm}{where_sql}))"
                return Expr(sql, (), "bool", "", frozenset(features), frozenset(nondet))
            if kind in ("IN_SUBQUERY", "NOT_IN_SUBQUERY", "ANY", "ALL"):
                cols = [c for c in scope.columns(outer=False) if c.family in ORDERABLE]
                if not cols:
                    return egen.literal("bool")
                inner = rng.choice(cols)
                outer_cols = [c for c in outer.columns(inner.family, inner.collation)]
                left = rng.choice(outer_cols) if outer_cols and rng.random() < 0.8 else \
                    egen.literal(inner.family, inner.collation)
                if kind == "ANY":
                    word = rng.choice(("= ANY", "<> ANY", "> ANY", "<= SOME"))
                elif kind == "ALL":
                    word = rng.choice(("<> ALL", "= ALL", "< ALL", ">= ALL"))
                else:
                    word = "IN" if kind == "IN_SUBQUERY" else "NOT IN"
                sub = f"SELECT {inner.sql()} FROM {frm}{where_sql}"
                template = "({0} " + word + " (" + _escape(sub) + "))"
                return Expr(template, (left,), "bool", "", frozenset(features), frozenset(nondet))
            # scalar: one value of the wanted family, of the inner rows only (an aggregate
            # of an outer column would belong to the outer query: many rows)
            value = egen.value(Scope([source]), family if family != "bool" else "int", 1)
            nondet |= value.all_nondet()
            features |= value.all_features()
            if rng.random() < 0.6 and family in ("int", "dec", "real", "str", "date",
                                                  "datetime", "time"):
                # (the aggregate returns the wanted family: COUNT an integer, SUM a decimal)
                agg = rng.choice({"int": ("MIN", "MAX", "COUNT"), "dec": ("MIN", "MAX", "SUM")}
                                 .get(family, ("MIN", "MAX")))
                if agg in ("MIN", "MAX") and has_ties(value):
                    nondet.add("ties")
                result_family = "int" if agg == "COUNT" else \
                    ("dec" if agg == "SUM" else value.family)
                sub = f"SELECT {agg}({value.sql()}) FROM {frm}{where_sql}"
                features.add(agg)
            else:
                sub = f"SELECT {value.sql()} FROM {frm}{where_sql} LIMIT 1"
                result_family = value.family
                nondet.add("order")
            return Expr("(" + _escape(sub) + ")", (), result_family,
                        value.collation if result_family == "str" else "",
                        frozenset(features | {"SCALAR_SUBQUERY"}), frozenset(nondet))
        finally:
            self._nesting -= 1

    # ------------------------------------------------------------ aggregates, windows
    def aggregate(self, scope: Scope) -> Expr:
        """An aggregate over the scope's rows."""
        rng = self.rng
        name = rng.choice(("COUNT", "COUNT", "COUNT_DISTINCT", "SUM", "AVG", "MIN", "MAX",
                           "MIN", "MAX", "BIT_AND", "BIT_OR", "BIT_XOR", "GROUP_CONCAT",
                           "STD", "VARIANCE", "JSON_ARRAYAGG", "SUM_DISTINCT"))
        if name == "COUNT" and rng.random() < 0.4:
            return op("COUNT(*)", (), "int", "COUNT", aggregate=True)
        family = {"SUM": "dec", "AVG": "dec", "BIT_AND": "int", "BIT_OR": "int",
                  "BIT_XOR": "int", "STD": "real", "VARIANCE": "real",
                  "SUM_DISTINCT": "dec"}.get(name) or rng.choice(ORDERABLE[:8])
        arg_family = "int" if name.startswith("BIT") else family
        if name in ("SUM", "AVG", "SUM_DISTINCT") and rng.random() < 0.5:
            arg_family = "int"
        if name in ("STD", "VARIANCE"):
            arg_family = rng.choice(("int", "dec"))
        arg = self.exprs.value(scope, arg_family, 1)
        nondet: set[str] = set()
        if name in ("STD", "VARIANCE") or (name in ("SUM", "AVG") and arg.family == "real"):
            nondet.add("float")
        if name in ("MIN", "MAX", "COUNT_DISTINCT") and has_ties(arg):
            nondet.add("ties")
        if name == "COUNT_DISTINCT":
            return op("COUNT(DISTINCT {0})", (arg,), "int", name, nondet=frozenset(nondet),
                      aggregate=True)
        if name == "SUM_DISTINCT":
            return op("SUM(DISTINCT {0})", (arg,), "dec", name, nondet=frozenset(nondet),
                      aggregate=True)
        if name in ("GROUP_CONCAT", "JSON_ARRAYAGG") and arg.leaf == "literal":
            arg = self.exprs.value(scope, arg_family, 1)   # ORDER BY 70 would be a position
            if arg.leaf == "literal":
                name = "COUNT"
        if name == "GROUP_CONCAT":
            ordered = rng.random() < 0.8 or self.deterministic
            if has_ties(arg):
                nondet.add("ties")
            if ordered:
                return op("GROUP_CONCAT({0} ORDER BY {0} SEPARATOR ',')", (arg,), "str", name,
                          nondet=frozenset(nondet), aggregate=True)
            return op("GROUP_CONCAT({0})", (arg,), "str", name,
                      nondet=frozenset(nondet | {"order"}), aggregate=True)
        if name == "JSON_ARRAYAGG":
            if has_ties(arg):
                nondet.add("ties")
            if self.deterministic or rng.random() < 0.7:
                return op("JSON_ARRAYAGG({0} ORDER BY {0})", (arg,), "json", name,
                          nondet=frozenset(nondet), aggregate=True)
            return op("JSON_ARRAYAGG({0})", (arg,), "json", name,
                      nondet=frozenset(nondet | {"order"}), aggregate=True)
        if name == "COUNT":
            return op("COUNT({0})", (arg,), "int", name, aggregate=True)
        result = {"COUNT": "int", "SUM": "dec", "AVG": "dec", "STD": "real",
                  "VARIANCE": "real"}.get(name, arg.family)
        if name in ("SUM", "AVG") and arg.family == "real":
            result = "real"
        template = f"{name}({{0}})"
        return op(template, (arg,), result, name, arg.collation if result == "str" else "",
                  frozenset(nondet), aggregate=True)

    def window(self, scope: Scope, total: list[Expr]) -> Expr:
        """A window function; total is an ORDER BY that orders the rows totally, if any."""
        rng = self.rng
        name = rng.choice(("ROW_NUMBER", "RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST",
                           "NTILE", "LAG", "LEAD", "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE",
                           "SUM_OVER", "COUNT_OVER", "MIN_OVER", "MAX_OVER", "AVG_OVER"))
        cols = [c for c in scope.columns(outer=False) if c.family in ("int", "dec", "date",
                                                                      "datetime", "str")]
        partition = [rng.choice(cols)] if cols and rng.random() < 0.5 else []
        order_cols = list(total) if total and rng.random() < 0.7 else \
            ([rng.choice(cols)] if cols else [])
        nondet: set[str] = set()
        is_total = bool(total) and order_cols == total
        needs_order = name not in ("SUM_OVER", "COUNT_OVER", "MIN_OVER", "MAX_OVER", "AVG_OVER")
        if needs_order and not order_cols:
            name = "COUNT_OVER"
            needs_order = False
        ranks = name in ("RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST")
        if order_cols and not is_total and not ranks:
            nondet.add("order")
        if any(has_ties(c) for c in order_cols + partition):
            nondet.add("ties")
        frame = ""
        if name.endswith("_OVER") and order_cols and rng.random() < 0.6:
            frame = " " + rng.choice(("ROWS BETWEEN 1 PRECEDING AND CURRENT ROW",
                                      "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 FOLLOWING",
                                      "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING"))
        args: list[Expr] = partition + order_cols
        holes = len(args)
        over = _over_clause(len(partition), holes, frame)
        value_family = "int"
        if name in ("LAG", "LEAD", "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE", "MIN_OVER",
                    "MAX_OVER", "SUM_OVER", "AVG_OVER"):
            value = self.exprs.value(scope, rng.choice(("int", "dec")) if name in
                                     ("SUM_OVER", "AVG_OVER") else rng.choice(ORDERABLE[:8]), 1)
            if name in ("MIN_OVER", "MAX_OVER") and has_ties(value):
                nondet.add("ties")
            args.append(value)
            v = f"{{{holes}}}"
            value_family = "dec" if name in ("SUM_OVER", "AVG_OVER") else value.family
            call = {"LAG": f"LAG({v}, 1)", "LEAD": f"LEAD({v}, 2)", "FIRST_VALUE":
                    f"FIRST_VALUE({v})", "LAST_VALUE": f"LAST_VALUE({v})", "NTH_VALUE":
                    f"NTH_VALUE({v}, 2)", "MIN_OVER": f"MIN({v})", "MAX_OVER": f"MAX({v})",
                    "SUM_OVER": f"SUM({v})", "AVG_OVER": f"AVG({v})"}[name]
            if name in ("FIRST_VALUE", "LAST_VALUE", "NTH_VALUE", "LAG", "LEAD") and \
                    not is_total:
                nondet.add("order")
        else:
            call = {"ROW_NUMBER": "ROW_NUMBER()", "RANK": "RANK()", "DENSE_RANK": "DENSE_RANK()",
                    "PERCENT_RANK": "PERCENT_RANK()", "CUME_DIST": "CUME_DIST()",
                    "NTILE": "NTILE(3)", "COUNT_OVER": "COUNT(*)"}[name]
            if name in ("PERCENT_RANK", "CUME_DIST"):
                value_family = "real"
        template = f"{call} OVER ({over})"
        collation = args[-1].collation if value_family == "str" and args else ""
        return op(template, tuple(args), value_family, name, collation, frozenset(nondet),
                  window=True)

    # ------------------------------------------------------------ SELECT
    def select(self, outer: Scope | None = None, allow_setops: bool = True,
               simple: bool = False) -> Select:
        """A SELECT (simple: a derived table's or a CTE's body: no CTE of its own)."""
        rng = self.rng
        scope = Scope(outer=outer)
        features: set[str] = set()
        nondet: set[str] = set()
        ctes: tuple[Cte, ...] = ()
        if not simple and rng.random() < 0.15:
            ctes = self.ctes()
        first: TableRef | None
        joins: tuple[Join, ...]
        if rng.random() < 0.03:
            first, joins = None, ()
        else:
            tables = rng.choices((1, 2, 3), (5, 3, 2))[0]
            first, joins = self.with_ctes(scope, ctes, min(tables, self.max_tables))
        if joins:
            features |= {j.kind for j in joins}
        egen = self.exprs
        where = egen.predicate(scope) if first is not None and rng.random() < 0.75 else None
        grouped = first is not None and rng.random() < 0.3
        group_by: tuple[Expr, ...] = ()
        rollup, having = False, None
        if grouped:
            items, group_by, rollup, having = self._grouped_items(scope, features, nondet)
        else:
            items = self._plain_items(scope, first, features)
        distinct = rng.random() < 0.12
        if distinct:
            features.add("DISTINCT")
            if any(has_ties(e) for e in items):
                nondet.add("ties")
        select = Select(items_from(items), first, joins, where, group_by, rollup, having,
                        distinct=distinct, ctes=ctes)
        if allow_setops and not grouped and rng.random() < 0.1:
            select = self._setop(select, features)
        order_by, limit, offset = self._ordering(select, rollup, features, nondet)
        modifiers, locking = self._modifiers(select, first, simple, limit, features)
        if where is not None:
            features.add("WHERE")
        if first is None:
            features.add("no FROM")
        return Select(select.items, first, joins, where, group_by, rollup, having, order_by,
                      limit, offset, distinct, modifiers, ctes, select.setops, locking,
                      frozenset(features), frozenset(nondet))

    def _grouped_items(self, scope: Scope, features: set[str], nondet: set[str]
                       ) -> tuple[list[Expr], tuple[Expr, ...], bool, Expr | None]:
        """A grouped SELECT's items, GROUP BY keys, WITH ROLLUP and HAVING."""
        rng, egen = self.rng, self.exprs
        keys = [c for c in scope.columns(outer=False) if c.family in ORDERABLE]
        rng.shuffle(keys)
        group_by = tuple(keys[:rng.randint(1, 2)]) if keys else ()
        if any(has_ties(g) for g in group_by):
            nondet.add("ties")
        items = list(group_by) + [self.aggregate(scope) for _ in range(rng.randint(1, 3))]
        rollup = bool(group_by) and rng.random() < 0.2
        having = None
        if rng.random() < 0.4:
            agg = self.aggregate(scope)
            cmp = rng.choice(("<", ">", "=", "<>", ">="))
            lit = egen.literal(agg.family if agg.family in ("int", "dec") else "int")
            having = op(f"({{0}} {cmp} {{1}})", (agg, lit), "bool", "HAVING")
            features.add("HAVING")
        features.add("GROUP BY")
        if rollup:
            features.add("WITH ROLLUP")
        return items, group_by, rollup, having

    def _plain_items(self, scope: Scope, first: TableRef | None,
                     features: set[str]) -> list[Expr]:
        """An ungrouped SELECT's items: aggregates, or values (and a window)."""
        rng, egen = self.rng, self.exprs
        if first is not None and rng.random() < 0.15:
            features.add("aggregate without GROUP BY")
            return [self.aggregate(scope) for _ in range(rng.randint(1, 3))]
        items: list[Expr] = []
        for _ in range(rng.randint(1, 4)):
            family = rng.choice(("int", "int", "dec", "str", "str", "date", "datetime",
                                 "time", "real", "json", "bin", "bool"))
            items.append(egen.value(scope, family))
        if first is not None and rng.random() < 0.15:
            total = self._total_order(scope)
            items.append(self.window(scope, total))
            features.add("window")
        return items

    def _ordering(self, select: Select, rollup: bool, features: set[str], nondet: set[str]
                  ) -> tuple[tuple[tuple[Expr, bool], ...], int | None, int]:
        """ORDER BY, LIMIT and OFFSET of a SELECT (with what they leave undetermined)."""
        rng = self.rng
        order_by: tuple[tuple[Expr, bool], ...] = ()
        limit = None
        offset = 0
        if rng.random() < 0.35 and not rollup:   # (ORDER BY and WITH ROLLUP: an error)
            orderable = [i.expr for i in select.items if i.expr.family in ORDERABLE]
            if orderable:
                complete = len(orderable) == len(select.items)
                order_by = tuple((e, rng.random() < 0.3) for e in orderable)
                if rng.random() < 0.5:
                    limit = rng.randint(0, 10)
                    offset = rng.choice((0, 0, 1, 3))
                    if not complete:
                        nondet.add("order")
                    if any(has_ties(e) for e, _ in order_by):
                        nondet.add("ties")
                features.add("ORDER BY")
        elif rng.random() < 0.05 and not self.deterministic:
            limit = rng.randint(1, 5)
            nondet.add("order")
        if limit is not None:
            features.add("LIMIT")
        return order_by, limit, offset

    def _modifiers(self, select: Select, first: TableRef | None, simple: bool,
                   limit: int | None, features: set[str]) -> tuple[tuple[str, ...], str]:
        """A SELECT's modifier (SQL_CALC_FOUND_ROWS...) and locking clause."""
        rng = self.rng
        modifiers: tuple[str, ...] = ()
        if rng.random() < 0.08 and first is not None and not simple and self._nesting == 0:
            modifiers = (rng.choice(MODIFIERS),)
            features.add(modifiers[0])
            if modifiers[0] == "SQL_CALC_FOUND_ROWS" and limit is None:
                modifiers = ()
        locking = ""
        if not simple and first is not None and rng.random() < 0.03 and not select.setops \
                and not any(r.system_time for r in select.refs()):
            locking = rng.choice(("FOR UPDATE", "LOCK IN SHARE MODE", "FOR UPDATE SKIP LOCKED"))
            features.add(locking)
        return modifiers, locking

    def _total_order(self, scope: Scope) -> list[Expr]:
        """An ORDER BY that orders one table's rows totally (its primary or a unique key
        without NULLs), when the query reads one table."""
        if len(scope.sources) != 1:
            return []
        src = scope.sources[0]
        by_name = {c[0]: c for c in src.columns}
        for key in src.keys:
            if all(k in by_name and not by_name[k][2] for k in key):
                return [column(f"{src.alias}.{k}", by_name[k][1].family,
                               collation_of(by_name[k][1]) if by_name[k][1].family == "str"
                               else "", src.alias, False) for k in key]
        return []

    def _setop(self, head: Select, features: set[str]) -> Select:
        rng = self.rng
        name = rng.choice(SETOPS)
        families = [(i.expr.family, i.expr.collation) for i in head.items]
        scope = Scope()
        first, joins = self.from_clause(scope, 1)
        items = []
        for family, coll in families:
            value = self.exprs.value(scope, family if family != "bool" else "int", 1,
                                     coll if family == "str" else "")
            items.append(value)
        member = Select(items_from(items), first, joins,
                        self.exprs.predicate(scope) if rng.random() < 0.6 else None)
        features.add(name)
        return Select(head.items, head.first, head.joins, head.where, head.group_by, head.rollup,
                      head.having, distinct=head.distinct, ctes=head.ctes,
                      setops=((name, member),))

    def ctes(self) -> tuple[Cte, ...]:
        """One or two CTEs, sometimes a recursive one."""
        rng = self.rng
        out: list[Cte] = []
        for _ in range(rng.randint(1, 2)):
            self.names.cte += 1
            name = f"cte{self.names.cte}"
            if rng.random() < 0.35:
                out.append(self._recursive_cte(name))
                continue
            self._nesting += 1
            try:
                body = self.select(Scope(), allow_setops=False, simple=True)
            finally:
                self._nesting -= 1
            items = [i for i in body.items]
            cols = tuple(f"x{n}" for n in range(1, len(items) + 1))
            source = Source(name, tuple((c, _typed(i.expr.family if i.expr.family != "bool"
                                                   else "int", i.expr.collation), True)
                                        for c, i in zip(cols, items)))
            out.append(Cte(name, cols, body.sql(), source, False,
                           frozenset({"CTE"}) | body.all_features(), body.nondet()))
        return tuple(out)

    def _recursive_cte(self, name: str) -> Cte:
        rng = self.rng
        depth = rng.randint(2, 6)
        if rng.random() < 0.5 or not any(t.primary for t in self.schema.tables):
            body = (f"SELECT 1, CAST('a' AS CHAR(64)) UNION ALL SELECT x1 + 1, "
                    f"CONCAT(x2, '-', x1) FROM {name} WHERE x1 < {depth}")
            cols: tuple[tuple[str, ColumnType, bool], ...] = (
                ("x1", FAMILY_TYPES["int"], False),
                ("x2", ColumnType("VARCHAR(64)", "str", "VARCHAR", 64), True))
        else:
            table = rng.choice([t for t in self.schema.tables if t.primary])
            pk = table.column(table.primary.parts[0].column) if table.primary else table.columns[0]
            body = (f"SELECT {pk.name}, 0 FROM {table.name} UNION ALL SELECT r.x1, r.x2 + 1 "
                    f"FROM {name} AS r JOIN {table.name} AS q ON q.{pk.name} = r.x1 "
                    f"WHERE r.x2 < {depth}")
            cols = (("x1", pk.type, False), ("x2", FAMILY_TYPES["int"], False))
        source = Source(name, cols)
        return Cte(name, ("x1", "x2"), body, source, True, frozenset({"RECURSIVE CTE"}))

    def with_ctes(self, scope: Scope, ctes: tuple[Cte, ...], tables: int
                  ) -> tuple[TableRef, tuple[Join, ...]]:
        """A FROM clause that reads the CTEs (when there are) and tables."""
        if not ctes:
            return self.from_clause(scope, tables)
        cte = self.rng.choice(ctes)
        alias = self.names.alias()
        source = Source(alias, cte.source.columns)
        first = TableRef(cte.name, alias, source, "cte", features=frozenset({"CTE reference"}))
        scope.sources.append(source)
        joins: list[Join] = []
        if tables > 1:
            right = self.table_ref(scope, allow_lateral=False)
            inner = Scope([*scope.sources, right.source], scope.outer)
            joins.append(Join(self.rng.choice(("JOIN", "LEFT JOIN")), right,
                              self._join_condition(inner, right.source)))
            scope.sources.append(right.source)
        return first, tuple(joins)


def _same_kind(a: ColumnType, b: ColumnType) -> bool:
    """Two columns a join may compare: one family (numbers with numbers), one collation."""
    numeric = ("int", "dec", "real")
    if a.family in numeric and b.family in numeric:
        return True
    if a.family != b.family or a.family in ("geom", "json"):
        return False
    return a.family != "str" or collation_of(a) == collation_of(b)


def _escape(sql: str) -> str:
    """SQL placed inside an Expr template: its braces doubled."""
    return sql.replace("{", "{{").replace("}", "}}")
