"""kewpie 2012 backup helpers (``innobackupex_backup/prepare/restore``), for porting old tests.

Same signatures and ``(retcode, output)`` returns as kewpie's
``xtrabackup_methods``; the command lines come from :mod:`lib.backup`, so they
start with ``--defaults-file``/``--no-defaults`` and point the tool's scratch
space into the workdir.  With an ``innobackupex_path`` (``--innobackupex-path``)
that script runs, with ``--ibbackup=<xtrabackup_path>`` when one is given;
without one, the code tree's mariabackup runs in its innobackupex mode
(``mariabackup --innobackupex``).

Like the old helpers, the commands run through the shell as the harness's
user.  When that is root and the servers run as ``mysql``, the restored
datadir would belong to root: :func:`innobackupex_restore` gives it (and
everything in it) to the owner of the datadir's parent, the server's vardir.
"""
from __future__ import annotations

import os
import shlex
import shutil
from typing import Any

from ..backup.mariabackup import MariaBackupInnobackupex
from ..backup.storage import chown_tree
from ..backup.tool import find_extractor, is_mariabackup
from ..backup.xtrabackup import InnoBackupEx
from ..errors import CodeTreeError
from .mysql_methods import execute_cmd

MARIABACKUP_NAMES = ("mariadb-backup", "mariabackup")


def innobackupex_tool(innobackupex_path: str | None, xtrabackup_path: str | None = None,
                      server: Any = None) -> InnoBackupEx:
    """The innobackupex to run: the given script, else mariabackup in innobackupex mode."""
    if innobackupex_path:
        return InnoBackupEx(innobackupex_path, find_extractor(innobackupex_path, ("xbstream",)),
                            ibbackup=xtrabackup_path or None)
    candidates = []
    if xtrabackup_path and is_mariabackup(xtrabackup_path):
        candidates.append(xtrabackup_path)
    tree = getattr(server, "tree", None)
    if tree is not None and tree.tools.get("mariabackup"):
        candidates.append(tree.tools["mariabackup"])
    candidates += [p for p in (shutil.which(n) for n in MARIABACKUP_NAMES) if p]
    if not candidates:
        raise CodeTreeError("no innobackupex: pass --innobackupex-path, or install mariadb-backup "
                            "(used in its --innobackupex mode)")
    path = candidates[0]
    return MariaBackupInnobackupex(path, find_extractor(path, ("mbstream",), tree))


def _extra(extra_opts: str | None) -> list[str]:
    return shlex.split(extra_opts) if extra_opts else []


def _run(argv: list[str], output_path: str, cwd: str) -> tuple[int, str]:
    os.makedirs(cwd, exist_ok=True)
    retcode, output = execute_cmd(shlex.join(argv), output_path, cwd, True)
    return retcode, output or ""


def innobackupex_backup(innobackupex_path: str | None, xtrabackup_path: str | None,
                        output_path: str, server: Any, backup_path: str,
                        extra_opts: str | None = None) -> tuple[int, str]:
    """Back up server into backup_path (``--no-timestamp``); ``(retcode, output)``."""
    tool = innobackupex_tool(innobackupex_path, xtrabackup_path, server)
    command = tool.backup_command(server.paths.cnf_path, backup_path, server.paths.socket_file,
                                  extra=_extra(extra_opts))
    return _run(command.argv, output_path, os.path.dirname(os.path.abspath(backup_path)))


def innobackupex_prepare(innobackupex_path: str | None, xtrabackup_path: str | None,
                         output_path: str, backup_path: str, use_mem: str = "500M",
                         extra_opts: str | None = None) -> tuple[int, str]:
    """``--apply-log`` on backup_path; ``(retcode, output)``."""
    tool = innobackupex_tool(innobackupex_path, xtrabackup_path)
    parent = os.path.dirname(os.path.abspath(backup_path))
    argv = tool.prepare_argv(backup_path, use_memory=use_mem, tmpdir=parent,
                             extra=_extra(extra_opts))
    return _run(argv, output_path, parent)


def datadir_from_cnf(cnf_file: str) -> str | None:
    """The ``datadir`` of the ``[mysqld]`` section of an option file."""
    section = ""
    try:
        with open(cnf_file, errors="replace") as fh:
            for raw in fh:
                line = raw.strip()
                if line.startswith("[") and line.endswith("]"):
                    section = line[1:-1].strip()
                elif section == "mysqld" and "=" in line:
                    key, _, value = line.partition("=")
                    if key.strip().replace("_", "-") == "datadir":
                        return value.strip().strip('"')
    except OSError:
        return None
    return None


def innobackupex_restore(innobackupex_path: str | None, xtrabackup_path: str | None,
                         output_path: str, backup_path: str, cnf_file: str,
                         use_mem: str = "500M", extra_opts: str | None = None) -> tuple[int, str]:
    """``--copy-back`` backup_path into cnf_file's datadir; ``(retcode, output)``.

    The datadir must exist and be empty (the test stops the server and
    empties it, as in 2012).  On success the restored files are given to the
    owner of the datadir's parent directory.
    """
    del use_mem  # kept for the 2012 signature
    tool = innobackupex_tool(innobackupex_path, xtrabackup_path)
    datadir = datadir_from_cnf(cnf_file) or ""
    argv = tool.restore_argv(cnf_file, backup_path, datadir, "copy-back", extra=_extra(extra_opts))
    retcode, output = _run(argv, output_path, os.path.dirname(os.path.abspath(backup_path)))
    if retcode == 0 and datadir and os.path.isdir(datadir):
        st = os.stat(os.path.dirname(os.path.abspath(datadir)))
        chown_tree(datadir, st.st_uid, st.st_gid)
    return retcode, output
