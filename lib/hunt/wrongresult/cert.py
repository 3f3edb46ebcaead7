"""CERT (cardinality estimation restriction testing): a more restrictive query must not be
estimated to return more rows.  A finding is a *performance* finding, never a wrong result.

Ba and Rigger, "Testing Database Engines via Query Plan Guidance" and
"CERT: Finding Performance Issues in Database Systems Through the Lens of
Cardinality Estimation" (ICSE 2024): an optimizer that estimates more rows
for ``Q AND q`` than for ``Q`` misjudges one of them, and picks plans on it.
For a generated ``Q = SELECT ... FROM f [WHERE p]`` the oracle runs ``EXPLAIN
EXTENDED`` of ``Q`` and of its restriction ``Q'``:

- ``and``: ``WHERE p AND q`` (or ``WHERE q`` when Q has none);
- ``inner``: a ``LEFT JOIN`` made an inner ``JOIN`` (its rows are a subset);

and estimates each one's rows as the product, over the tables of the top
query block (``id`` 1), of ``rows × filtered / 100`` (a table read for no row
-- "Impossible WHERE" -- counts 0; an outer-joined const table without the
row -- "Const row not found", rows 0 -- counts 1: the outer join still
returns every row, NULL-complemented).  Only when both plans are alike -- the
same tables in the same order with the same access types (the keys may
differ) -- is a larger estimate for ``Q'`` a finding, beyond a relative
tolerance of :data:`TOLERANCE` (``filtered`` is printed with two decimals)
and of :data:`SLACK` rows for each range scan of the plan, times the rest of
the join (InnoDB estimates each range at one row at least, even an empty one:
``k NOT IN (1, 5, 127) AND k`` splits the ranges of ``k NOT IN (1, 5, 127)``
into more and is estimated a row higher, 20 rows higher when 20 rows of
another table are joined to each);
a check whose plans differ more is skipped (code :data:`ANOTHER_PLAN`).
SQLancer's CERT allows one step of difference; MariaDB 10.11 applies a join
condition's selectivity through ``ref`` access only (an ``ALL`` step with a
join buffer keeps ``filtered`` at 100 without statistics), so a ``ref`` that
became ``ALL`` raises the estimate by design, and is not compared.  No
subqueries: a semi-join's tables stand in the top block, and their rows do
not multiply the result.  Nothing is executed but the two EXPLAINs, so CERT
is cheap.

Its findings have kind ``performance`` (signature ``performance | cert |
<shape>``): a wrong estimate makes a slow plan, never a wrong answer.
"""
from __future__ import annotations

from typing import Any, Sequence

from .execute import Outcome
from .generator import GeneratorOptions, SqlGenerator
from .oracle import Check, OracleBase, Verdict
from .queries import values

TOLERANCE = 0.011     # relative: estimates within 1.1% are the same estimate
SLACK = 3.0           # rows of a range scan: InnoDB estimates every range at one row at least
RANGE_ACCESS = frozenset({"range", "index_merge"})
ANOTHER_PLAN = -6     # skip code: the two plans differ (their estimates are not comparable)
EXPLAIN = "EXPLAIN EXTENDED "


def plan_of(rows: Sequence[Sequence[Any]]) -> tuple[list[tuple[str, str, str]], float, float] | None:
    """(the top block's steps (table, access type, key), its estimated rows, the most that
    estimate may grow by InnoDB's one row a range) of EXPLAIN EXTENDED's rows (id,
    select_type, table, type, possible_keys, key, key_len, ref, rows, filtered, Extra);
    None when the plan has no such block."""
    steps = []
    estimate = bound = 1.0
    for row in rows:
        if len(row) < 10 or str(row[0]) != "1":
            continue
        table, access, key = (str(row[2]), str(row[3]), str(row[5]))
        steps.append((table, access, key))
        try:  # no rows: no table read ("Impossible WHERE", a const table without the row)
            n = float(row[8]) if row[8] is not None else 0.0
            filtered = float(row[9]) if row[9] is not None else 100.0
        except (TypeError, ValueError):
            return None
        if "Const row not found" in str(row[10] if len(row) > 10 else ""):
            n, filtered = 1.0, 100.0  # an outer-joined const table without the row: NULLs
        estimate *= n * filtered / 100.0
        bound *= (n + (SLACK if access in RANGE_ACCESS else 0.0)) * filtered / 100.0
    return (steps, estimate, bound) if steps else None


class CERTOracle(OracleBase):
    """The CERT oracle (name ``cert``): performance findings, on the first connection's server."""

    name = "cert"
    kind = "performance"

    def __init__(self, options: GeneratorOptions | None = None, statement_timeout: float = 10.0,
                 restricted_settings: str = "") -> None:
        super().__init__(options, statement_timeout)
        # SET STATEMENT assignments for the restriction's EXPLAIN only (tests: a planted
        # setting that makes its estimate larger, such as use_stat_tables='NEVER')
        self.restricted_settings = restricted_settings

    def default_options(self) -> GeneratorOptions:
        """EXPLAIN reads no row: joins may be large; no subqueries (a semi-join's tables stand
        in the top block, and its rows do not multiply the estimate)."""
        return GeneratorOptions(max_join_rows=1_000_000, subqueries=False)

    def generate(self, gen: SqlGenerator) -> Check | None:
        """EXPLAIN EXTENDED of Q and of a restriction of it."""
        fc = gen.from_clause()
        if fc is None:
            return None
        p = gen.predicate(fc.scope) if gen.chance(0.7) else ""
        items = ", ".join(values(gen, fc.scope, gen.rng.randrange(1, 3)))
        base = f"SELECT {items} FROM {fc.sql}"
        left = [part for part in fc.parts if part.kind == "LEFT JOIN"]
        variant = "inner" if left and gen.chance(0.3) else "and"
        where = f" WHERE {p}" if p else ""
        if variant == "inner":
            part = gen.choice(left)
            old = f"LEFT JOIN {part.ref} ON {part.on}"
            restricted = f"{base.replace(old, f'JOIN {part.ref} ON {part.on}', 1)}{where}"
        else:
            q = gen.predicate(fc.scope)
            restricted = f"{base} WHERE {f'({p}) AND ' if p else ''}{q}"
        head = f"SET STATEMENT {self.restricted_settings} FOR " if self.restricted_settings else ""
        return Check((f"{EXPLAIN}{base}{where}", f"{head}{EXPLAIN}{restricted}"), variant)

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree unless the restriction's estimate is larger under a like plan."""
        first, second = (plan_of(o.rows or ()) for o in outcomes)
        if first is None or second is None:
            return Verdict("skip", -5, "EXPLAIN gave no plan of the top query block")
        (steps_q, rows_q, bound_q), (steps_r, rows_r, _) = first, second
        results = (f"estimated {rows_q:g} row(s): {_describe(steps_q)}",
                   f"estimated {rows_r:g} row(s): {_describe(steps_r)}")
        if [(t, a) for t, a, _ in steps_q] != [(t, a) for t, a, _ in steps_r]:
            return Verdict("skip", ANOTHER_PLAN, "the restriction has another plan")
        if rows_r <= bound_q * (1 + TOLERANCE) + 1e-9:
            return Verdict("agree", results=results)
        return Verdict("differ", results=results,
                       detail=f"CERT ({check.variant}): the restricted query is estimated at "
                              f"{rows_r:g} row(s), more than the {rows_q:g} of the query it "
                              f"restricts, under a like plan")


def _describe(steps: Sequence[tuple[str, str, str]]) -> str:
    """A plan's steps, short."""
    return "; ".join(f"{t} {a}" + (f" {k}" if k and k != "None" else "") for t, a, k in steps)
