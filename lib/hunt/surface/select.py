"""A SELECT as a tree: :class:`Select` with its FROM items, joins, clauses, CTEs and set
operations, rendered by :meth:`Select.sql`.

The tree is what oracles change: TLP and NoREC replace ``where``
(:meth:`Select.with_where`), Pinolo relaxes it, DQE moves it into an UPDATE or a
DELETE, DQP renders the same tree under other plans (index hints are
``TableRef.hint``), EET rewrites the expressions (:class:`~lib.hunt.surface.expr.Expr`
trees).  ``features`` names the clauses a query uses (for the coverage figures);
:meth:`Select.nondet` says why its answer may change between runs on the same data
(empty: it does not) -- an oracle that compares answers skips a query with a
reason it cares about.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from .expr import Expr
from .exprgen import Source


@dataclass(frozen=True)
class TableRef:
    """A FROM item: a table or view, a derived table, a CTE reference, a JSON_TABLE."""

    text: str                        # the item without alias: t1, (SELECT ...), JSON_TABLE(...)
    alias: str
    source: Source
    kind: str = "table"              # table, view, derived, cte, json_table
    hint: str = ""                   # USE/FORCE/IGNORE INDEX (...)
    system_time: str = ""            # FOR SYSTEM_TIME ALL / AS OF ...
    features: frozenset[str] = frozenset()
    nondet: frozenset[str] = frozenset()

    def sql(self) -> str:
        """As written in FROM."""
        text = self.text
        if self.system_time:
            text += f" FOR SYSTEM_TIME {self.system_time}"
        text += f" AS {self.alias}"
        if self.hint:
            text += f" {self.hint}"
        return text


@dataclass(frozen=True)
class Join:
    """A join to the FROM clause's next item."""

    kind: str                        # JOIN, LEFT JOIN, RIGHT JOIN, CROSS JOIN, STRAIGHT_JOIN...
    right: TableRef
    on: Expr | None = None
    using: tuple[str, ...] = ()

    def sql(self) -> str:
        """As written after the previous item."""
        text = f" {self.kind} {self.right.sql()}"
        if self.using:
            text += f" USING ({', '.join(self.using)})"
        elif self.on is not None:
            text += f" ON {self.on.sql()}"
        return text


@dataclass(frozen=True)
class SelectItem:
    """An expression of the select list and its alias."""

    expr: Expr
    alias: str


@dataclass(frozen=True)
class Cte:
    """A common table expression: WITH name (columns) AS (body)."""

    name: str
    columns: tuple[str, ...]
    body: str
    source: Source
    recursive: bool = False
    features: frozenset[str] = frozenset()
    nondet: frozenset[str] = frozenset()

    def sql(self) -> str:
        """As written in WITH."""
        return f"{self.name} ({', '.join(self.columns)}) AS ({self.body})"


@dataclass(frozen=True)
class Select:
    """A SELECT (see the module docstring)."""

    items: tuple[SelectItem, ...]
    first: TableRef | None = None
    joins: tuple[Join, ...] = ()
    where: Expr | None = None
    group_by: tuple[Expr, ...] = ()
    rollup: bool = False
    having: Expr | None = None
    order_by: tuple[tuple[Expr, bool], ...] = ()    # (expression, descending)
    limit: int | None = None
    offset: int = 0
    distinct: bool = False
    modifiers: tuple[str, ...] = ()                  # SQL_SMALL_RESULT, STRAIGHT_JOIN...
    ctes: tuple[Cte, ...] = ()
    setops: tuple[tuple[str, "Select"], ...] = ()     # (UNION ALL, member)...
    locking: str = ""                                # FOR UPDATE, LOCK IN SHARE MODE
    features: frozenset[str] = frozenset()           # clause features of this query
    nondet_reasons: frozenset[str] = frozenset()     # query-level: LIMIT over ties...

    # ------------------------------------------------------------ rendering
    def sql(self) -> str:
        """The statement."""
        text = ""
        if self.ctes:
            recursive = "RECURSIVE " if any(c.recursive for c in self.ctes) else ""
            text = f"WITH {recursive}" + ", ".join(c.sql() for c in self.ctes) + " "
        text += self.core_sql()
        for name, member in self.setops:
            text += f" {name} {member.core_sql()}"
        if self.order_by:
            # a selected expression is ordered by its alias (its position after a set
            # operation): ORDER BY -5 would be a position, a repeated subquery run again
            aliases = {id(i.expr): (n, i.alias) for n, i in enumerate(self.items, start=1)}
            keys = []
            for e, desc in self.order_by:
                found = aliases.get(id(e))
                key = e.sql() if found is None else str(found[0]) if self.setops else found[1]
                keys.append(key + (" DESC" if desc else ""))
            text += " ORDER BY " + ", ".join(keys)
        if self.limit is not None:
            text += f" LIMIT {self.limit}" + (f" OFFSET {self.offset}" if self.offset else "")
        if self.locking:
            text += f" {self.locking}"
        return text

    def core_sql(self) -> str:
        """The SELECT ... FROM ... WHERE ... GROUP BY ... HAVING part (no WITH, set
        operation, ORDER BY or LIMIT)."""
        head = "SELECT " + ("DISTINCT " if self.distinct else "")
        head += "".join(m + " " for m in self.modifiers)
        head += ", ".join(f"{i.expr.sql()} AS {i.alias}" for i in self.items)
        if self.first is not None:
            head += " FROM " + self.first.sql() + "".join(j.sql() for j in self.joins)
        if self.where is not None:
            head += " WHERE " + self.where.sql()
        if self.group_by:
            head += " GROUP BY " + ", ".join(e.sql() for e in self.group_by)
            if self.rollup:
                head += " WITH ROLLUP"
        if self.having is not None:
            head += " HAVING " + self.having.sql()
        return head

    # ------------------------------------------------------------ what it is
    def expressions(self) -> list[Expr]:
        """Every expression of this query level (not inside set-operation members)."""
        out = [i.expr for i in self.items] + list(self.group_by) + [e for e, _ in self.order_by]
        out += [e for e in (self.where, self.having) if e is not None]
        out += [j.on for j in self.joins if j.on is not None]
        return out

    def all_features(self) -> frozenset[str]:
        """The clauses, functions and operators the statement uses."""
        out = set(self.features)
        for e in self.expressions():
            out |= e.all_features()
        for ref in self.refs():
            out |= ref.features
        for cte in self.ctes:
            out |= cte.features
        for _, member in self.setops:
            out |= member.all_features()
        return frozenset(out)

    def nondet(self) -> frozenset[str]:
        """Why the answer may change between runs on the same data (empty: it does not)."""
        out = set(self.nondet_reasons)
        for e in self.expressions():
            out |= e.all_nondet()
        for ref in self.refs():
            out |= ref.nondet
        for cte in self.ctes:
            out |= cte.nondet
        for _, member in self.setops:
            out |= member.nondet()
        return frozenset(out)

    def refs(self) -> list[TableRef]:
        """The FROM items, in order."""
        return ([self.first] if self.first is not None else []) + [j.right for j in self.joins]

    def columns(self) -> list[tuple[str, str]]:
        """The result's columns: (alias, family)."""
        return [(i.alias, i.expr.family) for i in self.items]

    def with_where(self, where: Expr | None) -> "Select":
        """The same query with another WHERE (None: none)."""
        return replace(self, where=where)

    def without_order(self) -> "Select":
        """The same query without ORDER BY and LIMIT (a multiset of rows)."""
        return replace(self, order_by=(), limit=None, offset=0)


def items_from(exprs: Sequence[Expr], prefix: str = "r") -> tuple[SelectItem, ...]:
    """Select items named r1, r2..."""
    return tuple(SelectItem(e, f"{prefix}{n}") for n, e in enumerate(exprs, start=1))
