"""Primary/replica replication between managed servers (GTID based)."""
from __future__ import annotations

import time
from typing import Any

from ..errors import QueryError, ReplicationError
from .options import Option
from .server import Server


def replication_options(server: Server) -> list[Option]:
    """Options every server of a replicating set gets (binlog on, GTID)."""
    opts = [Option("log-bin", "mysql-bin"), Option("log-slave-updates"),
            Option("binlog-format", "ROW"), Option("relay-log", "relay-bin"),
            Option("report-host", server.host), Option("report-port", str(server.port))]
    if server.tree.version and server.tree.version.flavor != "mariadb":
        opts += [Option("gtid-mode", "ON"), Option("enforce-gtid-consistency", "ON")]
    return opts


def is_mariadb(server: Server) -> bool:
    """True for MariaDB servers (MariaDB GTIDs), False for MySQL/Percona."""
    return server.tree.version is None or server.tree.version.flavor == "mariadb"


REPL_USER = "kewpie_repl"
REPL_PASSWORD = "kewpie-repl-pw"


def replication_account(primary: Server) -> tuple[str, str]:
    """The account a replica logs in with: root over loopback; across network
    namespaces a replication-only account with a password, for the namespaces'
    subnet only (created on the primary, unreplicated)."""
    if primary.net is None:
        return "root", ""
    subnet = primary.net.address.rsplit(".", 1)[0] + ".%"
    conn = primary.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute(f"CREATE USER IF NOT EXISTS '{REPL_USER}'@'{subnet}' "
                        f"IDENTIFIED BY '{REPL_PASSWORD}'")
            cur.execute(f"GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'{subnet}'")
    finally:
        conn.close()
    return REPL_USER, REPL_PASSWORD


def start_replica(primary: Server, replica: Server, timeout: float = 30.0) -> None:
    """Point replica at primary with GTID auto-positioning and wait until both threads run."""
    user, password = replication_account(primary)
    if is_mariadb(replica):
        change = (f"CHANGE MASTER TO MASTER_HOST='{primary.host}', MASTER_PORT={primary.port}, "
                  f"MASTER_USER='{user}', MASTER_PASSWORD='{password}', "
                  f"MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1")
    else:
        change = (f"CHANGE MASTER TO MASTER_HOST='{primary.host}', MASTER_PORT={primary.port}, "
                  f"MASTER_USER='{user}', MASTER_PASSWORD='{password}', MASTER_AUTO_POSITION=1, "
                  f"MASTER_CONNECT_RETRY=1")
    try:
        replica.execute("STOP SLAVE")
        replica.execute(change)
        replica.execute("START SLAVE")
    except QueryError as exc:
        raise ReplicationError(f"cannot make {replica.name} a replica of {primary.name}: {exc}",
                               replica.errlog.tail()) from exc
    deadline = time.monotonic() + timeout
    while True:
        status = replica_status(replica)
        if status.get("Slave_IO_Running") == "Yes" and status.get("Slave_SQL_Running") == "Yes":
            return
        if time.monotonic() > deadline:
            raise ReplicationError(f"replica {replica.name} did not start replicating from "
                                   f"{primary.name} within {timeout:.0f}s: "
                                   f"{describe_status(status)}", replica.errlog.tail())
        time.sleep(0.02)


def replica_status(replica: Server) -> dict[str, Any]:
    """SHOW SLAVE STATUS as a dict ({} if not a replica)."""
    rows = replica.sql.query_dicts("SHOW SLAVE STATUS")
    return rows[0] if rows else {}


def describe_status(status: dict[str, Any]) -> str:
    """A one-line summary of replica status for error messages."""
    if not status:
        return "not configured as a replica"
    keys = ("Slave_IO_Running", "Slave_SQL_Running", "Last_IO_Error", "Last_SQL_Error",
            "Seconds_Behind_Master", "Gtid_IO_Pos")
    return ", ".join(f"{k}={status.get(k)!r}" for k in keys if k in status)


def primary_position(primary: Server) -> str:
    """The primary's current GTID position."""
    if is_mariadb(primary):
        return primary.execute("SELECT @@GLOBAL.gtid_binlog_pos")[0][0] or ""
    return primary.execute("SELECT @@GLOBAL.gtid_executed")[0][0] or ""


def wait_for_replica(primary: Server, replica: Server, timeout: float = 60.0) -> None:
    """Block until replica has applied everything primary committed so far."""
    position = primary_position(primary)
    if not position:
        return
    if is_mariadb(replica):
        sql, args = "SELECT MASTER_GTID_WAIT(%s, %s)", (position, timeout)
    else:
        sql, args = "SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)", (position, timeout)
    try:
        result = replica.execute(sql, args)[0][0]
    except QueryError as exc:
        raise ReplicationError(f"waiting for {replica.name} to catch up failed: {exc}") from exc
    if result != 0:
        status = replica_status(replica)
        raise ReplicationError(f"replica {replica.name} did not reach {primary.name}'s position "
                               f"{position} within {timeout:.0f}s: {describe_status(status)}",
                               replica.errlog.tail())
