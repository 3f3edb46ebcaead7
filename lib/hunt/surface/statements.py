"""A stream of statements over a generated schema: SELECTs, DML, DDL that keeps the
queried columns, prepared statements, session variables and hints, transactions,
EXPLAIN/ANALYZE, stored procedures, HANDLER, sequences.

:class:`StatementGenerator` gives units (:meth:`StatementGenerator.unit`: a list of
:class:`Statement`, sent in order on one connection -- a PREPARE, its SET and
EXECUTE and DEALLOCATE; a transaction), each statement with its **kind** (the
statement's verb and form: ``SELECT``, ``INSERT ... SELECT``, ``ALTER TABLE ADD
INDEX``...), its **features** (clauses, functions, operators, hints) and its
nondeterminism (lib.hunt.surface.expr.NONDETERMINISM); a SELECT keeps its tree.

The DDL of the stream never drops or changes a column the queries read: it adds
and drops indexes (``xk1``...) and extra columns (``xc1``...), rebuilds and
analyses tables, and replaces its own views (``xv1``...) and temporary tables, so
that any thread's statements stay valid while others run.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

from .expr import KNOWN_BUGS
from .exprgen import Scope, Source, collation_of
from .querygen import QueryGenerator
from .schema import SchemaSpec, TableSpec, unkeyable
from .select import Select
from .types import quote

# statement kinds and their weights in the stream (a weight of 0 leaves a kind out)
WEIGHTS: Mapping[str, int] = MappingProxyType({
    "SELECT": 40, "EXPLAIN": 3, "ANALYZE SELECT": 2, "SET STATEMENT": 3, "PREPARE": 4,
    "INSERT": 7, "INSERT ... SELECT": 2, "INSERT ... ON DUPLICATE KEY UPDATE": 2,
    "REPLACE": 2, "UPDATE": 6, "UPDATE multi-table": 2, "DELETE": 3, "DELETE multi-table": 1,
    "DELETE ... RETURNING": 1, "INSERT ... RETURNING": 1, "FOR PORTION OF": 1,
    "SET SESSION": 4, "TRANSACTION": 3, "ALTER TABLE ADD INDEX": 2,
    "ALTER TABLE DROP INDEX": 1, "ALTER TABLE ADD COLUMN": 1, "ALTER TABLE DROP COLUMN": 1,
    "ALTER TABLE FORCE": 1, "ANALYZE TABLE": 2, "OPTIMIZE TABLE": 1, "CHECK TABLE": 1,
    "CHECKSUM TABLE": 1, "CREATE VIEW": 1, "CREATE TEMPORARY TABLE": 1, "CALL": 1,
    "HANDLER": 1, "SEQUENCE": 1, "SELECT INTO": 1,
})
MAX_OWN_INDEXES = 8     # indexes a stream adds to one table before it drops one
SESSION_VARIABLES = (
    ("optimizer_switch", ("'index_merge=off'", "'index_condition_pushdown=off'",
                          "'derived_merge=off'", "'semijoin=off'", "'materialization=off'",
                          "'in_to_exists=off'", "'firstmatch=off'", "'loosescan=off'",
                          "'mrr=on,mrr_sort_keys=on'", "'rowid_filter=off'",
                          "'condition_pushdown_for_derived=off'", "'split_materialized=off'",
                          "'subquery_cache=off'", "'exists_to_in=off'", "'table_elimination=off'",
                          "'join_cache_hashed=off'", "'outer_join_with_cache=off'",
                          "'not_null_range_scan=on'", "'hash_join_cardinality=on'",
                          "'cset_narrowing=on'", "DEFAULT")),
    ("join_cache_level", ("0", "1", "2", "4", "6", "8")),
    ("optimizer_search_depth", ("0", "1", "2", "62")),
    ("optimizer_use_condition_selectivity", ("1", "2", "3", "4", "5")),
    ("optimizer_prune_level", ("0", "1", "2")),
    ("in_predicate_conversion_threshold", ("0", "2", "1000")),
    ("sql_mode", ("''", "DEFAULT", "'STRICT_ALL_TABLES'", "'ONLY_FULL_GROUP_BY'",
                  "'PAD_CHAR_TO_FULL_LENGTH'", "'NO_UNSIGNED_SUBTRACTION'")),
    ("big_tables", ("0", "1")),
    ("max_heap_table_size", ("16384", "DEFAULT")),
    ("tmp_memory_table_size", ("0", "16384", "DEFAULT")),
    ("div_precision_increment", ("0", "4", "30")),
    ("use_stat_tables", ("'NEVER'", "'PREFERABLY'", "'COMPLEMENTARY'")),
    ("histogram_type", ("'JSON_HB'", "'DOUBLE_PREC_HB'")),
    ("join_buffer_size", ("128", "262144")),
    ("eq_range_index_dive_limit", ("0", "200")),
    ("optimizer_max_sel_arg_weight", ("1", "32000")),
    ("sort_buffer_size", ("32768", "DEFAULT")),
    ("group_concat_max_len", ("4", "1024")),
    ("tx_isolation", ("'READ-UNCOMMITTED'", "'READ-COMMITTED'", "'REPEATABLE-READ'",
                               "'SERIALIZABLE'")),
)


def timestamp_in_range(value_sql: str) -> str:
    """A value to store in a TIMESTAMP(n) column (n > 0), NULL when it is out of
    TIMESTAMP's range (KNOWN_BUGS timestamp-range-fraction: an out-of-range value stored
    under IGNORE keeps its fraction, '9999-12-31 23:59:59.999' reads 1970-01-01
    00:00:00.999000); the bounds a day inside the range, whatever the time zone."""
    return (f"IF(({value_sql}) BETWEEN '1970-01-02 00:00:00' AND '2038-01-18 00:00:00', "
            f"{value_sql}, NULL)")


@dataclass(frozen=True)
class Statement:
    """One generated statement."""

    sql: str
    kind: str
    features: frozenset[str] = frozenset()
    nondet: frozenset[str] = frozenset()
    select: Select | None = None

    @property
    def deterministic(self) -> bool:
        """Its answer depends on the data alone."""
        return not self.nondet

    def columns(self) -> list[tuple[str, str]]:
        """A SELECT's result columns (alias, family); [] for other statements."""
        return self.select.columns() if self.select is not None else []


@dataclass
class _State:
    """What the stream created (its own names)."""

    indexes: dict[str, list[str]] = field(default_factory=dict)   # table -> xk names
    columns: dict[str, list[str]] = field(default_factory=dict)   # table -> xc names
    counter: int = 0

    def next(self) -> int:
        """A new number for a name this stream creates."""
        self.counter += 1
        return self.counter


class StatementGenerator:
    """Units of statements over a schema (see the module docstring)."""

    def __init__(self, schema: SchemaSpec, rng: random.Random, deterministic: bool = False,
                 weights: Mapping[str, int] | None = None, prefix: str = "",
                 avoid: frozenset[str] = frozenset(KNOWN_BUGS)) -> None:
        self.schema = schema
        self.rng = rng
        self.queries = QueryGenerator(schema, rng, deterministic=deterministic, avoid=avoid)
        self.avoid = avoid
        self.weights = dict(weights or WEIGHTS)
        self.kinds = [k for k, w in self.weights.items() if w > 0]
        self.prefix = prefix          # names this stream creates (two threads: two prefixes)
        self.state = _State()

    # ------------------------------------------------------------ the stream
    def unit(self) -> list[Statement]:
        """The next unit: one statement, or a few that belong together."""
        kind = self.rng.choices(self.kinds, [self.weights[k] for k in self.kinds])[0]
        maker = getattr(self, "_" + kind.lower().replace(" ... ", "_").replace(" ", "_")
                        .replace("-", "_"))
        out: list[Statement] = maker()
        return out

    def statements(self, count: int) -> list[Statement]:
        """At least count statements (whole units)."""
        out: list[Statement] = []
        while len(out) < count:
            out += self.unit()
        return out

    def select(self) -> Statement:
        """One SELECT with its tree."""
        tree = self.queries.select()
        return Statement(tree.sql(), "SELECT", tree.all_features(), tree.nondet(), tree)

    # ------------------------------------------------------------ SELECT and its forms
    def _select(self) -> list[Statement]:
        return [self.select()]

    def _explain(self) -> list[Statement]:
        s = self.select()
        form = self.rng.choice(("EXPLAIN", "EXPLAIN EXTENDED", "EXPLAIN FORMAT=JSON"))
        return [Statement(f"{form} {s.sql}", "EXPLAIN", s.features | {form}, s.nondet)]

    def _analyze_select(self) -> list[Statement]:
        s = self.select()
        form = self.rng.choice(("ANALYZE", "ANALYZE FORMAT=JSON"))
        return [Statement(f"{form} {s.sql}", "ANALYZE SELECT", s.features | {form},
                          s.nondet | {"clock"})]

    def _set_statement(self) -> list[Statement]:
        s = self.select()
        name, values = self.rng.choice(SESSION_VARIABLES[:8])
        value = self.rng.choice(values)
        return [Statement(f"SET STATEMENT {name}={value} FOR {s.sql}", "SET STATEMENT",
                          s.features | {"SET STATEMENT", name}, s.nondet, s.select)]

    def _prepare(self) -> list[Statement]:
        """PREPARE a SELECT with its literals as ? parameters, SET them, EXECUTE (twice,
        sometimes), DEALLOCATE."""
        rng = self.rng
        tree = self.queries.select()
        for _ in range(20 if "ps-match" in self.avoid else 0):   # KNOWN_BUGS: no MATCH
            if "MATCH_AGAINST" not in tree.all_features():
                break
            tree = self.queries.select()
        if "ps-match" in self.avoid and "MATCH_AGAINST" in tree.all_features():
            return [Statement(tree.sql(), "SELECT", tree.all_features(), tree.nondet(), tree)]
        sql, values = parameterize(tree.sql(), tree, rng.randint(1, 3))
        name = f"ps{self.prefix}{self.state.next()}"
        out = [Statement(f"PREPARE {name} FROM {quote(sql)}", "PREPARE",
                         tree.all_features() | {"PREPARE"}, tree.nondet())]
        using = ""
        if values:
            names = [f"@{name}_{i}" for i in range(len(values))]
            out.append(Statement("SET " + ", ".join(f"{n} = {v}" for n, v in zip(names, values)),
                                 "SET user variable", frozenset({"user variable"})))
            using = " USING " + ", ".join(names)
        for _ in range(rng.choice((1, 1, 2))):
            out.append(Statement(f"EXECUTE {name}{using}", "EXECUTE",
                                 frozenset({"EXECUTE"}), tree.nondet(), tree))
        out.append(Statement(f"DEALLOCATE PREPARE {name}", "DEALLOCATE PREPARE",
                             frozenset({"DEALLOCATE"})))
        return out

    def _select_into(self) -> list[Statement]:
        tree = self.queries.select()
        if len(tree.items) != 1 or tree.setops:
            return [Statement(tree.sql(), "SELECT", tree.all_features(), tree.nondet(), tree)]
        sql = tree.sql() + (" LIMIT 1" if tree.limit is None else "")
        var = f"@v{self.prefix}{self.state.next()}"
        return [Statement(f"{sql} INTO {var}", "SELECT INTO",
                          tree.all_features() | {"SELECT INTO"}, tree.nondet() | {"order"}),
                Statement(f"SELECT {var}, {var} IS NULL", "SELECT", frozenset({"user variable"}),
                          tree.nondet() | {"order"})]

    # ------------------------------------------------------------ DML
    def _table(self) -> TableSpec:
        return self.rng.choice(self.schema.tables)

    def _row(self, table: TableSpec) -> str:
        values = []
        for c in table.ordinary:
            if c.nullable and self.rng.random() < 0.1:
                values.append("NULL")
            elif c.name in ("ps", "pe") and table.period:
                day = self.rng.randint(0, 40)     # ps in days 0..40, pe in 41..81
                values.append(f"'2001-01-01' + INTERVAL {day + (41 if c.name == 'pe' else 0)} DAY")
            elif self.rng.random() < 0.05 and (c.nullable or c.default):
                values.append("DEFAULT")
            else:
                values.append(c.type.literal(self.rng))
        return "(" + ", ".join(values) + ")"

    def _insert_head(self, table: TableSpec, verb: str = "INSERT") -> str:
        ignore = " IGNORE" if verb == "INSERT" and self.rng.random() < 0.95 else ""
        return f"{verb}{ignore} INTO {table.name} ({', '.join(c.name for c in table.ordinary)})"

    def _insert(self) -> list[Statement]:
        t = self._table()
        rows = ", ".join(self._row(t) for _ in range(self.rng.randint(1, 4)))
        return [Statement(f"{self._insert_head(t)} VALUES {rows}", "INSERT",
                          frozenset({"INSERT", t.engine}))]

    def _insert_returning(self) -> list[Statement]:
        t = self._table()
        cols = ", ".join(c.name for c in t.ordinary[:3])
        return [Statement(f"{self._insert_head(t)} VALUES {self._row(t)} RETURNING {cols}",
                          "INSERT ... RETURNING", frozenset({"INSERT", "RETURNING"}))]

    def _no_overlaps(self) -> TableSpec:
        """A table without a WITHOUT OVERLAPS key (REPLACE and ON DUPLICATE KEY UPDATE do
        not support them: documented)."""
        tables = [t for t in self.schema.tables if not any(k.period for k in t.keys)]
        return self.rng.choice(tables or list(self.schema.tables))

    def _replace(self) -> list[Statement]:
        t = self._no_overlaps()
        return [Statement(f"{self._insert_head(t, 'REPLACE')} VALUES {self._row(t)}", "REPLACE",
                          frozenset({"REPLACE", t.engine}))]

    def _insert_on_duplicate_key_update(self) -> list[Statement]:
        t = self._no_overlaps()
        target = self.rng.choice([c for c in t.ordinary])
        update = f"{target.name} = VALUES({target.name})" if self.rng.random() < 0.5 else \
            f"{target.name} = {target.type.literal(self.rng)}"
        head = self._insert_head(t)
        return [Statement(f"{head} VALUES {self._row(t)} ON DUPLICATE KEY UPDATE {update}",
                          "INSERT ... ON DUPLICATE KEY UPDATE",
                          frozenset({"INSERT", "ON DUPLICATE KEY UPDATE"}))]

    def _insert_select(self) -> list[Statement]:
        t = self._table()
        cols = ", ".join(c.name for c in t.ordinary)
        alias = "z"
        scope = Scope([self.queries.table_source(t, alias)])
        where = self.queries.exprs.predicate(scope, 1)
        sel = f"SELECT {', '.join(f'{alias}.{c.name}' for c in t.ordinary)} FROM {t.name} AS {alias}"
        return [Statement(f"INSERT IGNORE INTO {t.name} ({cols}) {sel} WHERE {where.sql()} "
                          f"LIMIT {self.rng.randint(1, 5)}", "INSERT ... SELECT",
                          where.all_features() | {"INSERT ... SELECT"}, where.all_nondet())]

    def _set_clause(self, t: TableSpec, alias: str, scope: Scope) -> tuple[str, frozenset[str]]:
        targets = [c for c in t.ordinary if c.name not in ("ps", "pe")] or list(t.ordinary)
        c = self.rng.choice(targets)
        if c.family in ("geom",):
            value_sql, features = c.type.literal(self.rng), frozenset[str]()
        else:   # (a string the column's character set can hold)
            value = self.queries.exprs.value(scope, c.family, 1,
                                             collation_of(c.type) if c.family == "str" else "")
            value_sql, features = value.sql(), value.all_features()
            if c.type.kind == "TIMESTAMP" and c.type.scale and \
                    "timestamp-range-fraction" in self.avoid:
                value_sql = timestamp_in_range(value_sql)
        return f"{alias}.{c.name} = {value_sql}", features

    def _set_source(self, table: TableSpec, alias: str) -> Source:
        """A table as an UPDATE's source: without its FULLTEXT columns when the
        match-update bug is avoided (KNOWN_BUGS: no MATCH in the SET)."""
        source = self.queries.table_source(table, alias)
        return replace(source, fulltext=()) if "match-update" in self.avoid else source

    def _update(self) -> list[Statement]:
        t = self._table()
        scope = Scope([self._set_source(t, "u")])
        setc, features = self._set_clause(t, "u", scope)
        where = self.queries.exprs.predicate(scope, 1)
        ignore = "IGNORE " if self.rng.random() < 0.9 else ""
        tail = ""
        if t.primary and self.rng.random() < 0.3:
            keys = ", ".join(f"u.{p.column}" for p in t.primary.parts)
            tail = f" ORDER BY {keys} LIMIT {self.rng.randint(1, 5)}"
        return [Statement(f"UPDATE {ignore}{t.name} AS u SET {setc} WHERE {where.sql()}{tail}",
                          "UPDATE", features | where.all_features() | {"UPDATE"},
                          where.all_nondet())]

    def _update_multi_table(self) -> list[Statement]:
        t = self._table()
        other = self._table()
        scope = Scope([self._set_source(t, "u"), self._set_source(other, "w")])
        setc, features = self._set_clause(t, "u", scope)
        on = self.queries._join_condition(scope, scope.sources[1])
        return [Statement(f"UPDATE IGNORE {t.name} AS u JOIN {other.name} AS w ON {on.sql()} "
                          f"SET {setc}", "UPDATE multi-table",
                          features | on.all_features() | {"UPDATE multi-table"}, on.all_nondet())]

    def _delete(self) -> list[Statement]:
        t = self._table()
        scope = Scope([self.queries.table_source(t, t.name)])
        where = self.queries.exprs.predicate(scope, 1)
        tail = f" LIMIT {self.rng.randint(1, 3)}" if self.rng.random() < 0.5 else ""
        return [Statement(f"DELETE FROM {t.name} WHERE {where.sql()}{tail}", "DELETE",
                          where.all_features() | {"DELETE"}, where.all_nondet())]

    def _delete_returning(self) -> list[Statement]:
        t = self._table()
        scope = Scope([self.queries.table_source(t, t.name)])
        where = self.queries.exprs.predicate(scope, 1)
        return [Statement(f"DELETE FROM {t.name} WHERE {where.sql()} LIMIT 2 RETURNING "
                          f"{t.ordinary[0].name}", "DELETE ... RETURNING",
                          where.all_features() | {"DELETE", "RETURNING"}, where.all_nondet())]

    def _delete_multi_table(self) -> list[Statement]:
        t = self._table()
        other = self._table()
        scope = Scope([self.queries.table_source(t, "d"), self.queries.table_source(other, "e")])
        on = self.queries._join_condition(scope, scope.sources[1])
        return [Statement(f"DELETE d FROM {t.name} AS d JOIN {other.name} AS e ON {on.sql()}",
                          "DELETE multi-table", on.all_features() | {"DELETE multi-table"},
                          on.all_nondet())]

    def _for_portion_of(self) -> list[Statement]:
        # (only where the split rows keep their keys unique: every unique key has the
        # period WITHOUT OVERLAPS, or there is none)
        periods = [t for t in self.schema.tables if t.period and
                   all(k.period for k in t.keys if k.unique)]
        if not periods:
            return self._update()
        t = self.rng.choice(periods)
        a, b = sorted(self.rng.sample(range(0, 60), 2))
        span = f"FROM '2001-01-01' + INTERVAL {a} DAY TO '2001-01-01' + INTERVAL {b + 1} DAY"
        if self.rng.random() < 0.5:
            c = self.rng.choice([c for c in t.ordinary if c.name not in ("ps", "pe", "c0")]
                                or [t.ordinary[0]])
            return [Statement(f"UPDATE {t.name} FOR PORTION OF {t.period[0]} {span} SET "
                              f"{c.name} = {c.type.literal(self.rng)}", "FOR PORTION OF",
                              frozenset({"UPDATE", "FOR PORTION OF"}))]
        return [Statement(f"DELETE FROM {t.name} FOR PORTION OF {t.period[0]} {span}",
                          "FOR PORTION OF", frozenset({"DELETE", "FOR PORTION OF"}))]

    # ------------------------------------------------------------ session, transactions
    def _set_session(self) -> list[Statement]:
        name, values = self.rng.choice(SESSION_VARIABLES)
        return [Statement(f"SET SESSION {name} = {self.rng.choice(values)}", "SET SESSION",
                          frozenset({"SET SESSION", name}))]

    def _transaction(self) -> list[Statement]:
        rng = self.rng
        begin = rng.choice(("START TRANSACTION", "BEGIN", "START TRANSACTION READ ONLY",
                            "START TRANSACTION WITH CONSISTENT SNAPSHOT"))
        out = [Statement(begin, "TRANSACTION", frozenset({begin}))]
        read_only = "READ ONLY" in begin
        # a savepoint before any table is touched (MyISAM, Aria and MEMORY have none: one
        # set after them is an error)
        if rng.random() < 0.3:
            out.append(Statement("SAVEPOINT sp1", "SAVEPOINT", frozenset({"SAVEPOINT"})))
        for _ in range(rng.randint(1, 4)):
            if read_only or rng.random() < 0.4:
                out.append(self.select())
            else:
                out += rng.choice((self._insert, self._update, self._delete))()
        end = rng.choice(("COMMIT", "ROLLBACK", "COMMIT", "ROLLBACK TO SAVEPOINT sp1"))
        if end.startswith("ROLLBACK TO") and not any(s.kind == "SAVEPOINT" for s in out):
            end = "ROLLBACK"
        out.append(Statement(end, "TRANSACTION", frozenset({end})))
        if end.startswith("ROLLBACK TO"):
            out.append(Statement("COMMIT", "TRANSACTION", frozenset({"COMMIT"})))
        return out

    # ------------------------------------------------------------ DDL
    def _alter_table_add_index(self) -> list[Statement]:
        t = self._table()
        if len(self.state.indexes.get(t.name, [])) >= MAX_OWN_INDEXES:   # (64 keys at most)
            return self._alter_table_drop_index()
        cols = [c for c in t.columns if (c.type.indexable or c.type.blob)
                and c.family != "geom" and not (c.generated and not c.stored)]
        if not cols:
            return self._analyze_table()
        c = self.rng.choice(cols)
        part = c.name + (f"({self.rng.choice((2, 5))})" if c.type.blob or
                         (c.family in ("str", "bin") and c.type.length > 5 and
                          self.rng.random() < 0.3 and c.type.kind in ("CHAR", "VARCHAR",
                                                                      "BINARY", "VARBINARY"))
                         else "")
        if c.type.blob and "(" not in part:
            part += "(5)"
        desc = " DESC" if self.rng.random() < 0.3 and t.engine != "MEMORY" else ""
        if t.versioned and t.engine == "MyISAM" and "vers-desc-key" in self.avoid:
            desc = ""        # KNOWN_BUGS vers-desc-key
        name = f"xk{self.prefix}{self.state.next()}"
        algorithm = self.rng.choice(("", ", ALGORITHM=INPLACE", ", ALGORITHM=COPY", ", LOCK=NONE",
                                     ""))
        if t.engine != "InnoDB" and "INPLACE" in algorithm or "LOCK=NONE" in algorithm:
            algorithm = ""
        if unkeyable(c.type, t.engine, self.avoid):   # KNOWN_BUGS aria-bit-keyread,
            return [Statement(f"CHECKSUM TABLE {t.name}", "CHECKSUM TABLE",   # set-key-spaces
                              frozenset({"CHECKSUM TABLE"}), frozenset())]    # (same draws)
        self.state.indexes.setdefault(t.name, []).append(name)
        return [Statement(f"ALTER TABLE {t.name} ADD INDEX IF NOT EXISTS {name} "
                          f"({part}{desc}){algorithm}", "ALTER TABLE ADD INDEX",
                          frozenset({"ALTER TABLE", "ADD INDEX"}))]

    def _alter_table_drop_index(self) -> list[Statement]:
        owned = [(t, n) for t, names in self.state.indexes.items() for n in names]
        if not owned:
            return self._alter_table_add_index()
        table, name = self.rng.choice(owned)
        self.state.indexes[table].remove(name)
        return [Statement(f"ALTER TABLE {table} DROP INDEX IF EXISTS {name}",
                          "ALTER TABLE DROP INDEX", frozenset({"ALTER TABLE", "DROP INDEX"}))]

    def _alter_table_add_column(self) -> list[Statement]:
        tables = [t for t in self.schema.tables if not t.versioned]  # (needs an option)
        if not tables:
            return self._analyze_table()
        t = self.rng.choice(tables)
        name = f"xc{self.prefix}{self.state.next()}"
        self.state.columns.setdefault(t.name, []).append(name)
        ctype = self.rng.choice(("INT DEFAULT 0", "VARCHAR(10) DEFAULT 'x'", "DATE NULL",
                                 "BIGINT UNSIGNED NULL", "DECIMAL(5,1) DEFAULT 1.5"))
        where = self.rng.choice(("", " FIRST", " AFTER c0"))
        algorithm = self.rng.choice(("", ", ALGORITHM=COPY", ", ALGORITHM=INPLACE", ""))
        if t.engine != "InnoDB" and "INPLACE" in algorithm:
            algorithm = ""
        return [Statement(f"ALTER TABLE {t.name} ADD COLUMN IF NOT EXISTS {name} {ctype}{where}"
                          f"{algorithm}", "ALTER TABLE ADD COLUMN",
                          frozenset({"ALTER TABLE", "ADD COLUMN"}))]

    def _alter_table_drop_column(self) -> list[Statement]:
        owned = [(t, n) for t, names in self.state.columns.items() for n in names]
        if not owned:
            return self._alter_table_add_column()
        table, name = self.rng.choice(owned)
        self.state.columns[table].remove(name)
        return [Statement(f"ALTER TABLE {table} DROP COLUMN IF EXISTS {name}",
                          "ALTER TABLE DROP COLUMN", frozenset({"ALTER TABLE", "DROP COLUMN"}))]

    def _alter_table_force(self) -> list[Statement]:
        t = self._table()
        return [Statement(f"ALTER TABLE {t.name} FORCE", "ALTER TABLE FORCE",
                          frozenset({"ALTER TABLE", "FORCE"}))]

    def _analyze_table(self) -> list[Statement]:
        t = self._table()
        form = self.rng.choice(("", " PERSISTENT FOR ALL", " PERSISTENT FOR COLUMNS () INDEXES ()"))
        return [Statement(f"ANALYZE TABLE {t.name}{form}", "ANALYZE TABLE",
                          frozenset({"ANALYZE TABLE"} | ({"PERSISTENT FOR"} if form else set())))]

    def _optimize_table(self) -> list[Statement]:
        return [Statement(f"OPTIMIZE TABLE {self._table().name}", "OPTIMIZE TABLE",
                          frozenset({"OPTIMIZE TABLE"}))]

    def _check_table(self) -> list[Statement]:
        form = self.rng.choice(("", " QUICK", " EXTENDED", " MEDIUM", " CHANGED"))
        return [Statement(f"CHECK TABLE {self._table().name}{form}", "CHECK TABLE",
                          frozenset({"CHECK TABLE"}))]

    def _checksum_table(self) -> list[Statement]:
        return [Statement(f"CHECKSUM TABLE {self._table().name}", "CHECKSUM TABLE",
                          frozenset({"CHECKSUM TABLE"}), frozenset())]

    def _create_view(self) -> list[Statement]:
        tree = self.queries.select()
        name = f"xv{self.prefix}{self.rng.randint(1, 3)}"
        algorithm = self.rng.choice(("", "ALGORITHM=MERGE ", "ALGORITHM=TEMPTABLE "))
        return [Statement(f"CREATE OR REPLACE {algorithm}VIEW {name} AS {tree.sql()}",
                          "CREATE VIEW", tree.all_features() | {"CREATE VIEW"}),
                Statement(f"SELECT * FROM {name}", "SELECT", frozenset({"VIEW"}), tree.nondet())]

    def _create_temporary_table(self) -> list[Statement]:
        tree = self.queries.select()
        name = f"xt{self.prefix}{self.rng.randint(1, 3)}"
        engine = self.rng.choice(("", " ENGINE=MyISAM", " ENGINE=Aria", " ENGINE=InnoDB"))
        return [Statement(f"DROP TEMPORARY TABLE IF EXISTS {name}", "DROP TEMPORARY TABLE",
                          frozenset({"DROP TEMPORARY TABLE"})),
                Statement(f"CREATE TEMPORARY TABLE {name}{engine} AS {tree.sql()}",
                          "CREATE TEMPORARY TABLE", tree.all_features() |
                          {"CREATE TEMPORARY TABLE ... AS SELECT"}),
                Statement(f"SELECT COUNT(*) FROM {name}", "SELECT", frozenset({"COUNT"}),
                          tree.nondet())]

    def _call(self) -> list[Statement]:
        tree = self.queries.select()
        name = f"xp{self.prefix}{self.rng.randint(1, 3)}"
        body = tree.sql()
        return [Statement(f"CREATE OR REPLACE PROCEDURE {name}() BEGIN {body}; {body}; END",
                          "CREATE PROCEDURE", tree.all_features() | {"CREATE PROCEDURE"}),
                Statement(f"CALL {name}()", "CALL", frozenset({"CALL"}), tree.nondet())]

    def _handler(self) -> list[Statement]:
        rng = self.rng
        t = self._table()
        if t.primary and rng.random() < 0.5 and t.engine != "MEMORY":   # (a hash index)
            read = f"READ `PRIMARY` {rng.choice(('FIRST', 'LAST', 'NEXT', 'PREV'))}"
        else:
            read = rng.choice(("READ FIRST", "READ NEXT", "READ FIRST LIMIT 3"))
        return [Statement(f"HANDLER {t.name} OPEN", "HANDLER", frozenset({"HANDLER"})),
                Statement(f"HANDLER {t.name} {read}", "HANDLER", frozenset({"HANDLER READ"}),
                          frozenset({"order"})),
                Statement(f"HANDLER {t.name} CLOSE", "HANDLER", frozenset({"HANDLER"}))]

    def _sequence(self) -> list[Statement]:
        names = self.schema.sequence_names
        if not names:
            return self._select()
        s = self.rng.choice(names)
        sql = self.rng.choice((f"SELECT NEXTVAL({s})", f"SELECT LASTVAL({s})",
                               f"SELECT SETVAL({s}, {self.rng.randint(-5, 50)})",
                               f"ALTER SEQUENCE {s} RESTART", f"SELECT PREVIOUS VALUE FOR {s}",
                               f"SELECT NEXT VALUE FOR {s}, c0 FROM "
                               f"{self._table().name} LIMIT 2"))
        return [Statement(sql, "SEQUENCE", frozenset({"SEQUENCE"}), frozenset({"sequence"}))]


def parameterize(sql: str, tree: Select, count: int) -> tuple[str, list[str]]:
    """The statement with up to count of its literals as ``?`` parameters, and their
    values in order (literals inside the FROM clause's derived tables and strings that
    repeat are left alone: only the first occurrence of a distinct literal text in the
    WHERE clause is replaced, when it occurs once)."""
    if tree.where is None:
        return sql, []
    literals = [n.template for n in tree.where.walk() if n.leaf == "literal"
                and n.family not in ("word", "bool") and n.template.upper() != "NULL"
                and not n.template.upper().startswith(("DATE", "TIME", "CAST", "JSON"))]
    values: list[str] = []
    where_sql = tree.where.sql()
    start = sql.rfind(where_sql)
    if start < 0:
        return sql, []
    new_where = where_sql
    for text in literals:
        if len(values) >= count:
            break
        if new_where.count(text) != 1 or sql.count(text) != 1:
            continue
        new_where = new_where.replace(text, "?", 1)
        values.append(text)
    return sql[:start] + new_where + sql[start + len(where_sql):], values


def kinds() -> tuple[str, ...]:
    """Every statement kind the stream may give."""
    extra = ("EXECUTE", "DEALLOCATE PREPARE", "SET user variable", "SAVEPOINT",
             "CREATE PROCEDURE", "DROP TEMPORARY TABLE")
    return tuple(WEIGHTS) + extra
