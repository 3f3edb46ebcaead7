"""EET (equivalent expression transformation): a query against itself with some of its
expressions rewritten into equivalent ones.

For a generated SELECT ``Q`` (:func:`~lib.hunt.wrongresult.queries.select_query`,
every variant) the generator records every expression it wrote; one to three
of them are rewritten (Jiang and Su, "Detecting Logic Bugs in Database
Engines via Equivalent Expression Transformation", OSDI 2024; their seven
rules), and ``Q'`` must return the same rows, as multisets.  With ``r`` a new
predicate over the tables the expression names (so it is valid wherever the
expression stands), ``F`` = ``r AND NOT r AND r IS NOT NULL`` (always false,
NULL included) and ``T`` = ``r OR NOT r OR r IS NULL`` (always true):

- a condition ``p`` (a comparison, IN, BETWEEN, LIKE, IS NULL, AND/OR/NOT,
  a subquery condition: a value of 1, 0 or NULL): ``(F OR p)``, ``(T AND
  p)``, ``(p AND TRUE)``, ``(p OR FALSE)``, ``(NOT (NOT p))``, ``(CASE WHEN r
  THEN p ELSE p END)``;
- a value ``e`` of any class: ``(CASE WHEN F THEN NULL ELSE e END)``,
  ``(CASE WHEN T THEN e ELSE NULL END)``, ``(CASE WHEN r THEN e ELSE e
  END)``, ``(CASE WHEN TRUE THEN e END)``, ``COALESCE(e, NULL)``, ``IF(r, e,
  e)`` -- the dead branch is ``NULL`` or ``e`` itself, never a value of
  another type (``CASE`` takes the type of its branches: a decimal branch
  would turn an integer ``5`` into ``5.00``).

The care: a value naming an ENUM, SET or BIT column is never wrapped (inside
``CASE`` an ENUM becomes a string: ``e = 2`` compares the ENUM's index, the
string ``'b' = 2`` does not match); a condition that is a bare value (``WHERE
col``) gets no boolean rule (``col AND TRUE`` is 1, not ``col``); literals
are not rewritten.  Errors skip the check (``r`` may raise one ``Q`` does
not).  A ``NULL`` branch still changes one type: beside a ``BIGINT
UNSIGNED`` it makes the ``CASE`` a ``DECIMAL(20,0)`` (the NULL counts as a
signed integer), and ``BIT_XOR`` of such a decimal of 2^63 or more clips it
with warning 1916 where ``BIT_XOR`` of the column does not: a disagreement
whose statements warn of different conversions is skipped
(``rewrites_values``, :mod:`~lib.hunt.wrongresult.oracle`).
"""
from __future__ import annotations

from .execute import Outcome
from .generator import GeneratorOptions, Produced, SqlGenerator
from .oracle import Check, OracleBase, Verdict, same_rows
from .queries import whole_select
from .rewrite import candidates, own_scope, replace_once, type_sensitive

PREDICATE_RULES = ("false-or", "true-and", "and-true", "or-false", "not-not", "case-same")
VALUE_RULES = ("case-false", "case-true", "case-same", "case-when-true", "coalesce", "if-same")


def transform(gen: SqlGenerator, produced: Produced) -> tuple[str, str] | None:
    """(an expression equivalent to produced's text, the rule) or None when no rule fits."""
    e = produced.text
    boolean = produced.kind == "predicate" and produced.cls != "bare"
    if not boolean and (produced.kind != "value" or type_sensitive(produced, gen.tables)):
        return None
    rule = gen.choice(PREDICATE_RULES if boolean else VALUE_RULES)
    scope = own_scope(produced)
    r = gen.predicate(scope, gen.options.max_depth - 1, subqueries=False)
    never = f"(({r}) AND (NOT ({r})) AND (({r}) IS NOT NULL))"
    always = f"(({r}) OR (NOT ({r})) OR (({r}) IS NULL))"
    out = {
        "false-or": f"({never} OR {e})",
        "true-and": f"({always} AND {e})",
        "and-true": f"({e} AND TRUE)",
        "or-false": f"({e} OR FALSE)",
        "not-not": f"(NOT (NOT {e}))",
        "case-same": f"(CASE WHEN {r} THEN {e} ELSE {e} END)",
        "case-false": f"(CASE WHEN {never} THEN NULL ELSE {e} END)",
        "case-true": f"(CASE WHEN {always} THEN {e} ELSE NULL END)",
        "case-when-true": f"(CASE WHEN TRUE THEN {e} END)",
        "coalesce": f"COALESCE({e}, NULL)",
        "if-same": f"IF({r}, {e}, {e})",
    }[rule]
    return out, rule


class EETOracle(OracleBase):
    """The EET oracle (name ``eet``) on the first connection's server."""

    name = "eet"
    trace = True
    rewrites_values = True

    def __init__(self, options: GeneratorOptions | None = None, statement_timeout: float = 10.0,
                 max_rewrites: int = 3) -> None:
        super().__init__(options, statement_timeout)
        self.max_rewrites = max_rewrites

    def default_options(self) -> GeneratorOptions:
        """Both queries fetch every row: joins stay small."""
        return GeneratorOptions(max_join_rows=5_000)

    def generate(self, gen: SqlGenerator) -> Check | None:
        """Q and Q' (one to max_rewrites expressions rewritten)."""
        query = whole_select(gen)
        if query is None:
            return None
        sql, variant = query
        trace = list(gen.trace or ())
        rewritten = sql
        rules = []
        for _ in range(gen.rng.randrange(1, self.max_rewrites + 1)):
            pool = candidates(trace, rewritten, ("value", "predicate"))
            if not pool:
                break
            target = gen.choice(pool)
            made = transform(gen, target)
            if made is None:
                continue
            new = replace_once(rewritten, target.text, made[0], gen)
            if new is not None:
                rewritten = new
                rules.append(made[1])
        if rewritten == sql:
            return None
        return Check((sql, f"/* eet: {', '.join(rules)} */ {rewritten}"), variant)

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when Q and Q' return the same rows (as multisets)."""
        return same_rows(outcomes, f"EET ({check.variant})", "in Q", "in the rewritten Q")
