"""Percona XtraBackup: ``xtrabackup`` and the older ``innobackupex`` wrapper.

Not installable on this machine; these classes only build command lines
(covered by unit tests) and run wherever the binaries exist
(``--xtrabackup-path`` / ``--innobackupex-path``).

- ``xtrabackup``: ``--backup --target-dir``, ``--incremental-basedir``,
  ``--stream=xbstream`` into ``xbstream -x -C``, ``--prepare
  [--apply-log-only] [--incremental-dir]``, ``--copy-back``/``--move-back``.
- ``innobackupex``: the directory is a positional argument, ``--no-timestamp``
  keeps it as given, ``--incremental --incremental-basedir``, ``--apply-log
  [--redo-only] DIR [--incremental-dir=INC]``, ``--copy-back DIR`` (the datadir
  comes from ``--defaults-file``), and ``--ibbackup=<xtrabackup>`` when given.
"""
from __future__ import annotations

from typing import Sequence

from .tool import BackupCommand, BackupTool, check_method


class XtraBackup(BackupTool):
    """Percona xtrabackup (2.x and 8.x)."""

    name = "xtrabackup"
    stream_format = "xbstream"
    apply_log_only_flag = "--apply-log-only"
    extractor_names = ("xbstream",)

    def stream_args(self, tmpdir: str | None) -> list[str]:
        """--stream=xbstream; xtrabackup keeps its temporary files in --target-dir."""
        args = [f"--stream={self.stream_format}"]
        if tmpdir:
            args.append(f"--target-dir={tmpdir}")
        return args


class InnoBackupEx(BackupTool):
    """Percona's innobackupex wrapper (positional backup directory)."""

    name = "innobackupex"
    stream_format = "xbstream"
    apply_log_only_flag = "--redo-only"
    extractor_names = ("xbstream",)

    def __init__(self, path: str, extractor: str | None = None, ibbackup: str | None = None) -> None:
        super().__init__(path, extractor)
        self.ibbackup = ibbackup

    def ibbackup_args(self) -> list[str]:
        """--ibbackup=<xtrabackup binary> when one was given."""
        return [f"--ibbackup={self.ibbackup}"] if self.ibbackup else []

    def backup_command(self, defaults_file: str, target_dir: str, socket: str | None,
                       incremental_basedir: str | None = None, parallel: int | None = None,
                       stream: bool = False, tmpdir: str | None = None,
                       galera_info: bool = False, user: str = "root",
                       extra: Sequence[str] = ()) -> BackupCommand:
        """innobackupex [options] DIR; streaming: DIR is a scratch directory."""
        argv = self.head(defaults_file) + self.connection_args(socket, user)
        argv += ["--no-timestamp", *self.ibbackup_args()]
        if incremental_basedir:
            argv += ["--incremental", f"--incremental-basedir={incremental_basedir}"]
        argv += self.backup_options(parallel, galera_info, tmpdir)
        if stream:
            argv.append(f"--stream={self.stream_format}")
        argv += list(extra)
        argv.append((tmpdir or target_dir) if stream else target_dir)
        return BackupCommand(argv, self.extract_argv(target_dir, parallel) if stream else None)

    def prepare_argv(self, target_dir: str, incremental_dir: str | None = None,
                     apply_log_only: bool = False, use_memory: str | None = None,
                     tmpdir: str | None = None, extra: Sequence[str] = ()) -> list[str]:
        """innobackupex --apply-log [--redo-only] DIR [--incremental-dir=INC]."""
        argv = self.head(None) + ["--apply-log"]
        if apply_log_only and self.apply_log_only_flag:
            argv.append(self.apply_log_only_flag)
        if use_memory:
            argv.append(f"--use-memory={use_memory}")
        argv += self.ibbackup_args()
        if tmpdir:
            argv.append(f"--tmpdir={tmpdir}")
        argv += list(extra)
        argv.append(target_dir)
        if incremental_dir:
            argv.append(f"--incremental-dir={incremental_dir}")
        return argv

    def restore_argv(self, defaults_file: str, target_dir: str, datadir: str,
                     method: str = "copy-back", parallel: int | None = None,
                     extra: Sequence[str] = ()) -> list[str]:
        """innobackupex --defaults-file=CNF --copy-back DIR (datadir from CNF)."""
        check_method(method)
        del datadir  # innobackupex takes the datadir from the defaults file
        argv = self.head(defaults_file) + [f"--{method}", *self.ibbackup_args()]
        if parallel:
            argv.append(f"--parallel={parallel}")
        return argv + list(extra) + [target_dir]
