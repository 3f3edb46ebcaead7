"""MariaDB's ``mariabackup`` (``mariadb-backup``): the tool installed here.

Differences from Percona xtrabackup: streams ``--stream=mbstream`` into
``mbstream -x``; since MariaDB 10.2 ``--prepare`` needs no
``--apply-log-only`` between incrementals (10.11 does not even accept it),
so each incremental is simply applied in order onto the prepared base.
"""
from __future__ import annotations

from .tool import BackupTool
from .xtrabackup import InnoBackupEx


class MariaBackup(BackupTool):
    """mariabackup / mariadb-backup."""

    name = "mariabackup"
    stream_format = "mbstream"
    apply_log_only_flag = ""
    extractor_names = ("mbstream",)


class MariaBackupInnobackupex(InnoBackupEx):
    """mariabackup in its innobackupex compatibility mode (``mariabackup --innobackupex``).

    Used by the kewpie 2012 helpers when no ``--innobackupex-path`` is given.
    ``--innobackupex`` must be the very first argument, then
    ``--defaults-file``/``--no-defaults``; there is no ``--ibbackup`` and no
    ``--redo-only``.
    """

    name = "mariabackup --innobackupex"
    stream_format = "mbstream"
    apply_log_only_flag = ""
    extractor_names = ("mbstream",)

    def __init__(self, path: str, extractor: str | None = None) -> None:
        super().__init__(path, extractor, ibbackup=None)

    def head(self, defaults_file: str | None) -> list[str]:
        """mariabackup --innobackupex, then --defaults-file=X or --no-defaults."""
        first = f"--defaults-file={defaults_file}" if defaults_file else "--no-defaults"
        return [self.path, "--innobackupex", first]
