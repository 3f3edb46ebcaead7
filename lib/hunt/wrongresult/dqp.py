"""DQP (differential query plans): the same query under other plans must return the same rows.

For a generated SELECT ``Q`` (:func:`~lib.hunt.wrongresult.queries.select_query`,
every variant: plain, aggregate, grouped, having, distinct, ordered with a
total order and LIMIT, window, set operations) the oracle runs ``Q`` and up to
``plans`` other forms of it, each forcing another plan, and compares each
one's rows with ``Q``'s as multisets (Ba and Rigger, "Keep It Simple: Testing
Databases via Differential Query Plans", SIGMOD 2024; SQLancer's
``MariaDBDQPOracle`` toggles optimizer_switch flags the same way).  The plans:

- ``switch``: ``SET STATEMENT optimizer_switch='flag=on|off' FOR Q`` -- each
  flag of the server's own ``@@optimizer_switch`` (read at the start of a run)
  set to the other value, or two or three flags at once;
- ``setting``: ``SET STATEMENT var=value FOR Q`` with a variable that changes
  the plan, never the result: ``join_cache_level`` (0..8),
  ``optimizer_use_condition_selectivity``, ``optimizer_search_depth``,
  ``optimizer_prune_level``, ``in_predicate_conversion_threshold=2`` (IN lists
  become table value constructors), ``expensive_subquery_limit=0``,
  ``join_buffer_size`` and ``join_buffer_space_limit`` at their minimum,
  ``tmp_memory_table_size``/``max_heap_table_size`` at their minimum (internal
  temporary tables on disk), ``big_tables``, ``eq_range_index_dive_limit``,
  ``optimizer_max_sel_arg_weight``/``optimizer_max_sel_args``,
  ``rowid_merge_buff_size=0``, ``use_stat_tables='NEVER'``,
  ``optimizer_trace``... (each only when the server has it);
- ``hint``: index hints on one table of the FROM clause: ``FORCE INDEX (k)``,
  ``IGNORE INDEX (k)``, ``USE INDEX ()``, ``IGNORE INDEX FOR JOIN (k)`` (the
  index names read from ``information_schema.STATISTICS``);
- ``order``: a FROM clause of inner joins only, its tables listed in another
  order with ``SELECT STRAIGHT_JOIN`` and the ON conditions moved to the WHERE;
- ``modifier``: ``SQL_BUFFER_RESULT``, ``SQL_BIG_RESULT``, ``SQL_SMALL_RESULT``.

The statements are self-contained (``SET STATEMENT`` restores the variable
after the one statement), so a finding reproduces with the mariadb client;
each plan's statement starts with a comment naming the plan (``/* dqp:
switch semijoin=off */``).
What a plan may change and the oracle does not compare: the order of rows
(multisets; LIMIT only after a total order), warnings.  A plan that fails
(e.g. ``Out of sort memory`` with a small buffer, a timeout) skips the check.
Known wrong results of 10.11 that DQP would find again and again are avoided
by plan (:data:`~lib.hunt.wrongresult.dqpknown.KNOWN_BUGS`; ``avoid_plans``
says which, ``avoid_plans=frozenset()`` hunts them): such a plan is left out
of the queries that meet its bug (:func:`~lib.hunt.wrongresult.dqpknown.meets_known_bug`),
kept for every other -- the plan that turns ``not_null_range_scan`` on is not
run over a query whose WHERE, ON or HAVING has an ``IS NOT NULL``, ``IS TRUE``,
``IS FALSE``, ``IS NOT UNKNOWN`` or AND below the ANDs and ORs at its top, or a
``CONCAT_WS`` (KW46-NOT-NULL-RANGE-IS-UNKNOWN); ``join_cache_level`` 3 and 4 are not run over
a join with a bare character string column in an equality (KW46-BNLH-PAD-SPACE), nor
``big_tables=1`` over a query with a ``COUNT(DISTINCT ...)`` (KW46-COUNT-DISTINCT-CONST
through a const table's column); and no such plan over a query that reads a view (whose
columns' expressions its text does not show: :meth:`DQPOracle.avoided`).
``extra_plans`` (``SET STATEMENT`` assignments: a user's own, the tests'
planted one) are run in every check besides the ``plans`` drawn.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, Sequence

from .dqpknown import KNOWN_BUGS, meets_known_bug
from .execute import Connection, Outcome, run_query
from .generator import FromClause, GeneratorOptions, SqlGenerator
from .oracle import Check, OracleBase, Verdict
from .queries import select_query
from .result import describe_rows, multiset_difference, render_rows
from .schema import TableInfo, quote_name

# variable -> values tried (each only when the server has the variable); none changes a result
SETTINGS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "join_cache_level": tuple(str(n) for n in range(0, 9)),
    "optimizer_use_condition_selectivity": ("1", "2", "3", "4", "5"),
    "optimizer_search_depth": ("0", "1", "2"),
    "optimizer_prune_level": ("0", "1", "2"),
    "in_predicate_conversion_threshold": ("2",),
    "expensive_subquery_limit": ("0",),
    "join_buffer_size": ("128",),
    "join_buffer_space_limit": ("2048",),
    "tmp_memory_table_size": ("16384",),
    "max_heap_table_size": ("16384",),
    "big_tables": ("1",),
    "eq_range_index_dive_limit": ("1",),
    "optimizer_max_sel_arg_weight": ("1",),
    "optimizer_max_sel_args": ("1",),
    "rowid_merge_buff_size": ("0",),
    "use_stat_tables": ("'NEVER'",),
    "optimizer_selectivity_sampling_limit": ("10",),
    "optimizer_join_limit_pref_ratio": ("10",),
    "optimizer_extra_pruning_depth": ("1",),
    "optimizer_trace": ("'enabled=on'",),
    "sort_buffer_size": ("32768",),
    "max_length_for_sort_data": ("4",),
})
# flags that are no-ops or not plan choices
IGNORED_FLAGS = frozenset({"engine_condition_pushdown"})
MODIFIERS = ("SQL_BUFFER_RESULT", "SQL_BIG_RESULT", "SQL_SMALL_RESULT")


def reads_a_view(fc: FromClause) -> bool:
    """True when the FROM clause reads a view (its columns may be expressions the query's
    text does not show)."""
    return any(t.is_view for _, t in fc.scope.tables)


class DQPOracle(OracleBase):
    """The DQP oracle (name ``dqp``) on the first connection's server."""

    name = "dqp"

    def __init__(self, options: GeneratorOptions | None = None, statement_timeout: float = 10.0,
                 plans: int = 3, avoid_plans: frozenset[str] = frozenset(KNOWN_BUGS),
                 extra_plans: Sequence[str] = ()) -> None:
        super().__init__(options, statement_timeout)
        self.plans = plans
        self.avoid_plans = avoid_plans
        self.extra_plans = tuple(extra_plans)  # SET STATEMENT assignments run in every check
                                               # (tests: a planted one)
        self.flags: dict[str, bool] = {}
        self.variables: dict[str, str] = {}
        self.indexes: dict[tuple[str, str], list[str]] = {}

    def default_options(self) -> GeneratorOptions:
        """Several plans per check, each fetching every row: joins stay small."""
        return GeneratorOptions(max_join_rows=5_000)

    def prepare(self, conns: Sequence[Connection], tables: list[TableInfo],
                rows: dict[tuple[str, str], int]) -> list[TableInfo]:
        """Read the session's optimizer_switch, the variables the server has, the indexes."""
        got = run_query(conns[0], "SELECT @@SESSION.optimizer_switch")
        self.flags = {}
        if not got.failed and got.rows:
            for item in str(got.rows[0][0]).split(","):
                flag, _, value = item.partition("=")
                if flag and flag not in IGNORED_FLAGS:
                    self.flags[flag] = value == "on"
        names = ", ".join(f"'{v}'" for v in SETTINGS)
        got = run_query(conns[0], "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM "
                                  "information_schema.SESSION_VARIABLES WHERE LOWER(VARIABLE_NAME) "
                                  f"IN ({names})")
        self.variables = {str(n): str(v) for n, v in (got.rows or ())}
        self.indexes = index_names(conns[0], tables)
        return tables

    def plan_choices(self, gen: SqlGenerator, fc: FromClause, variant: str,
                     sql: str = "") -> list[tuple[str, str]]:
        """Every plan the query sql may be drawn to run under: (plan name, how: 'set'
        assignment, 'hint' alias:hint, 'order', 'modifier' keyword); a plan of avoid_plans
        only when sql does not meet its known bug (the extra plans: :meth:`extra_choices`)."""
        choices: list[tuple[str, str]] = []
        for flag, on in self.flags.items():
            choices.append((f"switch {flag}={'off' if on else 'on'}",
                            f"set optimizer_switch='{flag}={'off' if on else 'on'}'"))
        for var, candidates in SETTINGS.items():
            current = self.variables.get(var)
            if current is None:
                continue
            for value in candidates:
                if value.strip("'").lower() != current.lower():
                    choices.append((f"setting {var}={value}", f"set {var}={value}"))
        for alias, table in fc.scope.tables:
            for hint in hints(self.indexes.get((table.schema, table.name), []), table):
                choices.append((f"hint {alias} {hint}", f"hint {alias}:{hint}"))
        if len(fc.parts) > 1 and fc.inner_only and variant != "union":
            choices.append(("order straight_join", "order"))
        for modifier in MODIFIERS:
            choices.append((f"modifier {modifier}", f"modifier {modifier}"))
        views = reads_a_view(fc)
        return [(n, h) for n, h in choices if not self.avoided(n, sql, views, gen.tables)]

    def extra_choices(self, sql: str = "", views: bool = False,
                      tables: Sequence[TableInfo] = ()) -> list[tuple[str, str]]:
        """The extra plans (``extra_plans``), run in every check besides the plans drawn."""
        extras = [(f"setting {extra}", f"set {extra}") for extra in self.extra_plans]
        return [(n, h) for n, h in extras if not self.avoided(n, sql, views, tables)]

    def avoided(self, plan: str, sql: str, views: bool = False,
                tables: Sequence[TableInfo] = ()) -> bool:
        """True when the plan is one of avoid_plans and sql may meet its known bug: its text
        does (tables: the generator's, whose column types a test may read), or it reads a
        view (views: whose columns' expressions the text does not show; session 10's
        b56cc61bfdc7 met KW46-NOT-NULL-RANGE-IS-UNKNOWN through a view's ``JSON_ARRAY(...)``
        column)."""
        return plan in self.avoid_plans and (views or meets_known_bug(plan, sql, tables))

    def generate(self, gen: SqlGenerator) -> Check | None:
        """Q under up to ``plans`` plans drawn (a combination of flags now and then) and
        under every extra plan."""
        fc = gen.from_clause()
        if fc is None:
            return None
        p = gen.predicate(fc.scope) if gen.chance(0.7) else ""
        where = f" WHERE {p}" if p else ""
        sql, variant = select_query(gen, fc, where, rich=True)
        choices = self.plan_choices(gen, fc, variant, sql)
        picked = [choices[gen.rng.randrange(len(choices))]
                  for _ in range(self.plans if choices else 0)]
        switches = [h for _, h in choices if h.startswith("set optimizer_switch=")]
        if len(switches) >= 2 and gen.chance(0.3):  # two or three flags at once
            combo = [switches[gen.rng.randrange(len(switches))] for _ in range(gen.rng.randrange(2, 4))]
            flags = sorted({h.split("'")[1] for h in combo})
            picked[0] = (f"switch {','.join(flags)}", f"set optimizer_switch='{','.join(flags)}'")
        picked += self.extra_choices(sql, reads_a_view(fc), gen.tables)
        queries = [sql]
        for plan, how in dict(picked).items():
            rewritten = apply_plan(sql, how, fc, p)
            if rewritten is not None and rewritten != sql:
                queries.append(f"/* dqp: {plan} */ {rewritten}")
        if len(queries) < 2:
            return None
        return Check(tuple(queries), variant)

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when every plan's rows equal Q's (as multisets)."""
        base = render_rows(outcomes[0].rows or ())
        results = [describe_rows(base)]
        details = []
        for query, outcome in zip(check.queries[1:], outcomes[1:]):
            plan = plan_of(query)
            rows = render_rows(outcome.rows or ())
            results.append(describe_rows(rows))
            only_base, only_plan = multiset_difference(base, rows)
            if only_base or only_plan:
                details.append(f"under {plan}: rows only in Q: {describe_rows(only_base)}; rows "
                               f"only under the plan: {describe_rows(only_plan)}")
        if not details:
            return Verdict("agree", results=tuple(results))
        return Verdict("differ", results=tuple(results), detail="DQP: " + " / ".join(details))


def plan_of(query: str) -> str:
    """The plan a DQP query names in its leading comment (``/* dqp: PLAN */``)."""
    if query.startswith("/* dqp: "):
        return query[len("/* dqp: "):query.index(" */")]
    return "?"


def index_names(conn: Connection, tables: Sequence[TableInfo]) -> dict[tuple[str, str], list[str]]:
    """Each base table's index names (information_schema.STATISTICS), PRIMARY first."""
    schemas = sorted({t.schema for t in tables})
    if not schemas:
        return {}
    listed = ", ".join("'" + s.replace("'", "''") + "'" for s in schemas)
    got = run_query(conn, "SELECT DISTINCT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME FROM "
                          f"information_schema.STATISTICS WHERE TABLE_SCHEMA IN ({listed}) "
                          "ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME <> 'PRIMARY', INDEX_NAME")
    found: dict[tuple[str, str], list[str]] = {}
    for schema, table, index in got.rows or ():
        found.setdefault((str(schema), str(table)), []).append(str(index))
    return found


def hints(indexes: Sequence[str], table: TableInfo) -> list[str]:
    """The index hints tried on one table (none on a view)."""
    if table.is_view:
        return []
    out = ["USE INDEX ()"]
    for index in indexes:
        name = quote_name(index)
        out += [f"FORCE INDEX ({name})", f"IGNORE INDEX ({name})", f"IGNORE INDEX FOR JOIN ({name})"]
    return out


def apply_plan(sql: str, how: str, fc: FromClause, predicate: str) -> str | None:
    """sql under one plan (see :meth:`DQPOracle.plan_choices`); None when it does not apply."""
    if how.startswith("set "):
        return f"SET STATEMENT {how[4:]} FOR {sql}"
    if how.startswith("hint "):
        alias, _, hint = how[5:].partition(":")
        part = next((p for p in fc.parts if p.alias == alias), None)
        if part is None or part.ref not in sql:
            return None
        return sql.replace(part.ref, f"{part.ref} {hint}")
    if how.startswith("modifier "):
        return _after_select(sql, how[len("modifier "):])
    if how == "order":
        return straight_join(sql, fc, predicate)
    return None


def _after_select(sql: str, keyword: str) -> str:
    """sql with keyword after its first SELECT (and after DISTINCT)."""
    if sql.startswith("SELECT DISTINCT "):
        return f"SELECT DISTINCT {keyword} " + sql[len("SELECT DISTINCT "):]
    return f"SELECT {keyword} " + sql[len("SELECT "):]


def straight_join(sql: str, fc: FromClause, predicate: str) -> str | None:
    """sql with fc's inner joins as a comma list in reverse order, ON conditions in the WHERE,
    and ``SELECT STRAIGHT_JOIN`` (the join order is the listed one)."""
    where = f" WHERE {predicate}" if predicate else ""
    head = f"{fc.sql}{where}"
    if sql.count(head) != 1:
        return None
    refs = [p.ref for p in reversed(fc.parts)]
    conditions = [f"({p.on})" for p in fc.parts if p.on] + ([predicate] if predicate else [])
    body = ", ".join(refs) + (f" WHERE {' AND '.join(conditions)}" if conditions else "")
    return _after_select(sql.replace(head, body), "STRAIGHT_JOIN")
