"""kewpie 2012's ``test_executor.xtrabackup_manager``: the backup tool paths of the run.

The 2012 object held the xtrabackup and innobackupex paths and the workdir
(``xb_bin_path``, ``ib_bin_path``, ``workdir``); its ``backup_full`` only
recorded a server's datadir and the utility.  Same here; the helpers that
run the tools are :mod:`lib.kewpie2012.xtrabackup_methods`.
"""
from __future__ import annotations

from typing import Any


class xtrabackupManager:  # noqa: N801 - the 2012 name
    """Paths of xtrabackup/mariabackup and innobackupex for 2012 tests."""

    def __init__(self, server_manager: Any, system_manager: Any) -> None:
        self.server_manager = server_manager
        self.system_manager = system_manager
        self.code_manager = getattr(system_manager, "code_manager", None)
        self.logging = getattr(system_manager, "logging", None)
        self.xb_bin_path = system_manager.xtrabackup_path
        self.ib_bin_path = system_manager.innobackupex_path
        self.workdir = system_manager.workdir
        self.datadir: str | None = None
        self.approach: str | None = None

    def backup_full(self, utility: str, server_object: Any) -> "xtrabackupManager":
        """Record the server's datadir and the utility (as in 2012); self."""
        self.datadir = server_object.paths.datadir
        self.approach = utility
        return self
