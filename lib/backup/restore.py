"""Restoring a prepared backup into a server: stop, empty the datadir, copy/move back, start.

The harness empties the datadir itself (the tools refuse a non-empty one)
and recreates it owned by the server user.  The tool runs as the server
user too, so the restored files need no ``chown``; when it ran as someone
else, the datadir is handed to the server user afterwards.  The server then
starts through the normal :meth:`Server.start`.
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from .errors import RestoreError
from .execute import DEFAULT_TIMEOUT, RunAs, run_step
from .results import RestoreResult, read_backup_info
from .storage import chown_tree, empty_datadir, owner_ids
from .tool import BackupTool, check_method
from ..platform.logsetup import get_logger
from ..servers.server import write_files

if TYPE_CHECKING:
    from ..servers.server import Server


def check_prepared(target_dir: str) -> None:
    """RestoreError unless target_dir is a prepared backup (when it says what it is)."""
    if not os.path.isdir(target_dir):
        raise RestoreError(f"backup directory {target_dir} does not exist")
    checkpoints = read_backup_info(target_dir).checkpoints
    if checkpoints is not None and not checkpoints.prepared:
        raise RestoreError(f"backup {target_dir} is not prepared (backup_type = "
                           f"{checkpoints.backup_type}); prepare it before restoring")


def restore_backup(tool: BackupTool, target_dir: str, server: Server, run_as: RunAs,
                   method: str = "copy-back", start: bool = True, stop_server: bool = True,
                   parallel: int | None = None, log_path: str | None = None,
                   drop_server_uuid: bool = False,
                   timeout: float = DEFAULT_TIMEOUT) -> RestoreResult:
    """Restore the prepared backup in target_dir into server's datadir.

    A running server is stopped first (with stop_server; else RestoreError).
    move-back consumes the backup directory.  drop_server_uuid removes a
    MySQL ``auto.cnf`` so a server restored from another one's backup gets
    its own server_uuid.  With start, the server is started and must answer
    SQL (ServerStartError otherwise, with its error log).
    """
    check_method(method)
    check_prepared(target_dir)
    began = time.monotonic()
    if server.is_alive():
        if not stop_server:
            raise RestoreError(f"server {server.name} is running; stop it before restoring "
                               f"into {server.paths.datadir}")
        server.stop()
    server_user = server.settings.user
    if not os.path.exists(server.paths.cnf_path):
        write_files(server)
    empty_datadir(server.paths.datadir, server_user)
    log_path = log_path or f"{target_dir}.{method}-{server.name}.log"
    argv = tool.restore_argv(server.paths.cnf_path, target_dir, server.paths.datadir, method,
                             parallel)
    step = run_step(method, argv, log_path, run_as, timeout=timeout)
    if drop_server_uuid and os.path.exists(os.path.join(server.paths.datadir, "auto.cnf")):
        os.unlink(os.path.join(server.paths.datadir, "auto.cnf"))
    chowned = 0
    if run_as.user != server_user:
        chowned = chown_tree(server.paths.datadir, *owner_ids(server_user))
    if start:
        server.start()
    seconds = time.monotonic() - began
    get_logger().debug("%s: %s of %s took %.0f ms (tool %.0f ms)%s", server.name, method,
                       target_dir, seconds * 1000, step.seconds * 1000,
                       f"; {chowned} entries chowned to {server_user}" if chowned else "")
    return RestoreResult(server_name=server.name, datadir=server.paths.datadir, method=method,
                         step=step, seconds=seconds, started=start, chowned=chowned)
