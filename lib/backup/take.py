"""Taking a backup of a running server: full or incremental, optionally streamed and parallel."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence

from .execute import DEFAULT_TIMEOUT, RunAs, run_step
from .results import BackupResult, read_backup_info
from .storage import make_owned_dir
from .tool import BackupTool
from ..platform.logsetup import get_logger

if TYPE_CHECKING:
    from ..servers.server import Server


def take_backup(tool: BackupTool, server: Server, target_dir: str, run_as: RunAs,
                name: str | None = None, incremental_base: BackupResult | str | None = None,
                parallel: int | None = None, stream: bool = False, galera_info: bool = False,
                extra_args: Sequence[str] = (), log_path: str | None = None,
                timeout: float = DEFAULT_TIMEOUT) -> BackupResult:
    """Back up server into target_dir (a new directory) and read what the tool reported.

    incremental_base (a backup or its directory) makes it an incremental
    backup on top of that one.  stream pipes ``--stream`` output into the
    extractor, which unpacks it into target_dir.  The server is not checked
    first: a stopped server makes the tool fail with its own message
    (BackupToolError).
    """
    name = name or os.path.basename(target_dir)
    log_path = log_path or f"{target_dir}.backup.log"
    base_dir = incremental_base.target_dir if isinstance(incremental_base, BackupResult) \
        else incremental_base
    if stream:
        make_owned_dir(target_dir, run_as.user)
    command = tool.backup_command(server.paths.cnf_path, target_dir, server.paths.socket_file,
                                  incremental_basedir=base_dir, parallel=parallel, stream=stream,
                                  tmpdir=run_as.tmpdir, galera_info=galera_info, extra=extra_args)
    step = run_step("backup", command.argv, log_path, run_as, command.extract_argv,
                    f"{target_dir}.extract.log" if stream else None, timeout)
    info = read_backup_info(target_dir)
    result = BackupResult(name=name, target_dir=target_dir, server_name=server.name,
                          tool=tool.name, step=step, info=info,
                          incremental_base=incremental_base if isinstance(incremental_base,
                                                                          BackupResult) else None,
                          streamed=stream, parallel=parallel)
    cp = info.checkpoints
    get_logger().debug("%s: %s backup %r took %.0f ms (LSN %s..%s, binlog %s)",
                       server.name, tool.name, name, step.seconds * 1000,
                       cp.from_lsn if cp else "?", cp.to_lsn if cp else "?",
                       result.binlog or "none")
    return result
