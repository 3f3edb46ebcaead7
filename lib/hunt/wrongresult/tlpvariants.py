"""TLP's variants for aggregates, DISTINCT, GROUP BY and HAVING (as SQLancer's).

Every row of a FROM clause ``f`` has a predicate ``p`` true, false or NULL,
exactly one of them (:mod:`~lib.hunt.wrongresult.tlp`); each variant checks a
clause against the combination of its three partitions ``WHERE p``, ``WHERE
NOT (p)``, ``WHERE (p) IS NULL``:

- ``tlp-aggregate``: ``SELECT AGG(e) FROM f`` against the aggregate of the
  partitions' aggregates (a derived table of their ``UNION ALL``): ``COUNT``
  (``*`` or of a value) and ``SUM`` of integers and decimals summed, ``MIN``/
  ``MAX`` of numbers and temporal values by ``MIN``/``MAX``, ``BIT_AND``/
  ``BIT_OR``/``BIT_XOR`` by themselves, ``AVG`` as ``SUM(s) / SUM(c)`` of the
  partitions' ``SUM`` and ``COUNT``; ``e`` is any generated value of its
  class, not only a column;
- ``tlp-distinct``: ``SELECT DISTINCT e1, e2 FROM f`` against the ``UNION``
  of the three ``SELECT DISTINCT``, as sets;
- ``tlp-groupby``: ``SELECT k1, k2 FROM f GROUP BY k1, k2`` against the
  ``UNION`` of the partitions grouped alike (``keys``), or, with aggregates,
  ``SELECT k, COUNT(*), SUM(x), MIN(y)... GROUP BY k`` against the
  partitions' groups regrouped by ``k`` in a derived table (``aggregates``);
- ``tlp-having``: ``SELECT k, AGG... FROM f GROUP BY k`` against the
  ``UNION ALL`` of it with ``HAVING h``, ``HAVING NOT (h)`` and ``HAVING (h)
  IS NULL`` (the partition is on the groups, by a condition on their
  aggregates and keys), as multisets.

The care: keys, DISTINCT values, MIN/MAX never strings (under a case- or
accent-insensitive collation, which of two equal strings a plan keeps is not
defined); SUM/AVG never of floats (the sum's rounding depends on the order);
a bare BIT column never aggregated or grouped (``b + 0``: its value changes
type in the derived table, and the known bug ``bit-group``); MIN/MAX of a
column (``minmax-constant-empty``); SUM/AVG never of a DECIMAL wider than 43
digits (the partitions' sums stored in the derived table would be clipped); a key that names no column is left out of GROUP BY (an
integer literal there is a column position).
"""
from __future__ import annotations

from .execute import Outcome
from .generator import FromClause, GeneratorOptions, SqlGenerator
from .oracle import Check, OracleBase, Verdict
from .queries import (MINMAX_CLASSES, NOT_STR, avg_argument, column_value, exact_value,
                      having_predicate, is_position, summable, values)
from .schema import free_aliases
from .tlp import judge_partitions


def _partitions(gen: SqlGenerator, fc: FromClause) -> tuple[str, str, str]:
    """``WHERE p``, ``WHERE NOT (p)``, ``WHERE (p) IS NULL`` for a new predicate p."""
    p = gen.predicate(fc.scope)
    return (f"WHERE {p}", f"WHERE NOT ({p})", f"WHERE ({p}) IS NULL")


def _aggregate(gen: SqlGenerator, fc: FromClause, a: str = "a", b: str = "b"
               ) -> tuple[str, str, str]:
    """(the aggregate over the whole, the partitions' items named a (and b), how they
    combine: SQL over the derived columns a and b)."""
    scope = fc.scope
    kind = gen.weighted([(2, "count*"), (2, "count"), (3, "sum"), (4, "minmax"), (2, "bit"),
                         (2, "avg")])
    if kind == "count*":
        return "COUNT(*)", f"COUNT(*) AS {a}", f"SUM({a})"
    if kind == "count":
        e = values(gen, scope, 1)[0]
        return f"COUNT({e})", f"COUNT({e}) AS {a}", f"SUM({a})"
    if kind in ("sum", "avg"):
        summed = summable(gen, scope, True)
        if summed is None:
            return "COUNT(*)", f"COUNT(*) AS {a}", f"SUM({a})"
        e = summed
        if kind == "sum":
            return f"SUM({e})", f"SUM({e}) AS {a}", f"SUM({a})"
        e = avg_argument(gen, e)
        return f"AVG({e})", f"SUM({e}) AS {a}, COUNT({e}) AS {b}", f"SUM({a}) / SUM({b})"
    if kind == "bit":
        e = exact_value(gen, scope, "int")
        fn = gen.choice(("BIT_AND", "BIT_OR", "BIT_XOR"))
        return f"{fn}({e})", f"{fn}({e}) AS {a}", f"{fn}({a})"
    m = column_value(gen, scope, MINMAX_CLASSES, exact=True)
    if m is None:
        return "COUNT(*)", f"COUNT(*) AS {a}", f"SUM({a})"
    fn = gen.choice(("MIN", "MAX"))
    return f"{fn}({m})", f"{fn}({m}) AS {a}", f"{fn}({a})"


class _TLPVariant(OracleBase):
    """What the variants share: the joins stay small, the rows compare as multisets."""

    def default_options(self) -> GeneratorOptions:
        """The whole query fetches every group or row: joins stay small."""
        return GeneratorOptions(max_join_rows=5_000)

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when the whole query's rows equal the partitions' combination."""
        return judge_partitions(f"{self.name} ({check.variant})", outcomes)


class TLPAggregateOracle(_TLPVariant):
    """TLP over aggregates (name ``tlp-aggregate``)."""

    name = "tlp-aggregate"

    def generate(self, gen: SqlGenerator) -> Check | None:
        """``SELECT AGG(e) FROM f`` and its partitions' aggregates combined."""
        fc = gen.from_clause()
        if fc is None:
            return None
        whole, item, combine = _aggregate(gen, fc)
        parts = _partitions(gen, fc)
        union = " UNION ALL ".join(f"SELECT {item} FROM {fc.sql} {w}" for w in parts)
        variant = whole.split("(", 1)[0].lower()
        return Check((f"SELECT {whole} FROM {fc.sql}",
                      f"SELECT {combine} FROM ({union}) AS tlp"), variant)


class TLPDistinctOracle(_TLPVariant):
    """TLP over DISTINCT (name ``tlp-distinct``)."""

    name = "tlp-distinct"

    def generate(self, gen: SqlGenerator) -> Check | None:
        """``SELECT DISTINCT values FROM f`` and the UNION of its partitions."""
        fc = gen.from_clause()
        if fc is None:
            return None
        items = ", ".join(values(gen, fc.scope, gen.rng.randrange(1, 4), NOT_STR, exact=True))
        parts = _partitions(gen, fc)
        union = " UNION ".join(f"SELECT DISTINCT {items} FROM {fc.sql} {w}" for w in parts)
        return Check((f"SELECT DISTINCT {items} FROM {fc.sql}", union), "distinct")


class TLPGroupByOracle(_TLPVariant):
    """TLP over GROUP BY (name ``tlp-groupby``)."""

    name = "tlp-groupby"

    def generate(self, gen: SqlGenerator) -> Check | None:
        """``keys``: grouped keys against the UNION of the partitions grouped alike;
        ``aggregates``: keys with aggregates against the partitions' groups regrouped."""
        fc = gen.from_clause()
        if fc is None:
            return None
        keys = [k for k in values(gen, fc.scope, gen.rng.randrange(1, 3), NOT_STR, exact=True)
                if not is_position(k)]
        if not keys:
            return None
        parts = _partitions(gen, fc)
        listed = ", ".join(keys)
        if gen.chance(0.5):
            union = " UNION ".join(f"SELECT {listed} FROM {fc.sql} {w} GROUP BY {listed}"
                                   for w in parts)
            return Check((f"SELECT {listed} FROM {fc.sql} GROUP BY {listed}", union), "keys")
        aggs = [_aggregate(gen, fc, f"a{i}", f"b{i}") for i in range(gen.rng.randrange(1, 3))]
        names = free_aliases("k", len(keys), fc.scope.column_names())
        inner_items = [f"{k} AS {n}" for k, n in zip(keys, names)]
        outer_items = list(names)
        whole_items = list(keys)
        for whole, item, combine in aggs:
            inner_items.append(item)
            outer_items.append(combine)
            whole_items.append(whole)
        union = " UNION ALL ".join(f"SELECT {', '.join(inner_items)} FROM {fc.sql} {w} "
                                   f"GROUP BY {listed}" for w in parts)
        return Check((f"SELECT {', '.join(whole_items)} FROM {fc.sql} GROUP BY {listed}",
                      f"SELECT {', '.join(outer_items)} FROM ({union}) AS tlp "
                      f"GROUP BY {', '.join(names)}"), "aggregates")


class TLPHavingOracle(_TLPVariant):
    """TLP over HAVING (name ``tlp-having``)."""

    name = "tlp-having"

    def generate(self, gen: SqlGenerator) -> Check | None:
        """A grouped query against the UNION ALL of it with HAVING h, NOT h, h IS NULL."""
        fc = gen.from_clause()
        if fc is None:
            return None
        keys = [k for k in values(gen, fc.scope, gen.rng.randrange(1, 3), NOT_STR, exact=True)
                if not is_position(k)]
        if not keys:
            return None
        names = free_aliases("g", len(keys), fc.scope.column_names())
        items = [f"{k} AS {n}" for k, n in zip(keys, names)]
        items += [_aggregate(gen, fc)[0] for _ in range(gen.rng.randrange(1, 3))]
        where = f" WHERE {gen.predicate(fc.scope)}" if gen.chance(0.4) else ""
        h = having_predicate(gen, fc.scope, names, keys)
        base = f"SELECT {', '.join(items)} FROM {fc.sql}{where} GROUP BY {', '.join(keys)}"
        union = " UNION ALL ".join(f"{base} HAVING {c}"
                                   for c in (h, f"NOT ({h})", f"({h}) IS NULL"))
        return Check((base, union), "having")
