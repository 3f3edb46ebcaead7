"""TLP (ternary logic partitioning): a query against its three partitions.

For a generated FROM clause ``f`` and predicate ``p``, every row has ``p``
true, false or NULL, exactly one of them; so a query ``Q`` over ``f`` must
equal the combination of ``Q WHERE p``, ``Q WHERE NOT (p)`` and ``Q WHERE
(p) IS NULL`` (Rigger and Su, "Finding Bugs in Database Systems via Query
Partitioning", 2020).  Variants:

- ``rows``: ``SELECT cols FROM f`` against the ``UNION ALL`` of the three,
  compared as multisets;
- ``distinct``: ``SELECT DISTINCT cols`` against their ``UNION``, as sets;
  only columns that are not strings (under a case- or accent-insensitive
  collation, which of two equal strings DISTINCT keeps depends on the plan);
- ``aggregate``: ``SELECT AGG(x) FROM f`` against the aggregate of the three
  partitions' aggregates: ``COUNT(*)``/``COUNT(x)`` summed, ``SUM(x)`` of
  integer and decimal columns summed, ``MIN``/``MAX`` of numbers and temporal
  values (never strings, for the same reason; never floats, whose text form
  may change through the derived table).

No ``LIMIT``, no ``ORDER BY``: the comparison is of multisets.
"""
from __future__ import annotations

from .execute import Outcome
from .generator import GeneratorOptions, SqlGenerator
from .oracle import Check, OracleBase, Verdict, same_rows
from .schema import ColumnInfo, quote_name

AGG_MIN_MAX_CLASSES = ("int", "dec", "date", "datetime", "time", "year")
SUM_CLASSES = ("int", "dec")


class TLPOracle(OracleBase):
    """The TLP oracle (name ``tlp``) on the first connection's server."""

    name = "tlp"

    def default_options(self) -> GeneratorOptions:
        """The unpartitioned query fetches every row: joins stay small."""
        return GeneratorOptions(max_join_rows=5_000)

    def generate(self, gen: SqlGenerator) -> Check | None:
        """Q and the UNION [ALL] of its three partitions, in one of the variants."""
        fc = gen.from_clause()
        if fc is None:
            return None
        p = gen.predicate(fc.scope)
        parts = (f"WHERE {p}", f"WHERE NOT ({p})", f"WHERE ({p}) IS NULL")
        variant = gen.weighted([(4, "rows"), (2, "distinct"), (3, "aggregate")])
        cols = fc.scope.columns()
        if variant == "distinct":
            cols = [(a, c) for a, c in cols if c.type_class != "str"]
            if not cols:
                variant = "rows"
                cols = fc.scope.columns()
        if variant == "aggregate":
            agg = self._aggregate(gen, fc.scope.columns())
            inner = " UNION ALL ".join(f"SELECT {agg[0]} AS a FROM {fc.sql} {w}" for w in parts)
            return Check((f"SELECT {agg[0]} FROM {fc.sql}",
                          f"SELECT {agg[1]}(a) FROM ({inner}) AS tlp"), "aggregate")
        picked = [cols[gen.rng.randrange(len(cols))] for _ in range(gen.rng.randrange(1, 4))]
        fetch = ", ".join(f"{a}.{quote_name(c.name)}" for a, c in picked)
        if variant == "distinct":
            union = " UNION ".join(f"SELECT DISTINCT {fetch} FROM {fc.sql} {w}" for w in parts)
            return Check((f"SELECT DISTINCT {fetch} FROM {fc.sql}", union), "distinct")
        union = " UNION ALL ".join(f"SELECT {fetch} FROM {fc.sql} {w}" for w in parts)
        return Check((f"SELECT {fetch} FROM {fc.sql}", union), "rows")

    @staticmethod
    def _aggregate(gen: SqlGenerator, cols: list[tuple[str, ColumnInfo]]) -> tuple[str, str]:
        """(the aggregate over one partition, the aggregate combining the partitions')."""
        minmax = [(a, c) for a, c in cols
                  if c.type_class in AGG_MIN_MAX_CLASSES and c.data_type != "bit"]
        summable = [(a, c) for a, c in cols if c.type_class in SUM_CLASSES]
        options = [(2.0, "count*"), (1.0, "count")]
        options += [(3.0, "minmax")] if minmax else []
        options += [(2.0, "sum")] if summable else []
        kind = gen.weighted(options)
        if kind == "count*":
            return "COUNT(*)", "SUM"
        if kind == "count":
            a, c = gen.choice(cols)
            return f"COUNT({a}.{quote_name(c.name)})", "SUM"
        if kind == "sum":
            a, c = gen.choice(summable)
            return f"SUM({a}.{quote_name(c.name)})", "SUM"
        a, c = gen.choice(minmax)
        fn = gen.choice(("MIN", "MAX"))
        return f"{fn}({a}.{quote_name(c.name)})", fn

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when Q's rows equal the partitions' (as multisets; as sets for distinct)."""
        return judge_partitions(f"TLP ({check.variant})", outcomes)


def judge_partitions(label: str, outcomes: list[Outcome]) -> Verdict:
    """TLP's verdict and its variants': agree when the whole query's rows (the first
    outcome) equal the partitions' (the second) as multisets; label starts the detail."""
    return same_rows(outcomes, label, "in the whole query", "in the partitions")
