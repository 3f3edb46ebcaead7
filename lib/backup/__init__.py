"""kewpie's backup layer over mariabackup and Percona xtrabackup/innobackupex.

- :mod:`lib.backup.tool` -- the tool interface (command lines);
  :mod:`lib.backup.choose` -- :func:`select_tool`;
  :mod:`lib.backup.mariabackup`, :mod:`lib.backup.xtrabackup` -- the tools;
- :mod:`lib.backup.execute` -- running a tool as the server user, logged and timed;
- :mod:`lib.backup.take`, :mod:`lib.backup.prepare`, :mod:`lib.backup.restore` -- the steps;
- :mod:`lib.backup.results` -- result objects and parsers of the tools' output and info files;
- :mod:`lib.backup.session` -- :class:`ServerBackups`, what tests use;
- :mod:`lib.backup.validate` -- snapshots, comparison, CHECK TABLE;
- :mod:`lib.backup.replica` -- a replica from a backup's binlog/GTID position;
- :mod:`lib.backup.storage` -- where backups go and who owns them;
- :mod:`lib.backup.errors` -- BackupError, BackupToolError, RestoreError, BackupInfoError.

See docs/backup.md.
"""
from .choose import select_tool
from .errors import BackupError, BackupInfoError, BackupToolError, RestoreError
from .replica import replicate_from_backup
from .results import (BackupInfo, BackupResult, BinlogInfo, Checkpoints, GaleraInfo,
                      PrepareResult, RestoreResult, StepResult, ToolReport)
from .session import ServerBackups
from .tool import BackupTool
from .validate import Snapshot, check_tables, compare_snapshot, take_snapshot

__all__ = (
    "BackupError", "BackupInfoError", "BackupToolError", "RestoreError", "replicate_from_backup",
    "BackupInfo", "BackupResult", "BinlogInfo", "Checkpoints", "GaleraInfo", "PrepareResult",
    "RestoreResult", "StepResult", "ToolReport", "ServerBackups", "BackupTool", "select_tool",
    "Snapshot", "check_tables", "compare_snapshot", "take_snapshot",
)
