"""Which statements a pquery-style load never sends, and why.

A mined corpus holds statements that would stop the server, lock the harness
out, write outside the workdir or talk to other servers.  Sent in random
order they give findings that are not bugs (a server that stopped because it
was told to, an unanswered health check), or break kewpie's safety rules
(nothing written outside the workdir, listeners on loopback only, nothing
another user owns touched).  :func:`refusal` names the rule a statement
breaks, or returns "" when it may be sent:

- ``shutdown``: ``SHUTDOWN`` (a server told to stop is not a crash);
- ``kill``: ``KILL`` (it ends connections the harness owns);
- ``paths``: ``DATA/INDEX DIRECTORY``, ``LOAD DATA LOCAL`` (the client reads a
  file), and assignments to system variables whose value is a file or folder
  the server writes (the option-safety list, :data:`PATH_VARIABLES`), or to the
  DBUG and syslog ones;
- ``harness-access``: account statements naming ``root`` or the current user
  (``SET PASSWORD``, ``DROP USER root``, ``REVOKE ... FROM CURRENT_USER``),
  writes to the privilege tables and ``USE mysql`` (after which they are
  unqualified), and the variables that can refuse the harness's connections
  or its health check (``max_connections``, ``max_connect_errors``, timeouts,
  ``default_password_lifetime`` -- root's password in a bootstrapped datadir
  has no change time, so any lifetime expires it -- ``wsrep_reject_queries``,
  a global ``max_statement_time``...: :data:`ACCESS_VARIABLES`);
- ``network``: ``CREATE/ALTER SERVER``, a table's ``CONNECTION=``, ``CHANGE
  MASTER`` to a host or port, plugins that listen (handlersocket), variables
  that name ports or addresses, and Galera's that load a provider or run a
  command (:data:`WSREP_VARIABLES`).

The statements are read as text (no parser): a rule errs on the side of
refusing.  :func:`refusal` is pure; the counts per rule are in the corpus's
statistics.
"""
from __future__ import annotations

import re

from ...servers.option_safety import LISTENER_PLUGINS, PATH_OPTIONS, READ_ONLY_PATHS

RULES = ("shutdown", "kill", "paths", "harness-access", "network")
_I = re.I | re.S

# system variables that name a file or folder the server writes (the option-safety rules'
# list as variables), the DBUG control strings (o,FILE) and syslog output
PATH_VARIABLES = frozenset(
    {o.replace("-", "_") for o in PATH_OPTIONS - READ_ONLY_PATHS}
    | {"innodb_tmpdir", "debug", "debug_dbug", "server_audit_output_type",
       "server_audit_syslog_ident", "server_audit_syslog_info", "log_slow_query_file",
       "tmpdir", "slave_load_tmpdir"})
# variables that can keep the harness from connecting, from running its health check
# (SELECT 1 on a new connection), or cut its connections: set by a corpus, they give hangs
# that are not bugs
ACCESS_VARIABLES = frozenset({
    "max_connections", "max_user_connections", "extra_max_connections",
    "max_connect_errors", "connect_timeout", "wait_timeout", "interactive_timeout",
    "net_read_timeout", "net_write_timeout", "max_password_errors",
    # root's password has no change time in a bootstrapped datadir: any lifetime expires
    # it, and disconnect_on_expired_password then refuses the harness's connections
    "default_password_lifetime", "disconnect_on_expired_password",
    "wsrep_reject_queries",           # refuses every client's queries, even without Galera
    "proxy_protocol_networks",        # connections from there must speak the proxy protocol
    "require_secure_transport", "thread_pool_max_threads",
})
# variables only risky set globally (then every new connection, the harness's too, has them)
GLOBAL_ACCESS_VARIABLES = frozenset({"max_statement_time", "max_allowed_packet",
                                     "lock_wait_timeout", "sql_select_limit"})
# Galera variables that load a library, run a command or reach a network
WSREP_VARIABLES = frozenset({
    "wsrep_provider", "wsrep_provider_options", "wsrep_cluster_address", "wsrep_notify_cmd",
    "wsrep_sst_method", "wsrep_sst_receive_address", "wsrep_sst_donor", "wsrep_sst_auth",
    "wsrep_node_address", "wsrep_node_incoming_address", "wsrep_data_home_dir",
    "wsrep_start_position", "wsrep_on",
})
_SHUTDOWN = re.compile(r"^\s*shutdown\b", _I)
_KILL = re.compile(r"^\s*kill\b", _I)
_ASSIGNED = re.compile(
    r"(?<![@\w])(?:@@\s*(?:global|session|local)\s*\.\s*|@@)?`?([a-z_][a-z0-9_]*)`?\s*:?=", _I)
_SYSVAR_CONTEXT = re.compile(r"^\s*set\b|@@|\bset\s+(?:global|session|local|statement)\b", _I)
_GLOBAL = re.compile(r"\bglobal\b", _I)
_DIRECTORY = re.compile(r"\b(?:data|index)\s+directory\b", _I)
_LOCAL_FILE = re.compile(r"\bload\s+(?:data|xml)\s+(?:low_priority\s+|concurrent\s+)?local\b", _I)
_ACCOUNT = re.compile(
    r"^\s*(?:(?:create|alter|drop|rename)\s+(?:or\s+replace\s+)?(?:user|role)\b|grant\b|"
    r"revoke\b|set\s+password\b|set\s+default\s+role\b)", _I)
_ROOT = re.compile(r"\broot\b|\bcurrent_user\b", _I)
_SET_OWN_PASSWORD = re.compile(r"^\s*set\s+password\s*(?!\s*for\b)", _I)
_PRIVILEGE_TABLES = re.compile(
    r"\bmysql`?\s*\.\s*`?(?:global_priv|user|db|tables_priv|columns_priv|procs_priv|"
    r"proxies_priv|roles_mapping|host)\b", _I)
_READ_ONLY = re.compile(r"^\s*(?:select|show|desc|describe|explain|checksum|check|with|\()",
                        _I)
_MYSQL_SCHEMA = re.compile(r"^\s*(?:use\s+`?mysql`?\s*$|(?:drop|alter)\s+(?:database|schema)"
                           r"\s+(?:if\s+exists\s+)?`?mysql`?\b)", _I)
_SERVER = re.compile(r"\b(?:create|alter)\s+(?:or\s+replace\s+)?server\b", _I)
_CONNECTION = re.compile(r"\bconnection\s*=", _I)
_MASTER_HOST = re.compile(r"\b(?:master|primary)_(?:host|port)\b", _I)
_LISTENER_PLUGIN = re.compile(r"^\s*(?:un)?install\b.*\b(?:" + "|".join(
    re.escape(p) for p in sorted(LISTENER_PLUGINS)) + r")\b", _I)
_LISTENERISH = re.compile(r"(?:^|_)(?:port|address|addr|bind|listen)(?:$|_)", _I)


def _assigned(sql: str) -> list[str]:
    """The system variable names a statement may assign (``SET name =``, ``@@global.name
    :=``), lower case: every ``name =`` of a SET statement, or of any statement that names
    a system variable with ``@@`` or ``SET GLOBAL``; user variables (``@x``) are not among
    them, nor an UPDATE's columns."""
    if "=" not in sql or not _SYSVAR_CONTEXT.search(sql):
        return []
    return [m.group(1).lower() for m in _ASSIGNED.finditer(sql)]


def refusal(sql: str) -> str:
    """The rule (one of :data:`RULES`) that keeps sql from being sent, or ''."""
    if _SHUTDOWN.search(sql):
        return "shutdown"
    if _KILL.search(sql):
        return "kill"
    assigned = _assigned(sql)
    if _DIRECTORY.search(sql) or _LOCAL_FILE.search(sql) or any(
            name in PATH_VARIABLES for name in assigned):
        return "paths"
    if _ACCOUNT.search(sql) and (_ROOT.search(sql) or _SET_OWN_PASSWORD.search(sql)):
        return "harness-access"
    if (_PRIVILEGE_TABLES.search(sql) and not _READ_ONLY.search(sql)) or \
            _MYSQL_SCHEMA.search(sql) or any(name in ACCESS_VARIABLES for name in assigned) \
            or (_GLOBAL.search(sql) and any(n in GLOBAL_ACCESS_VARIABLES for n in assigned)):
        return "harness-access"
    if _SERVER.search(sql) or _CONNECTION.search(sql) or _MASTER_HOST.search(sql) or \
            _LISTENER_PLUGIN.search(sql) or any(_LISTENERISH.search(n) or n in WSREP_VARIABLES
                                                for n in assigned):
        return "network"
    return ""
