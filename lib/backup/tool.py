"""The backup tool interface: command lines for backup, prepare, restore and stream extraction.

A :class:`BackupTool` only builds argv lists; running them is
:mod:`lib.backup.execute`'s job.  Every command line starts with the tool,
then ``--defaults-file=<server's my.cnf>`` (backup, copy-back, move-back: the
tool sees the server's datadir, socket and InnoDB settings) or
``--no-defaults`` (prepare: the backup carries its own ``backup-my.cnf``), so
nothing from ``/etc/mysql`` applies.

Implementations: :class:`~lib.backup.mariabackup.MariaBackup` and
:class:`~lib.backup.xtrabackup.XtraBackup` /
:class:`~lib.backup.xtrabackup.InnoBackupEx`; :func:`lib.backup.choose.select_tool` picks
one.  This module imports none of them (they import it).
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Sequence

from ..servers.codetree import CodeTree
from ..errors import CodeTreeError

RESTORE_METHODS = ("copy-back", "move-back")


@dataclass(frozen=True)
class BackupCommand:
    """A backup command: the tool's argv, and the extractor's argv when streaming."""

    argv: list[str]
    extract_argv: list[str] | None = None

    @property
    def streamed(self) -> bool:
        """True when the tool's stdout is piped into the extractor."""
        return self.extract_argv is not None


class BackupTool:
    """Command-line construction shared by the xtrabackup family (override what differs)."""

    name = "backup tool"
    stream_format = "xbstream"
    # Non-last incrementals (and the base, when incrementals follow) are
    # prepared with this flag so uncommitted transactions are not rolled back
    # before the next delta is applied.  '' when the tool needs no flag.
    apply_log_only_flag = "--apply-log-only"

    def __init__(self, path: str, extractor: str | None = None) -> None:
        self.path = path
        self.extractor = extractor

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"

    # ------------------------------------------------------------ pieces
    def head(self, defaults_file: str | None) -> list[str]:
        """The tool and its first option: --defaults-file=X or --no-defaults."""
        first = f"--defaults-file={defaults_file}" if defaults_file else "--no-defaults"
        return [self.path, first]

    @staticmethod
    def connection_args(socket: str | None, user: str = "root", host: str | None = None,
                        port: int | None = None) -> list[str]:
        """How the tool connects to the server (socket preferred)."""
        args = [f"--user={user}"]
        if socket:
            args.append(f"--socket={socket}")
        if host:
            args.append(f"--host={host}")
        if port:
            args.append(f"--port={port}")
        return args

    # ------------------------------------------------------------ backup
    def backup_command(self, defaults_file: str, target_dir: str, socket: str | None,
                       incremental_basedir: str | None = None, parallel: int | None = None,
                       stream: bool = False, tmpdir: str | None = None,
                       galera_info: bool = False, user: str = "root",
                       extra: Sequence[str] = ()) -> BackupCommand:
        """A full (or, with incremental_basedir, incremental) backup into target_dir.

        With stream, the tool writes ``--stream=<format>`` to stdout and the
        extractor unpacks it into target_dir (which must exist and be empty).
        """
        argv = self.head(defaults_file) + ["--backup"]
        if not stream:
            argv.append(f"--target-dir={target_dir}")
        argv += self.connection_args(socket, user)
        if incremental_basedir:
            argv.append(f"--incremental-basedir={incremental_basedir}")
        argv += self.backup_options(parallel, galera_info, tmpdir)
        if stream:
            argv += self.stream_args(tmpdir)
        argv += list(extra)
        return BackupCommand(argv, self.extract_argv(target_dir, parallel) if stream else None)

    @staticmethod
    def backup_options(parallel: int | None, galera_info: bool, tmpdir: str | None) -> list[str]:
        """``--parallel``, ``--galera-info`` and ``--tmpdir`` of a backup, as the
        whole family spells them (none when not asked for)."""
        argv = [f"--parallel={parallel}"] if parallel else []
        if galera_info:
            argv.append("--galera-info")
        if tmpdir:
            argv.append(f"--tmpdir={tmpdir}")
        return argv

    def stream_args(self, tmpdir: str | None) -> list[str]:
        """Options that make the tool stream to stdout."""
        return [f"--stream={self.stream_format}"]

    def extract_argv(self, target_dir: str, parallel: int | None = None) -> list[str]:
        """The extractor reading the stream on stdin into target_dir."""
        if not self.extractor:
            raise CodeTreeError(f"no {self.stream_format} extractor found next to {self.path} "
                                f"or on PATH; streaming backups need it")
        argv = [self.extractor, "-x", "-C", target_dir]
        if parallel:
            argv.append(f"--parallel={parallel}")
        return argv

    # ------------------------------------------------------------ prepare
    def prepare_argv(self, target_dir: str, incremental_dir: str | None = None,
                     apply_log_only: bool = False, use_memory: str | None = None,
                     tmpdir: str | None = None, extra: Sequence[str] = ()) -> list[str]:
        """Prepare target_dir, or apply incremental_dir onto it."""
        argv = self.head(None) + ["--prepare", f"--target-dir={target_dir}"]
        if incremental_dir:
            argv.append(f"--incremental-dir={incremental_dir}")
        if apply_log_only and self.apply_log_only_flag:
            argv.append(self.apply_log_only_flag)
        if use_memory:
            argv.append(f"--use-memory={use_memory}")
        if tmpdir:
            argv.append(f"--tmpdir={tmpdir}")
        return argv + list(extra)

    def prepare_plan(self, base_dir: str, incremental_dirs: Sequence[str] = (),
                     use_memory: str | None = None, tmpdir: str | None = None) -> list[list[str]]:
        """Every prepare command, in order: the base, then each incremental onto the base.

        With a tool that has an apply-log-only flag, every step except the
        last gets it.
        """
        steps: list[tuple[str | None, bool]] = [(None, bool(incremental_dirs))]
        for index, inc in enumerate(incremental_dirs):
            steps.append((inc, index < len(incremental_dirs) - 1))
        return [self.prepare_argv(base_dir, inc, only, use_memory, tmpdir) for inc, only in steps]

    # ------------------------------------------------------------ restore
    def restore_argv(self, defaults_file: str, target_dir: str, datadir: str,
                     method: str = "copy-back", parallel: int | None = None,
                     extra: Sequence[str] = ()) -> list[str]:
        """copy-back (or move-back) target_dir into datadir (which must be empty)."""
        check_method(method)
        argv = self.head(defaults_file) + [f"--{method}", f"--target-dir={target_dir}",
                                           f"--datadir={datadir}"]
        if parallel:
            argv.append(f"--parallel={parallel}")
        return argv + list(extra)


def check_method(method: str) -> None:
    """ValueError unless method is copy-back or move-back."""
    if method not in RESTORE_METHODS:
        raise ValueError(f"restore method {method!r}: use one of {', '.join(RESTORE_METHODS)}")


def find_extractor(tool_path: str, names: Sequence[str], tree: CodeTree | None = None) -> str | None:
    """The stream extractor: next to the tool, then the code tree's, then PATH."""
    here = os.path.dirname(tool_path)
    for name in names:
        candidate = os.path.join(here, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    if tree is not None:
        found = tree.tools.get("mbstream")
        if found and os.path.basename(found) in names:
            return found
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def is_mariabackup(path: str) -> bool:
    """True when path names MariaDB's tool (mariabackup / mariadb-backup)."""
    base = os.path.basename(path)
    return base.startswith(("mariabackup", "mariadb-backup"))
