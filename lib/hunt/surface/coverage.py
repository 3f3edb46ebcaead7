"""How much of MariaDB's SQL surface a stream of generated statements covers.

:class:`Coverage` counts, over statements (lib.hunt.surface.statements.Statement) and
the schemas they ran on, the **statement kinds**, the **functions and operators**
(lib.hunt.surface.expr.function_names: the catalog's, aggregates, window functions,
comparisons, predicates), the **clauses** (joins of each kind, subqueries of each kind,
CTEs, set operations, GROUP BY/ROLLUP/HAVING, windows, hints, JSON_TABLE...), the
**column types** and **schema features** (engines, key kinds, partitioning, generated
columns, versioning, periods...), and how many statements are deterministic.  Each
count is against the whole list the generator can write, so the figures say what is
reached and what is not; :meth:`Coverage.lines` prints them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from .expr import function_names
from .querygen import JOINS, MODIFIERS, SETOPS
from .schema import SchemaSpec
from .statements import Statement, kinds
from .types import column_types

CLAUSES = tuple(sorted(set(JOINS) | set(SETOPS) | set(MODIFIERS) | {
    "WHERE", "GROUP BY", "WITH ROLLUP", "HAVING", "ORDER BY", "LIMIT", "DISTINCT", "window",
    "aggregate without GROUP BY", "CTE", "RECURSIVE CTE", "CTE reference", "derived table",
    "JSON_TABLE", "NESTED PATH", "VIEW", "FOR SYSTEM_TIME", "no FROM",
    "subquery scalar", "subquery EXISTS", "subquery IN_SUBQUERY", "subquery NOT_IN_SUBQUERY",
    "subquery ANY", "subquery ALL", "index hint USE", "index hint FORCE", "index hint IGNORE",
    "FOR UPDATE", "LOCK IN SHARE MODE", "FOR UPDATE SKIP LOCKED", "SET STATEMENT",
    "EXPLAIN", "EXPLAIN EXTENDED", "EXPLAIN FORMAT=JSON", "ANALYZE", "ANALYZE FORMAT=JSON",
    "RETURNING", "ON DUPLICATE KEY UPDATE", "FOR PORTION OF", "PREPARE", "EXECUTE",
    "user variable", "SAVEPOINT", "PERSISTENT FOR", "MATCH_AGAINST",
}))
SCHEMA_FEATURES = ("InnoDB", "MyISAM", "Aria", "MEMORY", "RocksDB", "PRIMARY", "UNIQUE",
                   "INDEX", "FULLTEXT", "SPATIAL", "prefix key", "DESC key", "multi-column key",
                   "long unique", "WITHOUT OVERLAPS", "partitioned", "generated VIRTUAL",
                   "generated STORED", "system versioning", "application period", "CHECK",
                   "FOREIGN KEY", "sequence", "view", "INVISIBLE", "DEFAULT")


@dataclass
class Coverage:
    """Counts of what a stream used (see the module docstring)."""

    statements: int = 0
    deterministic: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    features: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    schema: Counter[str] = field(default_factory=Counter)
    errors: Counter[int] = field(default_factory=Counter)    # filled by whoever ran them
    ran: int = 0

    def add(self, statements: Iterable[Statement]) -> None:
        """Count statements."""
        for s in statements:
            self.statements += 1
            self.deterministic += s.deterministic
            self.kinds[s.kind] += 1
            self.features.update(s.features)

    def add_schema(self, schema: SchemaSpec) -> None:
        """Count a schema's column types and structure."""
        for t in schema.tables:
            self.schema[t.engine] += 1
            for c in t.columns:
                self.types[c.type.sql.split(" CHARACTER SET")[0].split(" COLLATE")[0]] += 1
                if c.generated:
                    self.schema["generated STORED" if c.stored else "generated VIRTUAL"] += 1
                if c.invisible:
                    self.schema["INVISIBLE"] += 1
                if c.default:
                    self.schema["DEFAULT"] += 1
            for k in t.keys:
                self.schema[k.kind] += 1
                if any(p.prefix for p in k.parts):
                    self.schema["prefix key"] += 1
                if any(p.desc for p in k.parts):
                    self.schema["DESC key"] += 1
                if len(k.parts) > 1:
                    self.schema["multi-column key"] += 1
                if k.period:
                    self.schema["WITHOUT OVERLAPS"] += 1
                if k.unique and any(t.column(p.column).type.blob and not p.prefix
                                    for p in k.parts):
                    self.schema["long unique"] += 1
            for flag, name in ((bool(t.partition), "partitioned"),
                               (t.versioned, "system versioning"),
                               (bool(t.period), "application period"),
                               (bool(t.checks), "CHECK"), (bool(t.foreign_keys), "FOREIGN KEY")):
                if flag:
                    self.schema[name] += 1
        self.schema["sequence"] += len(schema.sequences)
        self.schema["view"] += len(schema.views)

    def functions(self) -> tuple[set[str], frozenset[str]]:
        """(functions and operators used, all the generator can write)."""
        known = function_names()
        return {f for f in self.features if f in known}, known

    def clauses(self) -> tuple[set[str], tuple[str, ...]]:
        """(clauses used, all the generator can write)."""
        return {c for c in self.features if c in CLAUSES}, CLAUSES

    def lines(self) -> list[str]:
        """The figures, one per line."""
        used_f, all_f = self.functions()
        used_c, all_c = self.clauses()
        all_k = kinds()
        all_t = {t.sql.split(" CHARACTER SET")[0].split(" COLLATE")[0]
                 for ts in column_types().values() for t in ts}
        out = [f"statements: {self.statements}, deterministic {self.deterministic} "
               f"({100.0 * self.deterministic / max(1, self.statements):.0f}%)",
               f"statement kinds: {len(self.kinds)} of {len(all_k)}",
               f"functions and operators: {len(used_f)} of {len(all_f)}",
               f"clauses: {len(used_c)} of {len(all_c)}",
               f"column types: {len(self.types)} of {len(all_t)}",
               f"schema features: {sum(1 for f in SCHEMA_FEATURES if self.schema[f])} of "
               f"{len(SCHEMA_FEATURES)}"]
        if self.ran:
            failed = sum(self.errors.values())
            out.append(f"refused by the server: {failed} of {self.ran} "
                       f"({100.0 * failed / self.ran:.2f}%)"
                       + (": " + ", ".join(f"{c} x{n}" for c, n in self.errors.most_common(8))
                          if failed else ""))
        missing = sorted(set(all_k) - set(self.kinds))
        if missing:
            out.append(f"kinds not reached: {', '.join(missing)}")
        missing_c = sorted(set(all_c) - used_c)
        if missing_c:
            out.append(f"clauses not reached: {', '.join(missing_c)}")
        missing_f = sorted(all_f - used_f)
        if missing_f:
            out.append(f"functions not reached: {', '.join(missing_f)}")
        return out
