"""The backup layer as tests use it: one object per server and test, holding its backups.

::

    backups = ServerBackups(server, label="basic_test")      # or self.backups(server)
    full = backups.backup("full")                            # BackupResult
    inc1 = backups.backup("inc1", incremental_base=full)
    backups.prepare(inc1)                                    # full, then inc1 applied
    backups.restore(full, server)                            # stop, empty, copy-back, start

Backups live in ``<bot dir>/backups/<label>/`` (see :mod:`lib.backup.storage`);
the tools run as the server user with their scratch space in ``tmp/`` there.
"""
from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any, Sequence

from .choose import select_tool
from .execute import DEFAULT_TIMEOUT, RunAs
from .prepare import prepare_backup
from .restore import restore_backup
from .results import BackupResult, PrepareResult, RestoreResult
from .storage import backups_root, make_owned_dir, safe_label, unique_dir
from .take import take_backup
from .tool import BackupTool

if TYPE_CHECKING:
    from ..servers.server import Server


class ServerBackups:
    """Backups of one server: take, prepare and restore them (into it or another server)."""

    def __init__(self, server: Server, tool: BackupTool | None = None, label: str = "backups",
                 root: str | None = None, xtrabackup_path: str = "",
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.server = server
        self.tool = tool or select_tool(server.tree, xtrabackup_path)
        self.user: str | None = server.settings.user
        self.timeout = timeout
        top = backups_root(server)
        make_owned_dir(top, self.user, 0o755)
        self.root = make_owned_dir(root or os.path.join(top, safe_label(label)), self.user, 0o755)
        self.tmpdir = make_owned_dir(os.path.join(self.root, "tmp"), self.user)
        self.taken: list[BackupResult] = []

    def run_as(self, server: Server | None = None) -> RunAs:
        """Run the tools as (server's) user, in its tagged environment, inside our root."""
        server = server or self.server
        return RunAs(user=server.settings.user, env=server.settings.env, cwd=self.root,
                     tmpdir=self.tmpdir)

    def new_dir(self, name: str) -> str:
        """A fresh backup directory path under the root (name, name-2, ...)."""
        return unique_dir(self.root, name)

    # ------------------------------------------------------------ steps
    def backup(self, name: str = "full", incremental_base: BackupResult | str | None = None,
               parallel: int | None = None, stream: bool = False, galera_info: bool = False,
               extra_args: Sequence[str] = (), server: Server | None = None) -> BackupResult:
        """Back up the server (or another one) into a new directory called name."""
        server = server or self.server
        result = take_backup(self.tool, server, self.new_dir(name), self.run_as(server),
                             name=name, incremental_base=incremental_base, parallel=parallel,
                             stream=stream, galera_info=galera_info, extra_args=extra_args,
                             timeout=self.timeout)
        self.taken.append(result)
        return result

    def incremental(self, base: BackupResult, name: str | None = None,
                    **kwargs: Any) -> BackupResult:
        """An incremental backup on top of base (a full or another incremental)."""
        count = len(base.chain())
        return self.backup(name or f"inc{count}", incremental_base=base, **kwargs)

    def prepare(self, backup: BackupResult | str,
                incrementals: Sequence[BackupResult | str] | None = None,
                use_memory: str | None = None) -> PrepareResult:
        """Prepare a backup; an incremental given alone brings its whole chain.

        ``prepare(inc2)`` prepares the full backup inc2 is based on, then
        applies inc1 and inc2.  The prepared data is in the full backup's
        directory (the result's target_dir), which is what to restore.
        """
        if incrementals is None and isinstance(backup, BackupResult):
            chain = backup.chain()
            backup, incrementals = chain[0], chain[1:]
        return prepare_backup(self.tool, backup, self.run_as(), incrementals or (),
                              use_memory=use_memory, timeout=self.timeout)

    def restore(self, backup: BackupResult | PrepareResult | str, server: Server | None = None,
                method: str = "copy-back", start: bool = True, parallel: int | None = None,
                stop_server: bool = True) -> RestoreResult:
        """Restore a prepared backup into server (default: ours): stop, empty, copy back, start.

        For an incremental, restore its full backup's directory (where prepare
        applied it), or pass the PrepareResult.
        """
        server = server or self.server
        origin = self.server.name
        if isinstance(backup, BackupResult):
            target, origin = backup.chain()[0].target_dir, backup.server_name
        elif isinstance(backup, PrepareResult):
            target = backup.target_dir
        else:
            target = backup
        return restore_backup(self.tool, target, server, self.run_as(server), method=method,
                              start=start, stop_server=stop_server, parallel=parallel,
                              drop_server_uuid=origin != server.name, timeout=self.timeout)

    def remove(self) -> None:
        """Delete every backup of this session (the whole root directory)."""
        shutil.rmtree(self.root, ignore_errors=True)
        self.taken = []
