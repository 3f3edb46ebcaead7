"""Making a restored server a replica, from the position its backup recorded.

MariaDB: ``SET GLOBAL gtid_slave_pos = '<GTID of the backup>'`` then
``CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos`` (see
:func:`lib.servers.replication.start_replica`).  MySQL/Percona with GTIDs:
``RESET MASTER; SET GLOBAL gtid_purged = '<set>'`` then auto-positioning.
Without a GTID: ``MASTER_LOG_FILE``/``MASTER_LOG_POS``.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..servers import replication
from .errors import BackupInfoError
from .results import BinlogInfo
from ..errors import QueryError, ReplicationError

if TYPE_CHECKING:
    from ..servers.server import Server


def replicate_from_backup(primary: Server, replica: Server, position: BinlogInfo | None,
                          timeout: float = 30.0) -> None:
    """Start replica replicating from primary at the backup's binlog position.

    BackupInfoError when the backup recorded no position (binlog off on the
    primary); ReplicationError when replication does not start.
    """
    if position is None:
        raise BackupInfoError(f"the backup of {primary.name} has no binlog position (is log-bin "
                              f"on?); cannot make {replica.name} a replica from it")
    try:
        replica.execute("STOP SLAVE")
        if position.gtid and replication.is_mariadb(replica):
            replica.execute("SET GLOBAL gtid_slave_pos = %s", (position.gtid,))
        elif position.gtid:
            replica.execute("RESET MASTER")
            replica.execute("SET GLOBAL gtid_purged = %s", (position.gtid,))
        else:
            start_at_file_position(primary, replica, position, timeout)
            return
    except QueryError as exc:
        raise ReplicationError(f"cannot set {replica.name}'s position to {position}: {exc}",
                               replica.errlog.tail()) from exc
    replication.start_replica(primary, replica, timeout)


def start_at_file_position(primary: Server, replica: Server, position: BinlogInfo,
                           timeout: float) -> None:
    """CHANGE MASTER TO the binlog file and position, START SLAVE, wait for both threads."""
    use_gtid = ", MASTER_USE_GTID=no" if replication.is_mariadb(replica) else ""
    replica.execute(f"CHANGE MASTER TO MASTER_HOST='{primary.host}', MASTER_PORT={primary.port}, "
                    f"MASTER_USER='root', MASTER_PASSWORD='', MASTER_LOG_FILE=%s, "
                    f"MASTER_LOG_POS=%s, MASTER_CONNECT_RETRY=1{use_gtid}",
                    (position.file, position.position))
    replica.execute("START SLAVE")
    deadline = time.monotonic() + timeout
    while True:
        status = replication.replica_status(replica)
        if status.get("Slave_IO_Running") == "Yes" and status.get("Slave_SQL_Running") == "Yes":
            return
        if time.monotonic() > deadline:
            raise ReplicationError(f"replica {replica.name} did not start replicating from "
                                   f"{primary.name} at {position}: "
                                   f"{replication.describe_status(status)}",
                                   replica.errlog.tail())
        time.sleep(0.02)
