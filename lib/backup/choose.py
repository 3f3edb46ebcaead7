"""Which backup tool runs for a code tree: ``--xtrabackup-path``, mariabackup or xtrabackup.

Kept apart from :mod:`lib.backup.tool` (the interface the implementations
import), so that the interface never imports its implementations.
"""
from __future__ import annotations

import os

from .mariabackup import MariaBackup
from .tool import BackupTool, find_extractor, is_mariabackup
from .xtrabackup import XtraBackup
from ..servers.codetree import CodeTree
from ..errors import CodeTreeError


def select_tool(tree: CodeTree, xtrabackup_path: str = "") -> BackupTool:
    """The backup tool for a code tree.

    ``--xtrabackup-path`` wins (a mariabackup binary given there is treated as
    mariabackup); else the tree's mariadb-backup/mariabackup; else its
    xtrabackup (both found in the tree or on PATH).  CodeTreeError names what
    was searched when there is none.
    """
    if xtrabackup_path:
        if not (os.path.isfile(xtrabackup_path) and os.access(xtrabackup_path, os.X_OK)):
            raise CodeTreeError(f"--xtrabackup-path {xtrabackup_path}: no such executable")
        if is_mariabackup(xtrabackup_path):
            return MariaBackup(xtrabackup_path, find_extractor(xtrabackup_path,
                                                               MariaBackup.extractor_names, tree))
        return XtraBackup(xtrabackup_path, find_extractor(xtrabackup_path,
                                                          XtraBackup.extractor_names))
    if tree.tools.get("mariabackup"):
        path = tree.tools["mariabackup"]
        return MariaBackup(path, find_extractor(path, MariaBackup.extractor_names, tree))
    if tree.tools.get("xtrabackup"):
        path = tree.tools["xtrabackup"]
        return XtraBackup(path, find_extractor(path, XtraBackup.extractor_names))
    searched = tree.searched.get("mariabackup", []) + tree.searched.get("xtrabackup", [])
    raise CodeTreeError(f"no backup tool (mariadb-backup, mariabackup or xtrabackup) for basedir "
                        f"{tree.basedir}; pass --xtrabackup-path"
                        + (f" (searched: {', '.join(searched[:12])}...)" if searched else ""))
