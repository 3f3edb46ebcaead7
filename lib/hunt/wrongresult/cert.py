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
returns every row, NULL-complemented).  The inner side of a ``LEFT JOIN`` the
optimizer kept (read from ``EXPLAIN EXTENDED``'s note, the query as the
optimizer rewrote it: :func:`outer_groups`) counts at least one row per row
before it, when the ``WHERE`` names none of its tables: its ``filtered`` is
the share of its rows that match the ``ON`` condition, and an outer-joined
row without a match is still returned, NULL-complemented -- ``t1 LEFT JOIN t2
ON t1.k = t2.k AND t2.k <> 100`` over t1's 10 rows was estimated at 10 × 1 ×
72% = 7.2 rows and its inner ``JOIN`` at 10 × 90% × 1 = 9 (bench figure 7
over ddl_dml.zz), where the first returns 10 rows at least.  A ``LEFT JOIN``
whose tables the ``WHERE`` names (which may drop its NULL-complemented rows)
keeps its product, an estimate of its matches, comparable only with the same
in the other query: a check where one query has such a join and the other not,
or whose note has a ``LEFT JOIN`` this cannot read, is skipped (code
:data:`OUTER_JOIN`) -- and so is one whose statement has an outer join its note no
longer shows while its plan reads a ``system`` or ``const`` table
(:func:`hidden_outer_join`): the optimizer substituted a const table's row and wrote
the note without the join, so which side is outer-joined cannot be read, and the inner
side's estimate below one row is no estimate of what the outer join returns (or18-sf5's
``75a1c567fead``: ``t4 AS t1 RIGHT JOIN s1 AS t2`` over a one-row sequence, ``t2
system; t1 ref`` estimated at 0.67 rows, its restriction -- made an inner join by its
WHERE -- at 1).
Only when both plans are alike -- the
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
<shape>``): a wrong estimate makes a slow plan, never a wrong answer.  One it recognises
as the known KW46-CERT-RANGE-KEYPART (a range on a key's first part drops the
selectivity of the conditions on its later parts, a system-versioned table's
``row_end``: :mod:`~lib.hunt.wrongresult.certknown`, read from the optimizer trace) is
still a finding, with ``known`` set: signed ``performance | cert | known bug
cert-range-keypart`` whatever its shape, which the known-bugs corpus
(randgen/conf/kewpie/known_bugs-mariadb-10.11.txt) tags known.

Judged again after a replay (``--mode=reduce``), :meth:`CERTOracle.seen` keeps each
EXPLAIN's plan (every row's id, table and access type) and the LEFT JOIN sides it
floors, from which lib/hunt/wrongresult/checkforms.py writes the same estimate as
mysqltest lines (:func:`floored_expression`: :func:`_floored` as SQL).
"""
from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any, Sequence

from .certknown import RANGE_KEYPART, range_keypart
from .execute import Connection, Outcome, run_query
from .generator import GeneratorOptions, SqlGenerator
from .oracle import Check, OracleBase, Verdict
from .queries import values

TOLERANCE = 0.011     # relative: estimates within 1.1% are the same estimate
SLACK = 3.0           # rows of a range scan: InnoDB estimates every range at one row at least
RANGE_ACCESS = frozenset({"range", "index_merge"})
ANOTHER_PLAN = -6     # skip code: the two plans differ (their estimates are not comparable)
OUTER_JOIN = -8       # skip code: a LEFT JOIN whose rows are not estimated alike in both queries
EXPLAIN = "EXPLAIN EXTENDED "
NOTE_CODE = 1003      # EXPLAIN EXTENDED's note: the query as the optimizer rewrote it
_TOKEN_RE = re.compile(r"`(?:[^`]|``)*`|'(?:[^'\\]|\\.|'')*'|\w+|\S")
_CLAUSE_WORDS = frozenset({"where", "group", "having", "order", "limit", "window", "procedure",
                           "into", "for", "lock", "union", "intersect", "except"})


def _top_level_words(text: str) -> list[tuple[int, str]]:
    """(position, lower-case word) of each bare word of text outside parentheses and quotes."""
    out, depth = [], 0
    for m in _TOKEN_RE.finditer(text):
        tok = m.group(0)
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0 and (tok[0].isalpha() or tok[0] == "_"):
            out.append((m.start(), tok.lower()))
    return out


def note_parts(note: str) -> tuple[str, str]:
    """(the FROM clause's text, the WHERE condition's text) of an EXPLAIN EXTENDED note
    (``select ... from ... where ...``); ('', '') when it has no FROM."""
    words = _top_level_words(note)
    start = next((pos + 4 for pos, w in words if w == "from"), -1)
    if start < 0:
        return "", ""
    ends = [pos for pos, w in words if pos > start and w in _CLAUSE_WORDS]
    end = ends[0] if ends else len(note)
    where = ""
    if ends and note[end:end + 5].lower() == "where":
        stop = [pos for pos, w in words if pos > end and w in _CLAUSE_WORDS - {"where"}]
        where = note[end + 5:stop[0] if stop else len(note)]
    return note[start:end], where


def outer_groups(from_clause: str) -> list[frozenset[str]] | None:
    """The tables (as EXPLAIN names them: the alias, else the name) of each inner side of a
    ``left join`` in the FROM clause of an EXPLAIN EXTENDED note, nested sides included
    (``a left join (b left join c on(...)) on(...)`` gives {b, c} and {c}); None when the
    text holds something this does not read."""
    parser = _FromClause(_TOKEN_RE.findall(from_clause))
    if parser.join_list("") is None or parser.pos != len(parser.toks):
        return None
    return parser.groups


class _FromClause:
    """A recursive-descent reading of an EXPLAIN EXTENDED note's FROM clause tokens: the
    tables of its join lists, and each LEFT JOIN's inner side (:func:`outer_groups`)."""

    def __init__(self, toks: list[str]) -> None:
        self.toks = toks
        self.pos = 0
        self.groups: list[frozenset[str]] = []

    def _at(self, *words: str) -> bool:
        """The token at pos is one of words (lowercased)."""
        return self.pos < len(self.toks) and self.toks[self.pos].lower() in words

    def operand(self) -> set[str] | None:
        """The tables of one table reference or parenthesized join list at pos."""
        toks = self.toks
        if self._at("("):
            self.pos += 1
            got = self.join_list(")")
            if got is None or not self._at(")"):
                return None
            self.pos += 1
            return got
        names = []
        while self.pos < len(toks) and toks[self.pos].startswith("`"):
            names.append(toks[self.pos][1:-1].replace("``", "`"))
            self.pos += 1
            if self._at(".") and self.pos + 1 < len(toks) and toks[self.pos + 1].startswith("`"):
                self.pos += 1
                continue
            break
        if self.pos < len(toks) and toks[self.pos].startswith("`"):  # an alias
            names.append(toks[self.pos][1:-1].replace("``", "`"))
            self.pos += 1
        return {names[-1]} if names else None

    def skip_on(self) -> bool:
        """Past an ``on(...)`` condition at pos, if any; False when it does not close."""
        if not self._at("on"):
            return True
        self.pos += 1
        if not self._at("("):
            return False
        depth = 0
        while self.pos < len(self.toks):
            depth += {"(": 1, ")": -1}.get(self.toks[self.pos], 0)
            self.pos += 1
            if depth == 0:
                return True
        return False

    def join_list(self, stop: str) -> set[str] | None:
        """The tables of the join list at pos, up to stop; its LEFT JOINs' sides recorded."""
        first = self.operand()
        if first is None:
            return None
        tables = set(first)
        while self.pos < len(self.toks) and self.toks[self.pos] != stop:
            word = self.toks[self.pos].lower()
            outer = word == "left"
            if word not in ("left", "straight_join", "join", "cross", "inner", ","):
                return None
            self.pos += 1
            if word in ("left", "cross", "inner"):
                if self._at("outer"):
                    self.pos += 1
                if not self._at("join"):
                    return None
                self.pos += 1
            side = self.operand()
            if side is None or not self.skip_on():
                return None
            if outer:
                self.groups.append(frozenset(side))
            tables |= side
        return tables


_OUTER_JOIN_RE = re.compile(r"\b(?:left|right)\s+(?:outer\s+)?join\b", re.IGNORECASE)
_QUOTED_RE = re.compile(r"'(?:[^'\\]|\\.|'')*'|`(?:[^`]|``)*`")


def hidden_outer_join(sql: str, note: str, rows: Sequence[Sequence[Any]]) -> bool:
    """Does the statement have an outer join (``LEFT``/``RIGHT JOIN``) its EXPLAIN
    EXTENDED note does not show, while its plan's top block reads a ``system`` or
    ``const`` table (a const table's row substituted: the note no longer says which
    tables are outer-joined)?"""
    if not _OUTER_JOIN_RE.search(_QUOTED_RE.sub("''", sql)) or \
            re.search(r"\bleft\s+join\b", note, re.IGNORECASE):
        return False
    return any(len(r) >= 4 and str(r[0]) == "1" and str(r[3]) in ("system", "const")
               for r in rows)


def floored_groups(note: str) -> tuple[list[frozenset[str]], list[frozenset[str]]] | None:
    """(the inner sides of the LEFT JOINs of an EXPLAIN EXTENDED note whose tables its WHERE
    does not name -- each row before them is returned at least once --, those whose tables
    it names -- a WHERE over them may drop rows: their product estimates matches, no floor);
    None when the note has a LEFT JOIN :func:`outer_groups` cannot read."""
    from_clause, where = note_parts(note)
    if not re.search(r"\bleft\s+join\b", from_clause, re.IGNORECASE):
        return [], []
    groups = outer_groups(from_clause)
    if groups is None:
        return None
    named = [g for g in groups if any(f"`.`{n.replace('`', '``')}`.`" in where for n in g)]
    return [g for g in groups if g not in named], named


def _floored(factors: Sequence[tuple[str, float]], groups: Sequence[frozenset[str]]) -> float:
    """The product of the factors (table, rows) with each group's product at least 1 (groups
    nest: a group's inner groups are floored within it)."""
    total, done = 1.0, set()
    for name, factor in factors:
        if name in done:
            continue
        outer = [g for g in groups if name in g]
        if not outer:
            total *= factor
            done.add(name)
            continue
        widest = max(outer, key=len)
        inside = [(n, f) for n, f in factors if n in widest]
        total *= max(1.0, _floored(inside, [g for g in groups if g < widest]))
        done |= widest
    return total


def floored_expression(factors: Sequence[tuple[str, str]],
                       groups: Sequence[frozenset[str]]) -> str:
    """:func:`_floored` as an SQL expression: factors are (table, SQL expression of its
    rows); each group's product is ``GREATEST(1, ...)``; '1' when there are none."""
    parts, done = [], set()
    for name, factor in factors:
        if name in done:
            continue
        outer = [g for g in groups if name in g]
        if not outer:
            parts.append(f"({factor})")
            done.add(name)
            continue
        widest = max(outer, key=len)
        inside = [(n, f) for n, f in factors if n in widest]
        parts.append(f"GREATEST(1, {floored_expression(inside, [g for g in groups if g < widest])})")
        done |= widest
    return " * ".join(parts) or "1"


def plan_of(rows: Sequence[Sequence[Any]], outer: Sequence[frozenset[str]] = ()
            ) -> tuple[list[tuple[str, str, str]], float, float] | None:
    """(the top block's steps (table, access type, key), its estimated rows, the most that
    estimate may grow by InnoDB's one row a range) of EXPLAIN EXTENDED's rows (id,
    select_type, table, type, possible_keys, key, key_len, ref, rows, filtered, Extra);
    None when the plan has no such block.  outer: the inner sides of LEFT JOINs (their
    tables) that count at least one row per row before them (:func:`floored_groups`)."""
    steps = []
    estimates: list[tuple[str, float]] = []
    bounds: list[tuple[str, float]] = []
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
        estimates.append((table, n * filtered / 100.0))
        bounds.append((table, (n + (SLACK if access in RANGE_ACCESS else 0.0)) * filtered / 100.0))
    if not steps:
        return None
    return steps, _floored(estimates, outer), _floored(bounds, outer)


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
        self._notes: dict[str, str] = {}  # each EXPLAIN of the check in hand: its note

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

    def execute(self, conns: Sequence[Connection], check: Check) -> list[Outcome]:
        """Each EXPLAIN EXTENDED, then its note (SHOW WARNINGS: the query as the optimizer
        rewrote it, kept for :meth:`judge`)."""
        self._notes = {}
        outcomes = []
        for sql in check.queries:
            self.stats.statements += 2
            outcome = run_query(conns[0], sql)
            outcomes.append(outcome)
            if outcome.failed:
                break
            shown = run_query(conns[0], "SHOW WARNINGS")
            self._notes[sql] = next((str(r[2]) for r in shown.rows or ()
                                     if len(r) > 2 and str(r[1]) == str(NOTE_CODE)), "")
        return outcomes

    def seen(self, check: Check, outcomes: Sequence[Outcome]) -> tuple[str, ...]:
        """Each EXPLAIN's plan as JSON, for the reduced case's comparison: ``rows``, every
        row's (id, table, access type) in order; ``floored``, the LEFT JOIN sides whose
        product counts one row at least (:func:`floored_groups`)."""
        out = []
        for sql, outcome in zip(check.queries, outcomes):
            read = floored_groups(self._notes.get(sql, ""))
            rows = [[_shown(r[0]), _shown(r[2]), _shown(r[3])] for r in outcome.rows or ()
                    if len(r) >= 10]
            out.append(json.dumps({"rows": rows, "floored": [sorted(g) for g in
                                                              (read[0] if read else [])]}))
        return tuple(out)

    def _estimates(self, check: Check, outcomes: Sequence[Outcome]
                   ) -> Verdict | tuple[Any, Any]:
        """Each EXPLAIN's :func:`plan_of` (steps, estimate, bound), or the skip's verdict."""
        read = [floored_groups(self._notes.get(sql, "")) for sql in check.queries]
        if read[0] is None or read[1] is None:
            return Verdict("skip", OUTER_JOIN, "the optimizer's note has a LEFT JOIN this "
                                               "does not read")
        if any(hidden_outer_join(sql, self._notes.get(sql, ""), o.rows or ())
               for sql, o in zip(check.queries, outcomes)):
            return Verdict("skip", OUTER_JOIN, "an outer join the optimizer's note no longer "
                                               "shows (a const table's row substituted)")
        read_q, read_r = read[0], read[1]
        if set(read_q[1]) != set(read_r[1]):
            return Verdict("skip", OUTER_JOIN, "a LEFT JOIN whose tables the WHERE names is "
                                               "estimated by its matches in one query only")
        first, second = plan_of(outcomes[0].rows or (), read_q[0]), \
            plan_of(outcomes[1].rows or (), read_r[0])
        if first is None or second is None:
            return Verdict("skip", -5, "EXPLAIN gave no plan of the top query block")
        return first, second

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree unless the restriction's estimate is larger under a like plan."""
        got = self._estimates(check, outcomes)
        if isinstance(got, Verdict):
            return got
        (steps_q, rows_q, bound_q), (steps_r, rows_r, _) = got
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

    def recognise(self, conns: Sequence[Connection], check: Check,
                  outcomes: list[Outcome], verdict: Verdict) -> Verdict:
        """KW46-CERT-RANGE-KEYPART (lib/hunt/wrongresult/certknown.py): each EXPLAIN again
        under the optimizer trace; the finding is that known bug when the restriction's
        estimate, with the histogram selectivity the bug dropped restored in both, is no
        longer larger than the query's."""
        got = self._estimates(check, outcomes)
        if isinstance(got, Verdict):
            return verdict
        (_, _, bound_q), (_, rows_r, _) = got
        traces = [self._trace(conns[0], sql) for sql in check.queries]
        if not range_keypart(rows_r, bound_q, traces[0], traces[1], TOLERANCE):
            return verdict
        return replace(verdict, known=RANGE_KEYPART,
                       detail=f"{verdict.detail} -- the known bug {RANGE_KEYPART} "
                              f"(KW46-CERT-RANGE-KEYPART): not larger once the histogram "
                              f"selectivity a range on the first part of a key dropped is "
                              f"restored")

    def _trace(self, conn: Connection, sql: str) -> str:
        """The optimizer trace of sql run once more ('' when it could not be read)."""
        saved = run_query(conn, "SELECT @@SESSION.optimizer_trace")
        self.stats.statements += 4
        run_query(conn, "SET SESSION optimizer_trace = 'enabled=on'")
        try:
            if run_query(conn, sql).failed:
                return ""
            got = run_query(conn, "SELECT TRACE, MISSING_BYTES_BEYOND_MAX_MEM_SIZE FROM "
                                  "information_schema.OPTIMIZER_TRACE")
        finally:
            old = str(saved.rows[0][0]) if saved.rows and not saved.failed else "enabled=off"
            run_query(conn, "SET SESSION optimizer_trace = '" + old.replace("'", "''") + "'")
        if got.failed or not got.rows or str(got.rows[0][1]) not in ("0", "None"):
            return ""
        trace = got.rows[0][0]
        return trace.decode("utf-8", "replace") if isinstance(trace, bytes) else str(trace)


def _shown(value: object) -> str:
    """A value of EXPLAIN's as mysqltest shows it (NULL for None: an Impossible WHERE's
    table and access type)."""
    if value is None:
        return "NULL"
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _describe(steps: Sequence[tuple[str, str, str]]) -> str:
    """A plan's steps, short."""
    return "; ".join(f"{t} {a}" + (f" {k}" if k and k != "None" else "") for t, a, k in steps)
