"""Keep what a failed test leaves behind, under ``workdir/failed/<run>/<suite.test>/``.

Each run's evidence has its own folder, named for the run (its run id, or the
pytest-xdist session shared by the workers): a later run in the same workdir
never empties it.  The newest :data:`KEEP_RUNS` runs' folders are kept (older
ones are removed when a run first saves evidence), and ``failed/latest`` links
to the newest.  A run whose tests all pass makes no folder.

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
import stat
from dataclasses import dataclass

from ..checks.backtrace import backtrace, find_core
from ..errors import UsageError
from ..platform import safedirs
from ..platform.logsetup import get_logger
from ..platform.safewrite import OutputDir
from ..servers.server import Server

KEEP_RUNS = 5  # runs whose evidence stays in workdir/failed/
LATEST = "latest"


@dataclass
class Saved:
    """Where a failure's evidence went, and the backtrace summary if a core was found."""

    path: str
    backtrace: str = ""


class EvidenceKeeper:
    """Saves evidence of failed tests (one instance per bot)."""

    def __init__(self, root: str, max_datadirs: int, harness_log: str | None,
                 run: str = "run", keep_runs: int = KEEP_RUNS) -> None:
        """root: ``workdir/failed``; run: this run's folder name in it (its id)."""
        self.root = root
        self.run = _safe_name(run) or "run"
        self.keep_runs = keep_runs
        self.max_datadirs = max_datadirs
        self.harness_log = harness_log
        self.datadirs_saved = 0
        self.log = get_logger()

    @property
    def run_dir(self) -> str:
        """This run's evidence folder (``workdir/failed/<run>``)."""
        return os.path.join(self.root, self.run)

    def _open_run(self) -> OutputDir:
        """This run's folder, made on its first failure: older runs beyond keep_runs
        are removed and ``latest`` points here."""
        with OutputDir.in_trusted(self.root, "evidence") as root:
            if not root.exists(self.run):
                run_dir = root.folder(self.run)  # bots of a run race here: made or ours
                prune_runs(self.root, self.keep_runs, keep=self.run)
                point_latest(self.root, self.run)
                return run_dir
            return root.folder(self.run)

    def _target(self, name: str) -> OutputDir:
        name = _safe_name(name)  # suite.test 'row' -> suite.test-row
        with self._open_run() as run_dir:
            target = run_dir.fresh(name)
            n = 2
            while target is None:  # a retried test: suite.test-2, -3...
                target = run_dir.fresh(f"{name}-{n}")
                n += 1
            return target

    def save(self, name: str, message: str, servers: list[Server], tool_logdir: str | None) -> Saved:
        """Copy the evidence of one failed attempt into a folder made for it (never through
        a link: lib/platform/safewrite.py); never raises for missing files."""
        with self._target(name) as target:
            return self._save(target, message, servers, tool_logdir)

    def _save(self, target: OutputDir, message: str, servers: list[Server],
              tool_logdir: str | None) -> Saved:
        saved = Saved(target.path)
        target.write_text("failure.txt", message + "\n")
        if self.harness_log and os.path.exists(self.harness_log):
            _copy(target, self.harness_log, "kewpie.log")
        if tool_logdir and os.path.isdir(tool_logdir) and os.listdir(tool_logdir):
            _copytree(target, tool_logdir, "tool_logs")
        keep_data = self.datadirs_saved < self.max_datadirs
        for server in servers:
            with target.folder(server.name) as dest:
                for path in (server.paths.error_log, server.paths.cnf_path,
                             server.paths.stdout_log,
                             os.path.join(server.paths.logdir, "wsrep-recover.log")):
                    if os.path.exists(path):
                        _copy(dest, path, os.path.basename(path))
                _copy_wrapper_logs(server.paths.logdir, dest)  # valgrind logs, rr traces...
                sst_logs = getattr(server, "sst_log_dir", None)
                if sst_logs and os.path.isdir(sst_logs) and os.listdir(sst_logs):
                    _copytree(dest, sst_logs, "sst_log")
                core = find_core(server.paths.datadir)
                if core:
                    trace = backtrace(server.tree.server, core, dest.path_of("backtrace.txt"))
                    if trace:
                        saved.backtrace += f"{server.name} core {core}:\n{trace}\n"
                if keep_data and os.path.isdir(server.paths.datadir):
                    _copytree(dest, server.paths.datadir, "data")
        if keep_data:
            self.datadirs_saved += 1
        return saved


def _safe_name(name: str) -> str:
    """name as one path component: runs of other characters become '-'."""
    return re.sub(r"[^\w.+-]+", "-", name).strip("-.")


def run_folders(root: str) -> list[str]:
    """The runs' folders in root (``workdir/failed``), newest first (by modification time)."""
    found: list[tuple[float, str]] = []
    try:
        names = os.listdir(root)
    except OSError:
        return []
    for name in names:
        try:
            st = os.lstat(os.path.join(root, name))
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            found.append((st.st_mtime, name))
    return [name for _, name in sorted(found, reverse=True)]


def prune_runs(root: str, keep_runs: int, keep: str = "") -> list[str]:
    """Remove the runs' folders beyond the newest keep_runs (never keep itself);
    returns the names removed.  Folders of an older layout (``failed/<suite.test>``)
    count as runs and age out the same way."""
    names = [n for n in run_folders(root) if n != keep]
    spare = max(keep_runs - (1 if keep else 0), 0)
    removed = names[spare:]
    for name in removed:
        safedirs.remove_tree(os.path.join(root, name), ignore_errors=True)
    return removed


def point_latest(root: str, run: str) -> None:
    """Make ``root/latest`` a relative link to run (replaced atomically)."""
    tmp = os.path.join(root, f".{LATEST}-{os.getpid()}")
    try:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(run, tmp)
        os.replace(tmp, os.path.join(root, LATEST))
    except OSError as exc:
        get_logger().debug("evidence: cannot link %s/%s: %s", root, LATEST, exc)


def _copy(folder: OutputDir, src: str, rel: str) -> None:
    try:
        folder.copy_file(src, rel)
    except (OSError, UsageError) as exc:
        get_logger().debug("evidence: cannot copy %s: %s", src, exc)


def _copytree(folder: OutputDir, src: str, rel: str) -> None:
    try:
        error = folder.copy_tree(src, rel)
    except (OSError, UsageError) as exc:
        error = str(exc)
    if error:
        get_logger().debug("evidence: cannot copy %s: %s", src, error)


def _copy_wrapper_logs(logdir: str, dest: OutputDir) -> None:
    """Copy what a server wrapper wrote into the log directory (everything but the
    files the evidence already has)."""
    try:
        names = sorted(os.listdir(logdir))
    except OSError:
        return
    for name in names:
        src = os.path.join(logdir, name)
        if dest.exists(name) or name in ("error.log", "stdout.log", "wsrep-recover.log"):
            continue
        if os.path.isdir(src) and not os.path.islink(src):
            _copytree(dest, src, name)
        else:
            _copy(dest, src, name)
