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
from .generator import CLASSES, Scope, SqlGenerator
from .oracle import Check, OracleBase, Verdict
from .result import describe_rows, multiset_difference, render_rows
from .schema import quote_name

NOT_STR = tuple(c for c in CLASSES if c != "str")
MINMAX_CLASSES = ("int", "dec", "date", "datetime", "time", "year")


def _values(gen: SqlGenerator, scope: Scope, n: int,
            classes: Sequence[str] = CLASSES) -> list[str]:
    """n values of these classes (mostly of classes the scope has columns of)."""
    out = []
    for _ in range(n):
        present = [c for c in scope.classes() if c in classes]
        cls = gen.choice(present) if present and gen.chance(0.85) else gen.choice(classes)
        out.append(gen.value(scope, cls))
    return out


def _aggregates(gen: SqlGenerator, scope: Scope, n: int) -> list[str]:
    """n deterministic aggregates: COUNT, SUM, AVG, MIN/MAX (not of strings), BIT_*."""
    out = []
    for _ in range(n):
        kind = gen.weighted([(3, "count"), (2, "sum"), (2, "avg"), (3, "minmax"), (1, "bit")])
        if kind == "count":
            out.append("COUNT(*)" if gen.chance(0.5) else
                       f"COUNT({gen.choice(('', 'DISTINCT '))}{_values(gen, scope, 1, NOT_STR)[0]})")
        elif kind in ("sum", "avg"):
            out.append(f"{kind.upper()}({gen.value(scope, gen.choice(('int', 'dec')))})")
        elif kind == "minmax":
            cls = gen.choice(MINMAX_CLASSES)
            out.append(f"{gen.choice(('MIN', 'MAX'))}({gen.value(scope, cls)})")
        else:
            out.append(f"{gen.choice(('BIT_AND', 'BIT_OR', 'BIT_XOR'))}({gen.value(scope, 'int')})")
    return out


class DifferentialOracle(OracleBase):
    """The differential oracle (name ``differential``): needs two connections or more."""

    name = "differential"
    min_connections = 2

    def generate(self, gen: SqlGenerator) -> Check | None:
        """One SELECT, in one of the variants."""
        fc = gen.from_clause()
        if fc is None:
            return None
        scope = fc.scope
        where = f" WHERE {gen.predicate(scope)}" if gen.chance(0.6) else ""
        pk_tables = [t for a, t in scope.tables if any(c.key == "primary" for c in t.columns)]
        variant = gen.weighted([(5, "plain"), (3, "aggregate"), (3, "grouped"), (1, "distinct"),
                                (2 if len(scope.tables) == 1 and pk_tables else 0, "ordered")])

        n = gen.rng.randrange(1, 4)
        if variant == "plain":
            return Check((f"SELECT {', '.join(_values(gen, scope, n))} FROM {fc.sql}{where}",), variant)
        if variant == "aggregate":
            return Check((f"SELECT {', '.join(_aggregates(gen, scope, n))} FROM {fc.sql}{where}",), variant)
        if variant == "grouped":
            keys = _values(gen, scope, gen.rng.randrange(1, 3), NOT_STR)
            items = keys + _aggregates(gen, scope, gen.rng.randrange(1, 3))
            return Check((f"SELECT {', '.join(items)} FROM {fc.sql}{where} "
                          f"GROUP BY {', '.join(keys)}",), variant)
        if variant == "distinct":
            return Check((f"SELECT DISTINCT {', '.join(_values(gen, scope, n, NOT_STR))} "
                          f"FROM {fc.sql}{where}",), variant)
        table = scope.tables[0][1]
        pk = next(c for c in table.columns if c.key == "primary")
        items = _values(gen, scope, n) + [f"t1.{quote_name(pk.name)}"]
        return Check((f"SELECT {', '.join(items)} FROM {fc.sql}{where} "
                      f"ORDER BY {', '.join(items)} LIMIT {gen.rng.randrange(1, 11)}",), variant)

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
