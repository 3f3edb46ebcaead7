"""MariaDB's SQL surface, generated: a schema with data over every column type family, key
kind, engine and table feature, and typed statements over it -- SELECTs of every shape,
DML, DDL, prepared statements, session variables, transactions (docs/hunting.md, "The
surface generator").

Modules, by job:

- ``types``: column types by family, with their edge values;
- ``schema``: tables, keys, partitioning, generated columns, versioning, periods,
  sequences, views, as specs that render their DDL and rows;
- ``expr``: typed expression trees and the catalog of functions and operators;
- ``exprgen``: drawing expressions and predicates over the columns in scope;
- ``select``: a SELECT as a tree;
- ``querygen``: drawing SELECTs (joins, subqueries, CTEs, windows, set operations...);
- ``statements``: the stream of statements of every kind;
- ``coverage``: what a stream covers;
- ``load``: the stream as a hunt load on randgen's engine (``--sql-file=surface``).

The API an oracle uses -- "a schema and its data, and a stream of typed queries, for
seed S" -- is :class:`Surface`::

    surface = Surface(seed=7)
    for sql in surface.setup():            # DROP ..., CREATE ..., INSERT ...
        cursor.execute(sql)
    for q in surface.queries(100):         # deterministic SELECTs, with their trees
        q.sql, q.select.where, q.columns(), q.features
    for s in surface.statements(100, thread=1):   # everything, for a load
        s.kind, s.sql, s.nondet

The same seed gives the same schema, data and statements on every machine.
"""
from __future__ import annotations

import random
from typing import Mapping, Sequence

from .expr import KNOWN_BUGS
from .schema import ENGINES, SchemaSpec, generate_schema
from .statements import Statement, StatementGenerator

__all__ = ("Surface", "SchemaSpec", "Statement", "StatementGenerator", "ENGINES")


class Surface:
    """The generator of one seed: a schema with data, and streams of statements."""

    def __init__(self, seed: int, engines: Sequence[str] = ENGINES,
                 avoid: frozenset[str] = frozenset(KNOWN_BUGS)) -> None:
        self.seed = seed
        self.schema = generate_schema(seed, engines, avoid)
        self.avoid = avoid           # lib.hunt.surface.expr.KNOWN_BUGS steered clear of

    def setup(self, keys: bool = True) -> list[str]:
        """Drop, create and fill everything (keys=False: the same tables and rows without
        keys, constraints, partitioning, versioning or views -- Radar's plain copy)."""
        return self.schema.setup(keys)

    def stream(self, thread: int = 0, deterministic: bool = False,
               weights: Mapping[str, int] | None = None) -> StatementGenerator:
        """A thread's statement generator (its own PRNG: the seed and the thread)."""
        return StatementGenerator(self.schema, random.Random(f"surface:{self.seed}:{thread}"),
                                  deterministic, weights, prefix=f"{thread}_" if thread else "",
                                  avoid=self.avoid)

    def statements(self, count: int, thread: int = 0) -> list[Statement]:
        """At least count statements of every kind (a load's)."""
        return self.stream(thread).statements(count)

    def queries(self, count: int, thread: int = 0) -> list[Statement]:
        """count deterministic SELECTs (an oracle's): their answers depend on the data
        alone; each keeps its tree (``select``)."""
        gen = self.stream(thread, deterministic=True)
        out: list[Statement] = []
        while len(out) < count:
            q = gen.select()
            if q.deterministic:
                out.append(q)
        return out
