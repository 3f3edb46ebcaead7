"""Preparing a backup: apply its redo log, then each incremental in the order taken."""
from __future__ import annotations

import os
from typing import Sequence

from .errors import BackupInfoError
from .execute import DEFAULT_TIMEOUT, RunAs, run_step
from .results import BackupResult, PrepareResult, StepResult, read_backup_info
from .tool import BackupTool
from ..platform.logsetup import get_logger


def backup_dir(backup: BackupResult | str) -> str:
    """The directory of a backup given as a result or a path."""
    return backup.target_dir if isinstance(backup, BackupResult) else backup


def check_chain(base_dir: str, incremental_dirs: Sequence[str]) -> None:
    """BackupInfoError unless each incremental starts where the backup before it ends.

    Checked only when every directory has its checkpoints file (a backup
    without one is left to the tool, which says what is wrong).
    """
    infos = [read_backup_info(d).checkpoints for d in [base_dir, *incremental_dirs]]
    if any(cp is None for cp in infos):
        return
    for index, inc_dir in enumerate(incremental_dirs, start=1):
        previous, current = infos[index - 1], infos[index]
        assert previous is not None and current is not None
        before = base_dir if index == 1 else incremental_dirs[index - 2]
        if not current.incremental:
            raise BackupInfoError(f"{inc_dir} is not an incremental backup "
                                  f"(backup_type = {current.backup_type})")
        if current.last_lsn < previous.last_lsn:
            raise BackupInfoError(
                f"incremental {inc_dir} (last LSN {current.last_lsn}) was taken before {before} "
                f"(last LSN {previous.last_lsn}): apply incrementals in the order they were taken")
        if current.from_lsn != previous.to_lsn:
            raise BackupInfoError(
                f"incremental {inc_dir} starts at LSN {current.from_lsn} but {before} ends at "
                f"LSN {previous.to_lsn}: apply incrementals in the order they were taken")


def prepare_backup(tool: BackupTool, base: BackupResult | str, run_as: RunAs,
                   incrementals: Sequence[BackupResult | str] = (),
                   use_memory: str | None = None, log_dir: str | None = None,
                   timeout: float = DEFAULT_TIMEOUT) -> PrepareResult:
    """Prepare base in place, then apply incrementals onto it in order.

    Each step logs to ``<backup dir>.prepare.log``.  The tool's failure
    (e.g. a damaged backup) raises BackupToolError with its message.
    """
    base_dir = backup_dir(base)
    inc_dirs = [backup_dir(i) for i in incrementals]
    check_chain(base_dir, inc_dirs)
    plan = tool.prepare_plan(base_dir, inc_dirs, use_memory=use_memory, tmpdir=run_as.tmpdir)
    steps: list[StepResult] = []
    for argv, applied in zip(plan, [base_dir, *inc_dirs]):
        where = log_dir or os.path.dirname(applied)
        log_path = os.path.join(where, f"{os.path.basename(applied)}.prepare.log")
        steps.append(run_step("prepare", argv, log_path, run_as, timeout=timeout))
    result = PrepareResult(target_dir=base_dir, steps=steps, info=read_backup_info(base_dir))
    get_logger().debug("prepared %s (%d step(s)) in %.0f ms; binlog %s", base_dir, len(steps),
                       result.seconds * 1000, result.binlog or "none")
    return result
