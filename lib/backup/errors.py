"""Typed errors of the backup layer; each carries the backup tool's log tail.

They derive from :class:`lib.errors.ServerError`, so ``str(exc)`` shows the
message, then ``--- backup tool log tail ---`` and the last lines of the
tool's log.  A test can assert on ``exc.tool_message`` (the tool's own error
lines, e.g. ``Failed to connect to MariaDB server: ...``).
"""
from __future__ import annotations

from typing import Sequence

from ..errors import ServerError


class BackupError(ServerError):
    """A backup, prepare or restore could not be done."""

    evidence_title = "backup tool log tail"


class BackupToolError(BackupError):
    """The backup tool (or the stream extractor) failed: non-zero exit or no success line.

    ``step`` is ``backup``, ``prepare``, ``copy-back``..., ``argv`` the command,
    ``returncode`` its exit status (None on timeout), ``log_path`` the full log
    and ``tool_message`` the tool's own error lines ('' when it printed none).
    """

    def __init__(self, message: str, log_tail: str = "", step: str = "",
                 argv: Sequence[str] = (), returncode: int | None = None,
                 log_path: str = "", tool_message: str = "") -> None:
        super().__init__(message, log_tail)
        self.step = step
        self.argv = list(argv)
        self.returncode = returncode
        self.log_path = log_path
        self.tool_message = tool_message


class RestoreError(BackupError):
    """The harness refused or failed a restore (server still running, datadir problem...)."""


class BackupInfoError(BackupError):
    """A backup's info files are missing or do not fit (e.g. incrementals out of order)."""
