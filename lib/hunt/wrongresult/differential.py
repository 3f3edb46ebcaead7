"""Differential: the same generated SELECT on two (or more) servers.

The servers differ by code tree, by an option or by ``optimizer_switch``
and hold the same tables and rows; each generated SELECT runs on every
connection and the first server's rows are compared with each other's, as
multisets (floats to :data:`~lib.hunt.wrongresult.result.FLOAT_DIGITS`
significant digits), as the randgen ResultsetComparator does.

The SELECTs (variants): ``plain`` (values of every class, arithmetic and
division included, optionally a WHERE), ``aggregate`` (COUNT, SUM, AVG,
MIN/MAX, BIT_AND/OR/XOR), ``grouped`` (``GROUP BY`` values that are not
strings, with aggregates), ``distinct`` (values that are not strings) and
``ordered`` (one table with a primary key: ``ORDER BY`` the values and then
the key, so the order is total, with a ``LIMIT``).  Errors: when every
server fails with the same error code the servers agree; when only some fail,
or with different codes, the check is skipped (counted), never a finding.
"""
from __future__ import annotations

from typing import Sequence

from .execute import Connection, Outcome, run_query
from .generator import SqlGenerator
from .oracle import Check, OracleBase, Verdict
from .queries import select_query
from .result import describe_rows, multiset_difference, render_rows


class DifferentialOracle(OracleBase):
    """The differential oracle (name ``differential``): needs two connections or more."""

    name = "differential"
    min_connections = 2

    def generate(self, gen: SqlGenerator) -> Check | None:
        """One SELECT, in one of the variants (:func:`~lib.hunt.wrongresult.queries.select_query`)."""
        fc = gen.from_clause()
        if fc is None:
            return None
        where = f" WHERE {gen.predicate(fc.scope)}" if gen.chance(0.6) else ""
        sql, variant = select_query(gen, fc, where)
        return Check((sql,), variant)

    def execute(self, conns: Sequence[Connection], check: Check) -> list[Outcome]:
        """The check's one SELECT on every connection."""
        outcomes = []
        for conn in conns:
            self.stats.statements += 1
            outcomes.append(run_query(conn, check.queries[0]))
        return outcomes

    def verdict(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when every server gives the first one's rows (or its error code)."""
        failed = [o for o in outcomes if o.failed]
        if failed:
            if len(failed) == len(outcomes) and len({o.error for o in failed}) == 1:
                return Verdict("agree", results=tuple(f"server {i + 1}: error {o.error}"
                                                      for i, o in enumerate(outcomes)))
            return Verdict("skip", failed[0].error, failed[0].message)
        return self.judge(check, outcomes)

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Compare every server's rows with the first one's, as multisets."""
        rendered = [render_rows(o.rows or ()) for o in outcomes]
        results = tuple(f"server {i + 1}: {describe_rows(rows)}" for i, rows in enumerate(rendered))
        details = []
        for i, rows in enumerate(rendered[1:], start=2):
            only_first, only_other = multiset_difference(rendered[0], rows)
            if only_first or only_other:
                details.append(f"rows only on server 1: {describe_rows(only_first)}; "
                               f"rows only on server {i}: {describe_rows(only_other)}")
        if not details:
            return Verdict("agree", results=results)
        return Verdict("differ", results=results,
                       detail=f"differential ({check.variant}): " + " / ".join(details))
