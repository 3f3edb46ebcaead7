"""NoREC: a predicate counted by the optimizer and counted row by row.

For a generated predicate ``p`` over a generated FROM clause (one table or
a join):

- optimized: ``SELECT COUNT(*) FROM f WHERE p`` (the optimizer may use
  indexes, ranges, join orders, rewrites of ``p``);
- unoptimized: ``SELECT SUM((p) IS TRUE) FROM f`` or ``SELECT SUM(CASE WHEN
  p THEN 1 ELSE 0 END) FROM f`` (``p`` is a value computed for every row).

Both count the rows where ``p`` is true; a different count is a finding
(Rigger and Su, "Detecting Optimization Bugs in Database Engines via
Non-Optimizing Reference Engine Construction", 2020).  ``SUM`` of no rows
is ``NULL``: it counts as 0.
"""
from __future__ import annotations

from .execute import Outcome
from .generator import GeneratorOptions, SqlGenerator
from .oracle import Check, OracleBase, Verdict
from .result import render_value


class NoRECOracle(OracleBase):
    """The NoREC oracle (name ``norec``) on the first connection's server."""

    name = "norec"

    def default_options(self) -> GeneratorOptions:
        """Counting fetches one row: joins may be larger than TLP's."""
        return GeneratorOptions(max_join_rows=100_000)

    def generate(self, gen: SqlGenerator) -> Check | None:
        """The optimized and the unoptimized count of one predicate."""
        fc = gen.from_clause()
        if fc is None:
            return None
        p = gen.predicate(fc.scope)
        optimized = f"SELECT COUNT(*) FROM {fc.sql} WHERE {p}"
        if gen.chance(0.5):
            return Check((optimized, f"SELECT SUM(({p}) IS TRUE) FROM {fc.sql}"), "is-true")
        return Check((optimized, f"SELECT SUM(CASE WHEN {p} THEN 1 ELSE 0 END) FROM {fc.sql}"),
                     "case")

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when both counts are equal (a NULL sum is 0)."""
        counts = [count_of(o) for o in outcomes]
        results = tuple(render_value(c) for c in counts)
        if counts[0] == counts[1]:
            return Verdict("agree", results=results)
        return Verdict("differ", results=results,
                       detail=f"WHERE counted {results[0]} row(s), the predicate as a value "
                              f"counted {results[1]}")


def count_of(outcome: Outcome) -> int:
    """The single number of a COUNT/SUM query's one row (NULL: 0)."""
    rows = outcome.rows or ()
    value = rows[0][0] if rows and rows[0] else None
    return 0 if value is None else int(value)
