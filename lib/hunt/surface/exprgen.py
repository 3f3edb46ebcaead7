"""Drawing typed expressions and predicates over the columns in scope.

:class:`ExprGenerator` writes :class:`~lib.hunt.surface.expr.Expr` trees of a
wanted family from the catalog, columns of the tables in scope (a
:class:`Scope`: aliases and their columns, with the enclosing query's scope for
correlated subqueries) and typed literals at the types' edges.  The care that
keeps the server's refusals rare:

- strings are combined or compared only when they share a collation (or one
  side is coercible, as a literal is): no "illegal mix of collations";
- INET6 and UUID values meet only their own kind;
- no integer ``+ - *`` (BIGINT overflows at the edges are errors, not
  warnings): integer arithmetic goes through a decimal operand; no ``POW``,
  ``EXP`` or ``DEGREES`` of a column (DOUBLE overflows);
- a scalar subquery is an aggregate without GROUP BY (one row) or has
  ``LIMIT 1``.

Subqueries come from a callback (the query generator), so this module stays
free of SELECT's structure.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from .expr import CATALOG, COMPARISONS, KNOWN_BUGS, WORDS, Expr, Function, column, literal, op
from .schema import ColumnSpec
from .types import ASCII_SAFE, LATIN1_SAFE, STRINGS, ColumnType, column_types, quote

DEFAULT_COLLATION = "utf8mb4_general_ci"   # the tables' default (their CREATE says so)
UTF8MB4 = "utf8mb4*"
CHARSET_DEFAULTS: Mapping[str, str] = MappingProxyType({
    "utf8mb4": "utf8mb4_general_ci", "latin1": "latin1_swedish_ci",
    "utf8mb3": "utf8mb3_general_ci", "ascii": "ascii_general_ci"})
# families that compare with each other (anything else: only with itself)
COMPARABLE: Mapping[str, tuple[str, ...]] = MappingProxyType({"int": ("int", "dec", "real"), "dec": ("int", "dec", "real"),
              "real": ("int", "dec", "real"), "str": ("str",), "bin": ("bin",),
              "date": ("date", "datetime"), "datetime": ("date", "datetime"),
              "time": ("time",), "json": (), "inet6": ("inet6",), "uuid": ("uuid",),
              "geom": ()})
ORDERABLE = ("int", "dec", "real", "str", "bin", "date", "datetime", "time", "inet6", "uuid")
# collations whose distinct values may compare equal (which one a query returns is a tie)
_TIE_FREE = ("_bin", "binary")


def collation_of(ctype: ColumnType) -> str:
    """A string column's effective collation."""
    if ctype.collation:
        return ctype.collation
    if ctype.kind == "JSON":
        return "utf8mb4_bin"
    return CHARSET_DEFAULTS.get(ctype.charset, DEFAULT_COLLATION)


def collation_matches(collation: str, wanted: str) -> bool:
    """A collation meets a constraint: the same one, or (wanted ``utf8mb4*``) any of a
    character set a coercible string converts to."""
    if wanted.endswith("*"):
        return collation.startswith(wanted[:-1])
    return collation == wanted


def partner(collation: str) -> str:
    """The constraint for a string combined with one of this collation: the same one, or,
    next to a coercible string (a literal, HEX()...: utf8mb4), a utf8mb4 one."""
    return collation or UTF8MB4


def has_ties(expr: Expr) -> bool:
    """A string under a collation where different strings compare equal."""
    return expr.family in ("str", "json") and not any(
        (expr.collation or DEFAULT_COLLATION).endswith(s) for s in _TIE_FREE)


@dataclass(frozen=True)
class Source:
    """A table (or view, derived table, CTE) in a FROM clause: its alias and columns."""

    alias: str
    columns: tuple[tuple[str, ColumnType, bool], ...]   # (name, type, nullable)
    table: str = ""                  # the base table's name, when it is one
    keys: tuple[tuple[str, ...], ...] = ()               # unique keys' columns (total orders)
    indexes: tuple[str, ...] = ()                        # key names (index hints)
    fulltext: tuple[str, ...] = ()                       # FULLTEXT columns
    rows: int = 10

    @classmethod
    def of(cls, alias: str, columns: Sequence[ColumnSpec], table: str = "",
           keys: Sequence[tuple[str, ...]] = (), indexes: Sequence[str] = (),
           fulltext: Sequence[str] = (), rows: int = 10) -> "Source":
        """A source over column specs."""
        return cls(alias, tuple((c.name, c.type, c.nullable or bool(c.generated))
                                for c in columns if not c.invisible),
                   table, tuple(keys), tuple(indexes), tuple(fulltext), rows)


@dataclass
class Scope:
    """What a query can name: its sources, and the enclosing query's (correlation)."""

    sources: list[Source] = field(default_factory=list)
    outer: "Scope | None" = None

    def columns(self, family: str | None = None, collation: str = "",
                outer: bool = True) -> list[Expr]:
        """Column leaves of a family (any when None) under a collation ('' = any)."""
        found = []
        scopes = [self] + ([self.outer] if outer and self.outer else [])
        for scope in scopes:
            for src in scope.sources:
                for name, ctype, nullable in src.columns:
                    fam = ctype.family
                    if family is not None and fam != family:
                        continue
                    coll = collation_of(ctype) if fam in ("str", "json") else ""
                    if collation and coll and not collation_matches(coll, collation):
                        continue
                    found.append(column(f"{src.alias}.{name}", fam, coll, src.alias, nullable))
        return found


SubqueryMaker = Callable[["ExprGenerator", Scope, str, str], Expr]


class ExprGenerator:
    """Typed expressions and predicates (see the module docstring)."""

    def __init__(self, rng: random.Random, max_depth: int = 3,
                 subquery: SubqueryMaker | None = None, deterministic: bool = True,
                 avoid: frozenset[str] = frozenset(KNOWN_BUGS)) -> None:
        self.rng = rng
        self.avoid = avoid                        # lib.hunt.surface.expr.KNOWN_BUGS to steer clear of
        self.max_depth = max_depth
        self.subquery = subquery
        self.deterministic = deterministic        # leave out nondeterministic functions
        self.types = column_types()

    # ------------------------------------------------------------ leaves
    def literal(self, family: str, collation: str = "") -> Expr:
        """A literal of a family (an edge value of one of its types); a string one that
        the collation's character set can hold."""
        rng = self.rng
        if family == "str" and collation.startswith(("ascii", "latin1", "utf8mb3")) and \
                not collation.endswith("*"):
            pool = ASCII_SAFE if collation.startswith("ascii") else \
                LATIN1_SAFE if collation.startswith("latin1") else \
                tuple(t for t in STRINGS if t != "😀")
            return literal(quote(rng.choice(pool)), "str")
        if family == "bool":
            return literal(rng.choice(("TRUE", "FALSE", "NULL", "1", "0")), "bool")
        if rng.random() < 0.06:
            return literal("NULL", family)
        if family == "str" and rng.random() < 0.5:
            ctype = next(t for t in self.types["str"] if t.kind == "VARCHAR")
        elif family in self.types and self.types[family]:
            ctype = rng.choice([t for t in self.types[family] if t.kind not in ("ENUM", "SET")]
                               or self.types[family])
        else:
            return literal("NULL", family)
        text = ctype.literal(rng)
        if family == "dec" and "." not in text:
            text += ".0"          # a decimal, not an integer (whose + - overflow are errors)
        if family in ("date", "datetime", "time") and rng.random() < 0.5:
            keyword = {"date": "DATE", "datetime": "TIMESTAMP", "time": "TIME"}[family]
            if not text.startswith("'-") and family != "time":
                text = f"{keyword}{text}"
        if family == "inet6":
            text = f"CAST({text} AS INET6)"
        elif family == "uuid":
            text = f"CAST({text} AS UUID)"
        elif family == "json":
            text = f"JSON_COMPACT({text})" if rng.random() < 0.3 else text
        elif family == "bin" and text == "''":
            text = "X''"
        return literal(text, family)

    def leaf(self, scope: Scope, family: str, collation: str = "") -> Expr:
        """A column of the family in scope (mostly) or a literal."""
        cols = scope.columns(family, collation)
        if cols and self.rng.random() < 0.75:
            return self.rng.choice(cols)
        return self.literal(family, collation)

    # ------------------------------------------------------------ values
    def value(self, scope: Scope, family: str, depth: int = 0, collation: str = "") -> Expr:
        """An expression of a family (bool: a predicate)."""
        if family == "bool":
            return self.predicate(scope, depth)
        rng = self.rng
        if depth >= self.max_depth or rng.random() < 0.35 + 0.15 * depth:
            return self.leaf(scope, family, collation)
        roll = rng.random()
        if roll < 0.12:
            return self._special(scope, family, depth, collation)
        if roll < 0.16 and self.subquery is not None and depth < 2 and not collation:
            return self.subquery(self, scope, "scalar", family)
        fns = [f for f in CATALOG.get(family, ()) if not (self.deterministic and f.nondet)
               and not (f.name == "ST_Distance" and "st-distance-pushdown" in self.avoid)]
        if collation and family == "str":
            fns = [f for f in fns if f.keeps_collation or
                   (f.collation and collation_matches(f.collation, collation))]
        if not fns:
            return self.leaf(scope, family, collation)
        return self.call(scope, rng.choice(fns), depth, collation)

    def call(self, scope: Scope, fn: Function, depth: int, collation: str = "") -> Expr:
        """A call of a catalog function with generated arguments."""
        args: list[Expr] = []
        coll = collation
        if fn.name == "COLLATE":
            utf8 = [c for c in scope.columns("str") if c.collation.startswith("utf8mb4")]
            if not utf8:
                return self.literal("str", collation)
            return op(fn.template, (self.rng.choice(utf8),), "str", fn.name, "utf8mb4_bin")
        for kind in fn.args:
            if kind in WORDS:
                words = WORDS[kind]
                if coll.startswith(("ascii", "latin1")) or any(
                        a.collation.startswith(("ascii", "latin1")) for a in args):
                    words = tuple(w for w in words if w.isascii()) or words
                args.append(Expr(self.rng.choice(words), family="word", leaf="literal"))
                continue
            family = self._arg_family(kind)
            wanted = ""
            if family == "str" and (fn.same_collation or fn.keeps_collation):
                earlier = any(a.family == "str" for a in args)
                wanted = coll or (UTF8MB4 if earlier else "")
            arg = self.value(scope, family, depth + 1, wanted)
            if arg.family == "str" and arg.collation and fn.same_collation and \
                    (not coll or coll.endswith("*")):
                coll = arg.collation
            args.append(arg)
        result_coll = ""
        if fn.keeps_collation:
            result_coll = next((a.collation for a in args if a.family in ("str", "json")
                                and a.collation), "")
        if fn.collation:
            result_coll = fn.collation
        if fn.name == "CONVERT":    # CONVERT(x USING cs): cs's default collation, IMPLICIT
            result_coll = CHARSET_DEFAULTS.get(args[1].template, "binary")
        return op(fn.template, tuple(args), fn.family, fn.name, result_coll, fn.nondet)

    def _arg_family(self, kind: str) -> str:
        if kind == "num":
            return self.rng.choice(("int", "int", "dec", "real"))
        if kind == "any":
            return self.rng.choice(("int", "dec", "str", "str", "date", "datetime", "time"))
        return kind

    def _special(self, scope: Scope, family: str, depth: int, collation: str) -> Expr:
        rng = self.rng
        kind = rng.choice(("CASE", "IF", "IFNULL", "COALESCE", "NULLIF", "GREATEST_ANY",
                           "LEAST_ANY"))
        if kind == "NULLIF" and family in ("geom", "json"):
            kind = "COALESCE"
        if kind in ("GREATEST_ANY", "LEAST_ANY") and family not in ("int", "dec", "real", "date",
                                                                    "datetime"):
            kind = "IFNULL"
        a = self.value(scope, family, depth + 1, collation)
        coll = collation or (partner(a.collation) if family == "str" else "")
        b = self.value(scope, family, depth + 1, coll)
        if kind == "CASE":
            p = self.predicate(scope, depth + 1)
            return op("(CASE WHEN {0} THEN {1} ELSE {2} END)", (p, a, b), family, "CASE",
                      a.collation or b.collation)
        if kind == "IF":
            p = self.predicate(scope, depth + 1)
            return op("IF({0}, {1}, {2})", (p, a, b), family, "IF", a.collation or b.collation)
        name = {"GREATEST_ANY": "GREATEST", "LEAST_ANY": "LEAST"}.get(kind, kind)
        return op(f"{name}({{0}}, {{1}})", (a, b), family, kind, a.collation or b.collation)

    # ------------------------------------------------------------ predicates
    def comparable_pair(self, scope: Scope, depth: int) -> tuple[Expr, Expr]:
        """Two expressions that may be compared."""
        rng = self.rng
        cols = [c for c in scope.columns() if c.family not in ("geom", "json")]
        family = rng.choice(cols).family if cols and rng.random() < 0.8 else \
            rng.choice(("int", "dec", "str", "date", "datetime", "time"))
        a = self.value(scope, family, depth + 1)
        other = rng.choice(COMPARABLE.get(family, (family,)) or (family,))
        if rng.random() < 0.6:
            other = family
        b = self.value(scope, other, depth + 1, partner(a.collation) if other == "str" else "")
        if a.family == "str" and b.family == "str" and a.collation and b.collation and \
                a.collation != b.collation:
            b = self.literal("str", a.collation)
        return a, b

    def _in_list(self, scope: Scope, depth: int) -> Expr:
        """``x [NOT] IN (v, ...)`` over a value and 1 to 4 of its family."""
        rng = self.rng
        a, _ = self.comparable_pair(scope, depth)
        coll = partner(a.collation) if a.family == "str" else ""
        found: list[Expr] = []
        for _ in range(rng.randint(1, 4)):
            item = self.value(scope, a.family, self.max_depth, coll)
            if a.family == "str" and coll.endswith("*") and item.collation:
                coll = item.collation
            found.append(item)
        items = tuple(found)
        name = rng.choice(("IN", "NOT IN"))
        holes = ", ".join(f"{{{i + 1}}}" for i in range(len(items)))
        return op(f"({{0}} {name} ({holes}))", (a, *items), "bool", name)

    def _match(self, scope: Scope) -> Expr | None:
        """``MATCH (col) AGAINST (...)`` over a FULLTEXT column in scope, else None."""
        rng = self.rng
        fulltext = [(s.alias, c) for s in scope.sources for c in s.fulltext]
        if not fulltext:
            return None
        alias, col = rng.choice(fulltext)
        word = rng.choice(("'a'", "'abc'", "'ss'", "'+a -b'", "'\"a b\"'", "'ä*'"))
        mode = rng.choice(("", " IN BOOLEAN MODE", " IN NATURAL LANGUAGE MODE",
                           " WITH QUERY EXPANSION"))
        return op(f"MATCH ({alias}.{col}) AGAINST ({word}{mode})", (), "bool", "MATCH_AGAINST")

    def predicate(self, scope: Scope, depth: int = 0) -> Expr:
        """A condition (family bool)."""
        rng = self.rng
        if depth >= self.max_depth:
            a, b = self.comparable_pair(scope, self.max_depth)
            return op(f"({{0}} {rng.choice(COMPARISONS)} {{1}})", (a, b), "bool", "compare")
        roll = rng.random()
        if roll < 0.30:
            a, b = self.comparable_pair(scope, depth)
            name = rng.choice(COMPARISONS)
            return op(f"({{0}} {name} {{1}})", (a, b), "bool", name)
        if roll < 0.42:
            name = rng.choice(("AND", "OR", "XOR", "AND", "OR"))
            return op(f"({{0}} {name} {{1}})", (self.predicate(scope, depth + 1),
                                                  self.predicate(scope, depth + 1)), "bool", name)
        if roll < 0.47:
            return op("(NOT {0})", (self.predicate(scope, depth + 1),), "bool", "NOT")
        if roll < 0.55:
            cols = [c for c in scope.columns() if c.family != "geom"]
            target = rng.choice(cols) if cols else self.value(scope, "int", depth + 1)
            name = rng.choice(("IS NULL", "IS NOT NULL"))
            return op(f"({{0}} {name})", (target,), "bool", name)
        if roll < 0.60:
            name = rng.choice(("IS TRUE", "IS FALSE", "IS UNKNOWN", "IS NOT TRUE"))
            return op(f"({{0}} {name})", (self.predicate(scope, depth + 1),), "bool", name)
        if roll < 0.67:
            a, b = self.comparable_pair(scope, depth)
            c = self.value(scope, b.family, depth + 1,
                           partner(a.collation or b.collation) if b.family == "str" else "")
            name = rng.choice(("BETWEEN", "NOT BETWEEN"))
            return op(f"({{0}} {name} {{1}} AND {{2}})", (a, b, c), "bool", name)
        if roll < 0.75:
            return self._in_list(scope, depth)
        if roll < 0.85 and self.subquery is not None and depth < 2:
            kind = rng.choice(("EXISTS", "IN_SUBQUERY", "NOT_IN_SUBQUERY", "ANY", "ALL",
                               "EXISTS", "IN_SUBQUERY"))
            return self.subquery(self, scope, kind, "bool")
        if roll < 0.88:
            match = self._match(scope)
            if match is not None:
                return match
        fns = [f for f in CATALOG["bool"] if not (self.deterministic and f.nondet)]
        if fns and rng.random() < 0.7:
            fn = rng.choice(fns)
            usable = all(k in WORDS or scope.columns(self._arg_family(k)) or k in
                         ("str", "json", "int") for k in fn.args)
            if usable:
                return self.call(scope, fn, depth + 1)
        a, b = self.comparable_pair(scope, depth)
        name = rng.choice(COMPARISONS)
        return op(f"({{0}} {name} {{1}})", (a, b), "bool", name)
