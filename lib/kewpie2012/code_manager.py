"""kewpie 2012's ``system_manager.code_manager`` and its ``test_tree``, over a CodeTree.

Old ``skip_checks(system_manager)`` functions read
``system_manager.code_manager.test_tree.innodb_version``, ``xtradb_version``,
``server_version``, ``type`` and ``system_manager.code_manager.test_type``.
They are derived from the code tree without starting a server:
``innodb_version`` is the server's version number (MariaDB's InnoDB is the
server's own; 10.10+ even dropped ``@@innodb_version``), and
``xtradb_version`` is None except on a Percona Server tree (XtraDB, reported
as the server version).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..servers.codetree import CodeTree


class TestTree:
    """kewpie 2012's ``code_manager.test_tree``: one code tree's identity and tools."""

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, code_tree: CodeTree | None, test_type: str) -> None:
        self.code_tree = code_tree
        self.type = test_type
        self.basedir = getattr(code_tree, "basedir", "") or ""
        version = getattr(code_tree, "version", None)
        self.server_version = f"{version.version}{version.suffix}" if version else ""
        self.version = self.server_version
        flavor = version.flavor if version else ""
        self.flavor = flavor
        self.innodb_version: str | None = version.version if version else None
        self.xtradb_version: str | None = self.server_version if flavor == "percona" else None
        tools = getattr(code_tree, "tools", {}) or {}
        self.mysql_server = tools.get("server", "")
        self.mysqldump = tools.get("dump", "")
        self.mysqladmin = tools.get("admin", "")
        self.mysql_client = tools.get("client", "")
        self.mysqlimport = self._beside("mysqlimport", "mariadb-import")
        self.mysqlslap = self._beside("mysqlslap", "mariadb-slap")
        self.xtrabackup = tools.get("mariabackup") or tools.get("xtrabackup") or ""

    def _beside(self, *names: str) -> str:
        """A client tool next to the client binary, or ''."""
        here = os.path.dirname(self.mysql_client) if self.mysql_client else ""
        for name in names:
            path = os.path.join(here, name)
            if here and os.access(path, os.X_OK):
                return path
        return ""


class CodeManager:
    """kewpie 2012's ``system_manager.code_manager``: the run's code tree(s) by type."""

    def __init__(self, code_tree: CodeTree | None, test_type: str) -> None:
        self.test_type = test_type
        self.test_tree = TestTree(code_tree, test_type)
        self.code_trees = {test_type: [self.test_tree]}
