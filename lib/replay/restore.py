"""Undo what a reproducer added, so that kewpie's reuse rule can keep its server.

Most reproducers leave more behind than the ``test`` schema the reuse rule
empties: a ``CREATE SERVER``, a user or role, a schema of their own, a global
variable ``SET``.  Each would cost the next reproducer a fresh server (a
restart: most of a replay's time).  When a fresh server is handed over,
:func:`snapshot` notes what it has (schemas, users and roles, ``mysql.servers``
rows, plugins, global variables); after a reproducer that left the server
running, :func:`restore` drops what was added (plugins uninstalled) and sets
changed variables back.  It
never decides anything: the reuse rule then compares the server's whole
fingerprint with the one taken at its start (lib/servers/reuse.py), and a
server that still differs -- a dropped table of ``mysql``, a plugin, anything
the restore does not know -- is replaced as before.  A statement of the
restore that fails is skipped; each runs under ``max_statement_time``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..servers.server import Server

KEEP_SCHEMAS = frozenset({"information_schema", "performance_schema", "mysql", "sys", "test"})
# Never set back: they move by themselves, or cannot be set at all.
SKIP_VARIABLES = frozenset({"gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos",
                            "gtid_slave_pos", "gtid_executed", "gtid_purged", "timestamp",
                            "wsrep_start_position"})
STATEMENT_SECONDS = 10
READ_SECONDS = 30          # a server that stops answering is the reuse rule's to judge
_NUMBER_RE = re.compile(r"^-?\d+(\.\d+)?$")


@dataclass(frozen=True)
class State:
    """What a fresh server had."""

    schemas: frozenset[str]
    users: frozenset[tuple[str, str]]       # (user, host); roles have host ''
    servers: frozenset[str]                 # mysql.servers
    variables: dict[str, str]               # global variables (lower-case names)
    plugins: frozenset[str] = frozenset()   # plugins loaded from a library


def _rows(cur: Any, sql: str) -> list[tuple[Any, ...]]:
    cur.execute(sql)
    return list(cur.fetchall())


def _read(cur: Any) -> State:
    schemas = {str(r[0]) for r in _rows(cur, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")}
    users = {(str(r[0]), str(r[1])) for r in _rows(cur, "SELECT User, Host FROM mysql.global_priv")}
    servers = {str(r[0]) for r in _rows(cur, "SELECT Server_name FROM mysql.servers")}
    variables = {str(r[0]).lower(): "" if r[1] is None else str(r[1]) for r in _rows(
        cur, "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES")}
    plugins = {str(r[0]) for r in _rows(
        cur, "SELECT PLUGIN_NAME FROM information_schema.PLUGINS WHERE PLUGIN_LIBRARY IS NOT NULL")}
    return State(frozenset(schemas), frozenset(users), frozenset(servers), variables,
                 frozenset(plugins))


def snapshot(server: Server) -> State | None:
    """What server has now (None when it cannot be read)."""
    import pymysql
    try:
        conn = server.connect(connect_timeout=READ_SECONDS, read_timeout=READ_SECONDS)
    except pymysql.MySQLError:
        return None
    try:
        with conn.cursor() as cur:
            return _read(cur)
    except pymysql.MySQLError:
        return None
    finally:
        conn.close()


def _quote_name(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _literal(conn: Any, value: str) -> str:
    if _NUMBER_RE.match(value):
        return value
    return str(conn.escape(value))


def undo_statements(before: State, now: State, conn: Any) -> list[str]:
    """The statements that take now back to before (what they can)."""
    out: list[str] = []
    for schema in sorted(now.schemas - before.schemas - KEEP_SCHEMAS):
        out.append(f"DROP DATABASE IF EXISTS {_quote_name(schema)}")
    for user, host in sorted(now.users - before.users):
        if host:
            out.append(f"DROP USER IF EXISTS {conn.escape(user)}@{conn.escape(host)}")
        else:
            out.append(f"DROP ROLE IF EXISTS {_quote_name(user)}")
    for name in sorted(now.servers - before.servers):
        out.append(f"DROP SERVER IF EXISTS {_quote_name(name)}")
    for name in sorted(now.plugins - before.plugins):
        out.append(f"UNINSTALL PLUGIN IF EXISTS {_quote_name(name)}")
    for name, value in sorted(before.variables.items()):
        if name in SKIP_VARIABLES or now.variables.get(name, value) == value:
            continue
        out.append(f"SET GLOBAL {name} = {_literal(conn, value)}")
    return out


def restore(server: Server, before: State) -> list[str]:
    """Undo what was added since before (see the module docstring); the statements that
    ran ([] when nothing had changed, or the server could not be read)."""
    import pymysql
    try:
        conn = server.connect(connect_timeout=READ_SECONDS, read_timeout=READ_SECONDS,
                              write_timeout=READ_SECONDS)
    except pymysql.MySQLError:
        return []
    done: list[str] = []
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION max_statement_time = {STATEMENT_SECONDS}")
            cur.execute(f"SET SESSION lock_wait_timeout = {STATEMENT_SECONDS}")
            cur.execute("SET SESSION sql_log_bin = 0")
            for statement in undo_statements(before, _read(cur), conn):
                try:
                    cur.execute(statement)
                    done.append(statement)
                except pymysql.MySQLError:
                    continue
    except pymysql.MySQLError:
        pass
    finally:
        try:
            conn.close()
        except pymysql.MySQLError:
            pass
    return done
