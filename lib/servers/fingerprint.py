"""What the next test would see of a server, as a compact fingerprint (the reuse rule).

One ``SELECT`` of scalar subqueries, one round trip per server, returns for
each *part* (schemas, tables, columns, routines, privilege tables, global
variables...) ``"<rows>:<sum>"``: the row count and the sum of a 60-bit slice
of each row's MD5, an order-independent hash with no ``GROUP_CONCAT`` length
limit.  Objects of the ``test`` schema are not hashed but counted
(``test_objects``): kewpie empties that schema between tests, as in 2012.

Only when a part differs does :func:`probe_details` run a second query
(row key -> row text) so ``--verbose`` can say *which* variables, tables or
users changed; it needs the baseline's details, taken only when debug
logging is on (see :class:`StateProbe`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Protocol

# Never part of the fingerprint: they move by themselves (GTID positions, the clock).
VOLATILE_VARIABLES = frozenset({
    "gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos", "gtid_slave_pos",
    "gtid_executed", "gtid_purged", "timestamp", "wsrep_start_position",
})
# Hashed whole, row by row, when the server has them as base tables: the privilege
# tables, the other system tables a statement can fill, and the engine-independent
# statistics the optimizer reads (a test's INSERT INTO mysql.table_stats for a table of
# its own outlives the emptied ``test``; its ANALYZE ... PERSISTENT rows go with the table).
PRIVILEGE_TABLES = (
    "global_priv", "user", "db", "tables_priv", "columns_priv", "procs_priv", "proxies_priv",
    "roles_mapping", "servers", "func", "plugin", "time_zone", "time_zone_name",
    "time_zone_transition", "time_zone_transition_type", "time_zone_leap_second",
    "table_stats", "column_stats", "index_stats",
)
# Status values that say replication or the cluster changed (absent ones are skipped).
STATUS_KEYS = ("Slaves_running", "Slave_running", "Slaves_connected", "Com_change_master",
               "Com_reset_slave", "wsrep_cluster_size",
               "wsrep_ready", "wsrep_local_state_comment", "wsrep_cluster_status")
TEST_SCHEMA = "test"
IGNORED_SCHEMAS = ("information_schema", "performance_schema", TEST_SCHEMA)
SYSTEM_USERS = ("system user", "event_scheduler")
SYSTEM_COMMANDS = ("Daemon", "Binlog Dump", "Binlog Dump GTID", "Slave_IO", "Slave_SQL",
                   "Slave_worker")


def _in_list(values: tuple[str, ...] | frozenset[str]) -> str:
    """A SQL ``(...)`` list of quoted string literals (our own constants only)."""
    return "(" + ", ".join(f"'{v}'" for v in sorted(values)) + ")"


_NOT_IGNORED = _in_list(IGNORED_SCHEMAS)


@dataclass(frozen=True)
class Part:
    """One hashed part: the rows of ``source``, each the ``|``-joined ``columns``;
    the first ``key_columns`` of them name the row in the details."""

    name: str
    source: str
    columns: tuple[str, ...]
    key_columns: int = 2

    def row_sql(self) -> str:
        """The row as one string (NULL spelled ``\\N`` so it differs from '')."""
        cols = ", ".join(f"IFNULL({c}, '\\\\N')" for c in self.columns)
        return f"CONCAT_WS('|', {cols})"

    def key_sql(self) -> str:
        """The row's name in the details (e.g. ``schema.table``)."""
        cols = ", ".join(f"IFNULL({c}, '')" for c in self.columns[:self.key_columns])
        return f"CONCAT_WS('.', {cols})"

    def hash_sql(self) -> str:
        """The scalar subquery giving ``<rows>:<sum of 60-bit MD5 slices>``."""
        return (f"(SELECT CONCAT(COUNT(*), ':', IFNULL(SUM(CAST(CONV(LEFT(MD5({self.row_sql()}), "
                f"15), 16, 10) AS UNSIGNED)), 0)) {self.source})")

    def detail_sql(self) -> str:
        """Every row as (key, row text), for saying what differs."""
        return f"SELECT {self.key_sql()}, {self.row_sql()} {self.source}"


def schema_filter(column: str, table_column: str, sys_tables: tuple[str, ...]) -> str:
    """WHERE clause for the schemas whose definitions are hashed: all but the ignored
    ones and ``sys``, plus ``sys``'s base tables (its ~100 views cost ~30 ms to open
    through TABLES/COLUMNS; they are hashed by definition in the ``views`` part, and
    a new object in ``sys`` shows in ``objects``)."""
    where = f"{column} NOT IN {_in_list(IGNORED_SCHEMAS + ('sys',))}"
    if sys_tables:
        where += f" OR ({column} = 'sys' AND {table_column} IN {_in_list(sys_tables)})"
    return f"WHERE {where}"


def base_parts(sys_tables: tuple[str, ...] = ()) -> tuple[Part, ...]:
    """The parts every server has; sys_tables: the base tables of its ``sys`` schema."""
    tables = schema_filter("TABLE_SCHEMA", "TABLE_NAME", sys_tables)
    return (
        Part("schemas", "FROM information_schema.SCHEMATA",
             ("SCHEMA_NAME", "DEFAULT_CHARACTER_SET_NAME", "DEFAULT_COLLATION_NAME"), 1),
        Part("objects", f"FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN {_NOT_IGNORED}",
             ("TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE")),
        Part("tables", f"FROM information_schema.TABLES {tables}",
             ("TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "ENGINE", "ROW_FORMAT",
              "CREATE_OPTIONS", "TABLE_COLLATION", "TABLE_COMMENT")),
        Part("columns", f"FROM information_schema.COLUMNS {tables}",
             ("TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION", "COLUMN_DEFAULT",
              "IS_NULLABLE", "COLUMN_TYPE", "COLLATION_NAME", "COLUMN_KEY", "EXTRA",
              "GENERATION_EXPRESSION"), 3),
        Part("indexes", f"FROM information_schema.STATISTICS {tables}",
             ("TABLE_SCHEMA", "TABLE_NAME", "INDEX_NAME", "SEQ_IN_INDEX", "COLUMN_NAME",
              "NON_UNIQUE", "SUB_PART", "INDEX_TYPE"), 4),
        Part("routines",
             f"FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA NOT IN {_NOT_IGNORED}",
             ("ROUTINE_SCHEMA", "ROUTINE_NAME", "ROUTINE_TYPE", "MD5(ROUTINE_DEFINITION)",
              "SQL_MODE", "DEFINER", "SECURITY_TYPE"), 3),
        Part("events", "FROM information_schema.EVENTS",
             ("EVENT_SCHEMA", "EVENT_NAME", "DEFINER", "MD5(EVENT_DEFINITION)", "EVENT_TYPE",
              "EXECUTE_AT", "INTERVAL_VALUE", "INTERVAL_FIELD", "SQL_MODE", "STARTS", "ENDS",
              "STATUS", "ON_COMPLETION")),
        Part("triggers",  # only base tables have triggers: sys's views are not opened
             "FROM information_schema.TRIGGERS "
             + schema_filter("EVENT_OBJECT_SCHEMA", "EVENT_OBJECT_TABLE", sys_tables),
             ("TRIGGER_SCHEMA", "TRIGGER_NAME", "EVENT_OBJECT_TABLE", "EVENT_MANIPULATION",
              "ACTION_TIMING", "MD5(ACTION_STATEMENT)", "SQL_MODE", "DEFINER")),
        Part("views", f"FROM information_schema.VIEWS WHERE TABLE_SCHEMA NOT IN {_NOT_IGNORED}",
             ("TABLE_SCHEMA", "TABLE_NAME", "MD5(VIEW_DEFINITION)", "CHECK_OPTION", "DEFINER",
              "SECURITY_TYPE", "ALGORITHM")),
        Part("plugins", "FROM information_schema.PLUGINS",
             ("PLUGIN_NAME", "PLUGIN_LIBRARY", "PLUGIN_STATUS")),
        Part("variables", f"FROM information_schema.GLOBAL_VARIABLES WHERE LOWER(VARIABLE_NAME) "
                          f"NOT IN {_in_list(VOLATILE_VARIABLES)}",
             ("LOWER(VARIABLE_NAME)", "VARIABLE_VALUE"), 1),
        Part("status", f"FROM information_schema.GLOBAL_STATUS WHERE LOWER(VARIABLE_NAME) IN "
                       f"{_in_list(frozenset(k.lower() for k in STATUS_KEYS))}",
             ("LOWER(VARIABLE_NAME)", "VARIABLE_VALUE"), 1),
        Part("transactions", "FROM information_schema.INNODB_TRX",
             ("trx_id", "trx_state", "trx_mysql_thread_id"), 1),
        Part("sessions", f"FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() "
                         f"AND USER NOT IN {_in_list(SYSTEM_USERS)} "
                         f"AND COMMAND NOT IN {_in_list(SYSTEM_COMMANDS)}",
             ("ID", "USER", "DB"), 1),
    )


TEST_OBJECTS_SQL = (
    f"(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{TEST_SCHEMA}') + "
    f"(SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = '{TEST_SCHEMA}') + "
    f"(SELECT COUNT(*) FROM information_schema.EVENTS WHERE EVENT_SCHEMA = '{TEST_SCHEMA}')"
)
# Parts that may differ for a moment after a test (a closed connection still listed).
SETTLING_PARTS = frozenset({"sessions"})


class Queryable(Protocol):
    """What a probe needs of a server: its name and ``execute`` (rows as tuples)."""

    name: str

    def execute(self, sql: str, args: object = None, db: str | None = None) -> list[tuple[Any, ...]]:
        """Run one statement and return its rows."""


@dataclass(frozen=True)
class Fingerprint:
    """A server's state as the next test would see it.

    parts: part name -> ``"<rows>:<hash sum>"``; test_objects: how many tables,
    routines and events the ``test`` schema holds; details (only when asked for):
    part name -> {row key: row text}.
    """

    pid: int | None
    parts: Mapping[str, str]
    test_objects: int = 0
    details: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


def server_parts(server: Queryable) -> tuple[Part, ...]:
    """Every part for this server: :func:`base_parts` (knowing its ``sys`` base tables)
    and one part per privilege/system table of ``mysql`` it has as a base table
    (global_priv or user, db, tables_priv..., servers, func, plugin, time zones), every
    column of each row.  One query, when a set starts."""
    rows = server.execute(
        "SELECT t.TABLE_SCHEMA, t.TABLE_NAME, "
        "GROUP_CONCAT(c.COLUMN_NAME ORDER BY c.ORDINAL_POSITION SEPARATOR ',') "
        "FROM information_schema.TABLES t JOIN information_schema.COLUMNS c "
        "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME "
        "WHERE t.TABLE_TYPE = 'BASE TABLE' AND (t.TABLE_SCHEMA = 'sys' OR "
        f"(t.TABLE_SCHEMA = 'mysql' AND t.TABLE_NAME IN {_in_list(PRIVILEGE_TABLES)})) "
        "GROUP BY t.TABLE_SCHEMA, t.TABLE_NAME")
    sys_tables = tuple(sorted(str(table) for schema, table, _ in rows if schema == "sys"))
    parts = list(base_parts(sys_tables))
    for schema, table, columns in sorted(rows):
        if schema == "mysql":
            names = tuple(f"`{c}`" for c in str(columns).split(","))
            parts.append(Part(f"mysql_{table}", f"FROM mysql.`{table}`", names,
                              min(2, len(names))))
    return tuple(parts)


class StateProbe:
    """The fingerprint query of one server (built once per set: its privilege tables)."""

    def __init__(self, server: Queryable, parts: tuple[Part, ...] | None = None) -> None:
        """parts: those of an earlier server started from the same pristine datadir
        (saves a query); None: ask this server (:func:`server_parts`)."""
        self.server = server
        self.parts: tuple[Part, ...] = parts or server_parts(server)
        self.by_name: Mapping[str, Part] = MappingProxyType({p.name: p for p in self.parts})
        selects = ", ".join(f"{p.hash_sql()} AS `{p.name}`" for p in self.parts)
        self.sql = f"SELECT {TEST_OBJECTS_SQL} AS test_objects, {selects}"

    def take(self, pid: int | None, with_details: bool = False) -> Fingerprint:
        """The fingerprint (one round trip); with_details, every part's rows too."""
        row = self.server.execute(self.sql)[0]
        parts = {p.name: str(value) for p, value in zip(self.parts, row[1:])}
        details = self.details(parts) if with_details else {}
        return Fingerprint(pid, MappingProxyType(parts), int(row[0] or 0),
                           MappingProxyType(details))

    def details(self, names: Iterable[str]) -> dict[str, dict[str, str]]:
        """Row key -> row text of the named parts (one query per part)."""
        out = {}
        for name in names:
            part = self.by_name[name]
            out[name] = {str(k): str(v) for k, v in self.server.execute(part.detail_sql())}
        return out


def changed_parts(before: Fingerprint | None, after: Fingerprint) -> list[str]:
    """Names of the parts that differ (["restarted"] when the pid changed or there is
    no baseline); [] when the next test would see what this one saw."""
    if before is None or before.pid != after.pid:
        return ["restarted"]
    names = sorted(set(before.parts) | set(after.parts))
    return [n for n in names if before.parts.get(n) != after.parts.get(n)]


def describe_rows(old: Mapping[str, str], new: Mapping[str, str], limit: int = 4) -> str:
    """Which rows were added (+), removed (-) or changed (old->new, cut to 20 chars)."""
    items = []
    for key in sorted(set(old) | set(new)):
        if key not in old:
            items.append(f"+{key}")
        elif key not in new:
            items.append(f"-{key}")
        elif old[key] != new[key]:
            was, now = old[key].split("|")[-1], new[key].split("|")[-1]
            items.append(f"{key} {was:.20}->{now:.20}")
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def describe_changes(before: Fingerprint, after: Fingerprint, names: list[str]) -> str:
    """``tables (+db1.t1), variables (max_connections 151->10)``; part names alone
    when the baseline has no details."""
    out = []
    for name in names:
        old, new = before.details.get(name), after.details.get(name)
        if old is None or new is None:
            out.append(name)
        else:
            out.append(f"{name} ({describe_rows(old, new) or 'hash differs'})")
    return ", ".join(out)
