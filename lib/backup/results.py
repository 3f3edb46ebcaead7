"""What the backup tools report, parsed: log lines, info files and step results.

Both tool families write the same files into a backup:

- ``xtrabackup_checkpoints``: ``backup_type``, ``from_lsn``, ``to_lsn``,
  ``last_lsn`` (``key = value`` lines);
- ``xtrabackup_binlog_info`` (MariaDB 11+: ``mariadb_backup_binlog_info``):
  ``<file> <position> [<GTID>]``, tab separated; MySQL GTID sets may continue
  on the next lines after a comma;
- ``xtrabackup_galera_info`` (``mariadb_backup_galera_info``):
  ``<cluster uuid>:<seqno> [<more>]``;
- ``xtrabackup_info`` (``mariadb_backup_info``): ``key = value`` lines.

and say ``completed OK!`` at the end of a successful step.  The parsers here
take text, so they are unit-tested with canned output.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

CHECKPOINTS_FILES = ("xtrabackup_checkpoints", "mariadb_backup_checkpoints")
BINLOG_INFO_FILES = ("mariadb_backup_binlog_info", "xtrabackup_binlog_info")
GALERA_INFO_FILES = ("mariadb_backup_galera_info", "xtrabackup_galera_info")
INFO_FILES = ("mariadb_backup_info", "xtrabackup_info")

SUCCESS_RE = re.compile(r"completed OK!")
# mariabackup 10.5+: "Redo log (from LSN 44404 to 46656) was copied."
# xtrabackup / older mariabackup: "Transaction log of lsn (2543172) to (2543181) was copied."
LSN_RES = (re.compile(r"Redo log \(from LSN (\d+) to (\d+)\) was copied"),
           re.compile(r"[Tt]ransaction log of lsn \((\d+)\) to \((\d+)\) was copied"))
# "MySQL binlog position: filename 'mysql-bin.000001', position '697', GTID of the last change '0-1-2'"
BINLOG_LINE_RE = re.compile(r"MySQL binlog position: filename '([^']*)', position '?(\d+)'?"
                            r"(?:, GTID of the last change '([^']*)')?")
# prepare: "Last binlog file ./mysql-bin.000001, position 697" (mariabackup) or
# "Last MySQL binlog file position 697, file name ./mysql-bin.000001" (xtrabackup)
PREPARE_BINLOG_RES = (re.compile(r"Last binlog file '?([^',\s]+)'?, position (\d+)"),
                      re.compile(r"Last MySQL binlog file position (\d+), file name (\S+)"))
ERROR_RE = re.compile(r"\[ERROR\]|\bERROR\b|\bError\b|\berror:|Failed to|failed to|FATAL|"
                      r"unknown (?:option|variable)|[Cc]an't |[Cc]annot |[Cc]orrupt")
NOT_ERRORS = ("Error in my_thread_global_end",)
# Prefixes removed from error lines: "[00] 2026-11-22 15:16:19 " (mariabackup),
# "2026-11-22 15:16:26 0 [ERROR] " (InnoDB), "2024-03-01T10:00:00.000000-00:00 0 [ERROR]
# [MY-011825] [Xtrabackup] " (xtrabackup 8), "171116 12:00:00 " (innobackupex 2.x).
PREFIX_RE = re.compile(r"^(?:\[\d+\]\s+)?(?:FATAL ERROR:\s*)?"
                       r"(?:(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?"
                       r"|\d{6} +\d\d?:\d\d:\d\d)\s+)?(?:\d+\s+(?=\[))?(?:\[[\w-]+\]\s*)*")


@dataclass(frozen=True)
class Checkpoints:
    """The LSNs of a backup (``xtrabackup_checkpoints``)."""

    backup_type: str
    from_lsn: int
    to_lsn: int
    last_lsn: int
    values: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def incremental(self) -> bool:
        """True for an incremental backup (a delta on top of from_lsn)."""
        return self.backup_type == "incremental"

    @property
    def prepared(self) -> bool:
        """True once the backup was prepared (log applied)."""
        return self.backup_type in ("log-applied", "full-prepared")


@dataclass(frozen=True)
class BinlogInfo:
    """The binary log coordinates the backup is consistent with ('' gtid when none)."""

    file: str
    position: int
    gtid: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.position}" + (f" (GTID {self.gtid})" if self.gtid else "")


@dataclass(frozen=True)
class GaleraInfo:
    """A Galera node's position in the backup: cluster uuid and seqno (plus what follows)."""

    uuid: str
    seqno: int
    extra: str = ""


@dataclass(frozen=True)
class ToolReport:
    """What a tool's log says: success, the LSN range copied, binlog position, error lines."""

    completed_ok: bool
    lsn_from: int | None = None
    lsn_to: int | None = None
    binlog: BinlogInfo | None = None
    errors: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        """The tool's own error lines, joined ('' when there are none)."""
        return " / ".join(self.errors)


@dataclass(frozen=True)
class BackupInfo:
    """Everything the info files of a backup directory say."""

    checkpoints: Checkpoints | None
    binlog: BinlogInfo | None
    galera: GaleraInfo | None
    info: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------- parsers
def parse_key_values(text: str) -> dict[str, str]:
    """``key = value`` lines into a dict (other lines ignored)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            values[key.strip()] = value.strip()
    return values


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def parse_checkpoints(text: str) -> Checkpoints:
    """Parse ``xtrabackup_checkpoints``."""
    values = parse_key_values(text)
    return Checkpoints(backup_type=values.get("backup_type", ""),
                       from_lsn=_int(values.get("from_lsn")), to_lsn=_int(values.get("to_lsn")),
                       last_lsn=_int(values.get("last_lsn")), values=values)


def parse_binlog_info(text: str) -> BinlogInfo | None:
    """Parse ``xtrabackup_binlog_info``: ``file<TAB>position[<TAB>gtid]`` (None if empty).

    A MySQL GTID set that the tool wrapped over several lines (``uuid:1-5,``
    then ``uuid2:1-3``) is joined back into one set.
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[1].isdigit():
        return None
    gtid = parts[2].strip() if len(parts) > 2 else ""
    for more in lines[1:]:
        gtid += more
    gtid = re.sub(r",\s+", ",", gtid)
    return BinlogInfo(parts[0], int(parts[1]), gtid)


def parse_galera_info(text: str) -> GaleraInfo | None:
    """Parse ``xtrabackup_galera_info``: ``uuid:seqno [more]`` (None if empty)."""
    text = text.strip()
    if not text:
        return None
    first, _, extra = text.partition(" ")
    uuid, _, seqno = first.rpartition(":")
    if not uuid:
        return None
    try:
        number = int(seqno)
    except ValueError:
        return None
    return GaleraInfo(uuid, number, extra.strip())


def clean_line(line: str) -> str:
    """A log line without its thread number, timestamp and severity prefix."""
    return PREFIX_RE.sub("", line.strip()).strip()


def error_lines(text: str, limit: int = 3) -> tuple[str, ...]:
    """The tool's error lines (prefixes removed, duplicates dropped), at most limit."""
    found: list[str] = []
    for line in text.splitlines():
        if not ERROR_RE.search(line) or any(n in line for n in NOT_ERRORS):
            continue
        cleaned = clean_line(line)
        if cleaned and cleaned not in found:
            found.append(cleaned)
        if len(found) >= limit:
            break
    return tuple(found)


def parse_tool_log(text: str) -> ToolReport:
    """Read a backup tool's log: success line, LSN range, binlog position, errors."""
    lsn_from = lsn_to = None
    for regex in LSN_RES:
        match = regex.search(text)
        if match:
            lsn_from, lsn_to = int(match[1]), int(match[2])
            break
    binlog = None
    match = BINLOG_LINE_RE.search(text)
    if match:
        binlog = BinlogInfo(match[1], int(match[2]), match[3] or "")
    else:
        for index, regex in enumerate(PREPARE_BINLOG_RES):
            match = regex.search(text)
            if match:
                name, pos = (match[1], match[2]) if index == 0 else (match[2], match[1])
                binlog = BinlogInfo(os.path.basename(name), int(pos))
                break
    completed = bool(SUCCESS_RE.search(text))
    return ToolReport(completed_ok=completed, lsn_from=lsn_from, lsn_to=lsn_to, binlog=binlog,
                      errors=() if completed else error_lines(text))


def _read_first(directory: str, names: tuple[str, ...]) -> str | None:
    for name in names:
        path = os.path.join(directory, name)
        try:
            with open(path, errors="replace") as fh:
                return fh.read()
        except OSError:
            continue
    return None


def read_backup_info(directory: str) -> BackupInfo:
    """Read the info files of a backup directory (missing files give None fields)."""
    text = _read_first(directory, CHECKPOINTS_FILES)
    checkpoints = parse_checkpoints(text) if text is not None else None
    text = _read_first(directory, BINLOG_INFO_FILES)
    binlog = parse_binlog_info(text) if text is not None else None
    text = _read_first(directory, GALERA_INFO_FILES)
    galera = parse_galera_info(text) if text is not None else None
    text = _read_first(directory, INFO_FILES)
    info = parse_key_values(text) if text is not None else {}
    return BackupInfo(checkpoints, binlog, galera, info)


# ---------------------------------------------------------------- step results
@dataclass
class StepResult:
    """One run of a tool: command, exit status, time, log and what the log says."""

    step: str
    argv: list[str]
    returncode: int
    seconds: float
    log_path: str
    report: ToolReport
    extract_argv: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the tool exited 0 and said ``completed OK!``."""
        return self.returncode == 0 and self.report.completed_ok


@dataclass
class BackupResult:
    """A backup on disk: where it is, what it is based on, and its LSNs and binlog position."""

    name: str
    target_dir: str
    server_name: str
    tool: str
    step: StepResult
    info: BackupInfo
    incremental_base: "BackupResult | None" = None
    streamed: bool = False
    parallel: int | None = None

    @property
    def checkpoints(self) -> Checkpoints | None:
        """The backup's checkpoints (LSNs)."""
        return self.info.checkpoints

    @property
    def binlog(self) -> BinlogInfo | None:
        """Binlog file, position and GTID: from the info file, else from the tool's log."""
        return self.info.binlog or self.step.report.binlog

    @property
    def gtid(self) -> str:
        """The GTID position the backup is consistent with ('' without binlog/GTID)."""
        return self.binlog.gtid if self.binlog else ""

    @property
    def galera(self) -> GaleraInfo | None:
        """Galera position (backups taken with galera_info on a Galera node)."""
        return self.info.galera

    @property
    def seconds(self) -> float:
        """How long the backup (and extraction) took."""
        return self.step.seconds

    def chain(self) -> list["BackupResult"]:
        """This backup and its bases, full backup first."""
        out: list[BackupResult] = []
        node: BackupResult | None = self
        while node is not None:
            out.append(node)
            node = node.incremental_base
        return list(reversed(out))


@dataclass
class PrepareResult:
    """A prepared backup: the directory to restore from and one step per applied backup."""

    target_dir: str
    steps: list[StepResult]
    info: BackupInfo

    @property
    def seconds(self) -> float:
        """Total time of the prepare steps."""
        return sum(s.seconds for s in self.steps)

    @property
    def binlog(self) -> BinlogInfo | None:
        """Binlog position of the prepared backup (of the last incremental applied)."""
        return self.info.binlog


@dataclass
class RestoreResult:
    """A restored datadir: method, the tool step, whether the server was started."""

    server_name: str
    datadir: str
    method: str
    step: StepResult
    seconds: float
    started: bool
    chowned: int = 0
