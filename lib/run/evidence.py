"""Keep what a failed test leaves behind, under ``workdir/failed/<suite.test>/``.

For each server: error log, option file, stdout log, SST logs and (for the
first ``--max-save-datadir`` failures) the datadir; plus the failure text, the
harness log so far and the tool logs of the bot.  A core file in a datadir is
turned into ``backtrace.txt`` with gdb when gdb is installed
(:mod:`lib.checks.backtrace`), and its top frames are returned for the failure
report.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass

from ..checks.backtrace import backtrace, find_core
from ..platform.logsetup import get_logger
from ..servers.server import Server
from ..platform.tools import run_tool


@dataclass
class Saved:
    """Where a failure's evidence went, and the backtrace summary if a core was found."""

    path: str
    backtrace: str = ""


class EvidenceKeeper:
    """Saves evidence of failed tests (one instance per bot)."""

    def __init__(self, root: str, max_datadirs: int, harness_log: str | None) -> None:
        self.root = root
        self.max_datadirs = max_datadirs
        self.harness_log = harness_log
        self.datadirs_saved = 0
        self.log = get_logger()

    def _target(self, name: str) -> str:
        os.makedirs(self.root, mode=0o755, exist_ok=True)
        name = re.sub(r"[^\w.+-]+", "-", name).strip("-")  # suite.test 'row' -> suite.test-row
        path = os.path.join(self.root, name)
        n = 2
        while os.path.exists(path):
            path = os.path.join(self.root, f"{name}-{n}")
            n += 1
        os.makedirs(path, mode=0o755)
        return path

    def save(self, name: str, message: str, servers: list[Server], tool_logdir: str | None) -> Saved:
        """Copy the evidence of one failed attempt; never raises for missing files."""
        target = self._target(name)
        saved = Saved(target)
        with open(os.path.join(target, "failure.txt"), "w") as fh:
            fh.write(message + "\n")
        if self.harness_log and os.path.exists(self.harness_log):
            _copy(self.harness_log, os.path.join(target, "kewpie.log"))
        if tool_logdir and os.path.isdir(tool_logdir) and os.listdir(tool_logdir):
            _copytree(tool_logdir, os.path.join(target, "tool_logs"))
        keep_data = self.datadirs_saved < self.max_datadirs
        for server in servers:
            dest = os.path.join(target, server.name)
            os.makedirs(dest, exist_ok=True)
            for path in (server.error_log, server.cnf_path, server.stdout_log,
                         os.path.join(server.logdir, "wsrep-recover.log")):
                if os.path.exists(path):
                    _copy(path, os.path.join(dest, os.path.basename(path)))
            _copy_wrapper_logs(server.logdir, dest)  # valgrind logs, rr traces, strace...
            sst_logs = getattr(server, "sst_log_dir", None)
            if sst_logs and os.path.isdir(sst_logs) and os.listdir(sst_logs):
                _copytree(sst_logs, os.path.join(dest, "sst_log"))
            core = find_core(server.datadir)
            if core:
                trace = backtrace(server.tree.server, core, os.path.join(dest, "backtrace.txt"))
                if trace:
                    saved.backtrace += f"{server.name} core {core}:\n{trace}\n"
            if keep_data and os.path.isdir(server.datadir):
                _copytree(server.datadir, os.path.join(dest, "data"))
        if keep_data:
            self.datadirs_saved += 1
        return saved


def _copy(src: str, dst: str) -> None:
    try:
        shutil.copy2(src, dst)
    except OSError as exc:
        get_logger().debug("evidence: cannot copy %s: %s", src, exc)


def _copytree(src: str, dst: str) -> None:
    result = run_tool(["cp", "-a", src, dst])
    if result.returncode != 0:
        get_logger().debug("evidence: cannot copy %s: %s", src, result.stderr.strip())


def _copy_wrapper_logs(logdir: str, dest: str) -> None:
    """Copy what a server wrapper wrote into the log directory (everything but the
    files the evidence already has)."""
    try:
        names = sorted(os.listdir(logdir))
    except OSError:
        return
    for name in names:
        src, dst = os.path.join(logdir, name), os.path.join(dest, name)
        if os.path.exists(dst) or name in ("error.log", "stdout.log", "wsrep-recover.log"):
            continue
        if os.path.isdir(src):
            _copytree(src, dst)
        else:
            _copy(src, dst)
