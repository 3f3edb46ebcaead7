"""Pinolo (approximate query synthesis): a query against a looser and a tighter form of it.

Fu et al., "Pinolo: Detecting Logical Bugs in Database Management Systems with
Approximate Query Synthesis" (USENIX ATC 2023): relaxing a query's WHERE
condition must give a superset of its rows, tightening it a subset.  For a
generated ``Q = SELECT ... FROM f WHERE p`` the oracle builds ``Q+`` (``p``
relaxed in one place) and ``Q-`` (tightened in one place) and checks
``rows(Q-) ⊆ rows(Q) ⊆ rows(Q+)``: as multisets for plain rows (``rows``),
as sets for ``DISTINCT`` of values that are not strings (``distinct``: which
of two equal strings DISTINCT keeps depends on the plan), by ``COUNT(*)``
(``count``).

Where a change is made matters.  Under SQL's three values, ordered FALSE <
NULL < TRUE, AND, OR and ``IS TRUE``/``IS NOT FALSE`` are monotone and NOT,
``IS FALSE``/``IS NOT TRUE`` reverse the order; a row is kept when the
condition is TRUE.  So a part of ``p`` reached from the top through those
only, with its polarity (reversed under each NOT), is replaced by one that is
never lower (positive place, relaxing) or never higher (tightening):

- any such part ``a``: ``(a OR q)`` is never lower, ``(a AND q)`` never
  higher (``q`` a new condition over the same tables);
- a comparison: ``<`` to ``<=``, ``>`` to ``>=``, ``=`` to ``<=`` or ``>=``
  (never lower), and back (never higher);
- ``x IN (list)`` with one item more (never lower), ``x NOT IN (list)`` with
  one item fewer (never lower).

Below XOR, ``IS [NOT] UNKNOWN``, a comparison of conditions, a function or a
subquery nothing is changed (not monotone there).  Only the WHERE changes:
an outer join's ON condition is not monotone in the rows it keeps.

A finding is judged again after a replay by this judge (--mode=reduce:
lib/hunt/wrongresult/replay.py); its reduced case checks both containments with the
mysql client's sorted rows (lib/hunt/wrongresult/withinform.py, for the variant
:meth:`PinoloOracle.seen` names).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence

from .execute import Outcome
from .generator import CLASSES, GeneratorOptions, Produced, SqlGenerator
from .oracle import Check, OracleBase, Verdict
from .queries import NOT_STR, values
from .result import describe_rows, render_rows

RELAX_OPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"<": ("<=",), ">": (">=",), "=": ("<=", ">=")})
TIGHTEN_OPS: Mapping[str, tuple[str, ...]] = MappingProxyType({"<=": ("<", "="), ">=": (">", "=")})
MONOTONE_TESTS = ("IS TRUE", "IS NOT FALSE")
REVERSING_TESTS = ("IS FALSE", "IS NOT TRUE")


@dataclass(frozen=True)
class Place:
    """A part of the WHERE condition that may change: where it starts, its record, its
    polarity (1: relaxing it relaxes the query, -1: reversed)."""

    start: int
    produced: Produced
    polarity: int


def places(root: Produced, trace: list[Produced]) -> list[Place]:
    """The parts of root reachable through AND, OR, NOT and IS [NOT] TRUE/FALSE, with
    their polarity and offset in root's text."""
    by_text: dict[str, Produced] = {}
    for p in trace:
        if p.kind == "predicate" and p.scope is root.scope:
            by_text.setdefault(p.text, p)
    found: list[Place] = []

    def walk(p: Produced, start: int, polarity: int) -> None:
        """Record p and the parts below it."""
        found.append(Place(start, p, polarity))
        children: list[tuple[str, int, int]] = []  # (text, offset in p, polarity)
        if p.cls in ("and", "or") and len(p.parts) == 2:
            first, second = p.parts
            children = [(first, 1, polarity), (second, 1 + len(first) + len(p.cls) + 2, polarity)]
        elif p.cls == "not" and p.parts:
            children = [(p.parts[0], len("(NOT "), -polarity)]
        elif p.cls == "istruth" and len(p.parts) == 2:
            if p.parts[1] in MONOTONE_TESTS:
                children = [(p.parts[0], 1, polarity)]
            elif p.parts[1] in REVERSING_TESTS:
                children = [(p.parts[0], 1, -polarity)]
        for text, offset, sign in children:
            child = by_text.get(text)
            if child is not None and p.text[offset:offset + len(text)] == text:
                walk(child, start + offset, sign)

    walk(root, 0, 1)
    return found


def change(gen: SqlGenerator, place: Place, looser: bool) -> str | None:
    """A replacement for place's text that makes the query looser (or tighter), or None."""
    p = place.produced
    widen = looser == (place.polarity > 0)  # make this part never lower (else never higher)
    kind = gen.weighted([(3, "logic"), (4 if p.cls == "cmp" else 0, "op"),
                         (3 if p.cls == "in" else 0, "list")])
    if kind == "op":
        left, op, right = p.parts
        if widen and op in RELAX_OPS:
            return f"({left} {gen.choice(RELAX_OPS[op])} {right})"
        if not widen and op in TIGHTEN_OPS:
            new_op = gen.choice(TIGHTEN_OPS[op])
            if new_op == "=" and (gen.constant_risk(p.scope, left, right, "=")
                                  or gen.constant_risk(p.scope, right, left, "=")):
                new_op = op[0]  # an equality there would meet the key-constant bug
            return f"({left} {new_op} {right})"
    if kind == "list":
        tested, neg, items = p.parts
        listed = [i.strip() for i in _split_items(items)]
        if widen != bool(neg):  # IN grows, NOT IN shrinks
            extra = (gen.safe_literal() if gen.constant_risk(p.scope, tested, "0.5", "=")
                     else gen.literal(gen.choice(("int", "str", "dec"))))
            return f"({tested} {neg}IN ({items}, {extra}))"
        if len(listed) > 1:
            return f"({tested} {neg}IN ({', '.join(listed[:-1])}))"
    q = gen.predicate(p.scope, gen.options.max_depth - 1, subqueries=False)
    return f"({p.text} OR {q})" if widen else f"({p.text} AND {q})"


def _split_items(items: str) -> list[str]:
    """The comma-separated items of an IN list (commas inside parentheses or quotes kept)."""
    out, depth, quote, current = [], 0, "", ""
    for ch in items:
        if quote:
            current += ch
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(current)
            current = ""
            continue
        current += ch
    out.append(current)
    return out


class PinoloOracle(OracleBase):
    """The Pinolo oracle (name ``pinolo``) on the first connection's server."""

    name = "pinolo"
    trace = True

    def default_options(self) -> GeneratorOptions:
        """Three queries fetch every row: joins stay small."""
        return GeneratorOptions(max_join_rows=5_000)

    def generate(self, gen: SqlGenerator) -> Check | None:
        """Q, Q+ (looser) and Q- (tighter)."""
        fc = gen.from_clause()
        if fc is None:
            return None
        p = gen.predicate(fc.scope)
        root = next((x for x in reversed(gen.trace or ()) if x.text == p and x.kind == "predicate"),
                    None)
        if root is None:
            return None
        spots = places(root, list(gen.trace or ()))
        variant = gen.weighted([(4, "rows"), (2, "distinct"), (2, "count")])
        if variant == "count":
            head = "SELECT COUNT(*)"
        else:
            classes = NOT_STR if variant == "distinct" else CLASSES  # DISTINCT keeps one of
            # equal strings, which one depends on the plan
            items = ", ".join(values(gen, fc.scope, gen.rng.randrange(1, 4), classes, exact=True))
            head = f"SELECT {'DISTINCT ' if variant == 'distinct' else ''}{items}"
        queries = [f"{head} FROM {fc.sql} WHERE {p}"]
        for looser in (True, False):
            spot = gen.choice(spots)
            new = change(gen, spot, looser)
            if new is None:
                return None
            changed = p[:spot.start] + new + p[spot.start + len(spot.produced.text):]
            label = "looser" if looser else "tighter"
            queries.append(f"/* pinolo: {label} */ {head} FROM {fc.sql} WHERE {changed}")
        return Check(tuple(queries), variant)

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when rows(Q-) ⊆ rows(Q) ⊆ rows(Q+)."""
        q, looser, tighter = (render_rows(o.rows or ()) for o in outcomes)
        results = tuple(describe_rows(r) for r in (q, looser, tighter))
        problems = []
        if check.variant == "count":
            n, up, down = (int(r[0][0]) if r else 0 for r in (q, looser, tighter))
            if up < n:
                problems.append(f"the looser query counted {up} row(s), fewer than Q's {n}")
            if down > n:
                problems.append(f"the tighter query counted {down} row(s), more than Q's {n}")
        else:
            missing = _not_within(q, looser)
            if missing:
                problems.append(f"rows of Q missing from the looser query: {describe_rows(missing)}")
            extra = _not_within(tighter, q)
            if extra:
                problems.append(f"rows of the tighter query missing from Q: {describe_rows(extra)}")
        if not problems:
            return Verdict("agree", results=results)
        return Verdict("differ", results=results,
                       detail=f"Pinolo ({check.variant}): " + "; ".join(problems))

    def seen(self, check: Check, outcomes: Sequence[Outcome]) -> tuple[str, ...]:
        """The check's variant, for the reduced case's comparison
        (lib/hunt/wrongresult/withinform.py): counts are compared as numbers, rows as
        multisets."""
        return (check.variant,)


def _not_within(small: list[tuple[str, ...]], big: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The rows of small (as a multiset) that big does not hold as many times."""
    left: dict[tuple[str, ...], int] = {}
    for row in big:
        left[row] = left.get(row, 0) + 1
    out = []
    for row in small:
        if left.get(row, 0) > 0:
            left[row] -= 1
        else:
            out.append(row)
    return out
