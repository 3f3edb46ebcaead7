"""Running backup tools: as the server's user, output to a log, timed, bounded, tagged.

A tool runs as the user the servers run as (``mysql`` when kewpie runs as
root), so every file it writes (backup, restored datadir) already has the
owner the server needs.  Its stdout and stderr go straight to a log file (no
Python in the data path); a streamed backup pipes the tool's stdout into the
extractor, whose stderr goes to a second log.  The environment is the
server's (tagged with ``KEWPIE_WORKDIR``/``KEWPIE_RUN``, so kewpie's sweep
finds a tool left running) with ``TMPDIR`` pointing inside the workdir, and
the tools die with the harness (parent-death signal).
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from lib.backup.errors import BackupToolError
from lib.backup.results import StepResult, ToolReport, parse_tool_log
from lib.platform.logsetup import get_logger
from lib.platform.logtail import tail_file
from lib.platform.process import group_of

DEFAULT_TIMEOUT = 1800.0   # seconds one tool run may take
PR_SET_PDEATHSIG = 1


def exit_with_parent_hook() -> Callable[[], None] | None:
    """A preexec hook that SIGKILLs the tool if the harness dies (None with threads running).

    A preexec hook is not safe when other threads run (a write load during a
    backup): then the tool goes without it, and kewpie's sweep of tagged
    processes is the safety net.
    """
    if threading.active_count() > 1:
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def hook() -> None:
        """In the child, before exec."""
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    return hook


@dataclass(frozen=True)
class RunAs:
    """Who runs a tool, in which environment and directory."""

    user: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    tmpdir: str | None = None

    def popen_kwargs(self) -> dict[str, object]:
        """Keyword arguments for subprocess.Popen."""
        env = dict(self.env if self.env is not None else os.environ)
        if self.tmpdir:
            env["TMPDIR"] = self.tmpdir
        kwargs: dict[str, object] = {"env": env, "cwd": self.cwd, "stdin": subprocess.DEVNULL,
                                     "preexec_fn": exit_with_parent_hook()}
        if self.user and os.geteuid() == 0:
            kwargs.update(user=self.user, group=group_of(self.user), extra_groups=[])
        return kwargs


def wait_all(procs: Sequence[subprocess.Popen], timeout: float) -> tuple[list[int], bool]:
    """Wait for every process; SIGKILL them all if timeout passes first.

    Returns (exit statuses, timed out).  The wait blocks in waitpid (a
    watchdog thread does the killing), so a step is seen to end the moment it
    ends -- ``Popen.wait(timeout)`` polls with sleeps of up to 50 ms.
    """
    fired = threading.Event()

    def expire() -> None:
        """The watchdog: kill whatever still runs."""
        fired.set()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        codes = [proc.wait() for proc in procs]
    finally:
        timer.cancel()
        timer.join()
    return codes, fired.is_set()


def _kill_all(procs: Sequence[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _read(path: str) -> str:
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def run_step(step: str, argv: Sequence[str], log_path: str, run_as: RunAs,
             extract_argv: Sequence[str] | None = None, extract_log: str | None = None,
             timeout: float = DEFAULT_TIMEOUT, check: bool = True) -> StepResult:
    """Run one tool step (optionally streamed into an extractor) and read its log.

    With check (the default), a non-zero exit of the tool or the extractor, a
    timeout, or a log without ``completed OK!`` raises BackupToolError with
    the tool's error lines and log tail.
    """
    log = get_logger()
    log.debug("%s: %s%s", step, " ".join(argv),
              f" | {' '.join(extract_argv)}" if extract_argv else "")
    kwargs = run_as.popen_kwargs()
    start = time.monotonic()
    extract_rc: int | None = 0
    procs: list[subprocess.Popen] = []
    with open(log_path, "wb") as out:
        try:
            if extract_argv is None:
                procs.append(subprocess.Popen(list(argv), stdout=out, stderr=out, **kwargs))  # type: ignore[call-overload]
                (rc,), timed_out = wait_all(procs, timeout)
            else:
                extract_log = extract_log or log_path + ".extract"
                with open(extract_log, "wb") as xout:
                    tool = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=out,  # type: ignore[call-overload]
                                            **kwargs)
                    procs.append(tool)
                    procs.append(subprocess.Popen(list(extract_argv), stdout=xout, stderr=xout,  # type: ignore[call-overload]
                                                  **dict(kwargs, stdin=tool.stdout)))
                    assert tool.stdout is not None
                    tool.stdout.close()  # the extractor holds the pipe now
                    (rc, extract_rc), timed_out = wait_all(procs, timeout)
        except BaseException:
            _kill_all(procs)
            raise
    seconds = time.monotonic() - start
    text = _read(log_path)
    report = parse_tool_log(text)
    result = StepResult(step=step, argv=list(argv), returncode=rc,
                        seconds=seconds, log_path=log_path, report=report,
                        extract_argv=list(extract_argv or []))
    log.debug("%s took %.0f ms (exit %s)", step, seconds * 1000, rc)
    if check:
        check_step(result, timeout, timed_out, extract_rc, extract_log)
    return result


def check_step(result: StepResult, timeout: float, timed_out: bool = False,
               extract_rc: int | None = 0, extract_log: str | None = None) -> None:
    """BackupToolError unless the step (and its extractor) succeeded."""
    tool = os.path.basename(result.argv[0])
    tail = tail_file(result.log_path, 25)
    report: ToolReport = result.report
    if timed_out:
        problem = f"did not finish within {timeout:.0f}s and was killed"
    elif result.returncode != 0:
        problem = f"failed (exit {result.returncode})"
        if extract_rc:
            problem += f" and so did the stream extractor (exit {extract_rc}, log {extract_log})"
    elif extract_rc != 0:
        xtail = tail_file(extract_log, 15) if extract_log else ""
        what = "timed out" if extract_rc is None else f"failed (exit {extract_rc})"
        raise BackupToolError(
            f"{tool} --{result.step}: the stream extractor {os.path.basename(result.extract_argv[0])} "
            f"{what}; logs: {result.log_path}, {extract_log}",
            (xtail + "\n--- tool log ---\n" + tail).strip(), step=result.step, argv=result.argv,
            returncode=extract_rc, log_path=result.log_path, tool_message=xtail.strip())
    elif not report.completed_ok:
        problem = "exited 0 but never said 'completed OK!'"
    else:
        return
    said = f": {report.message}" if report.message else ""
    raise BackupToolError(f"{tool} --{result.step} {problem}{said} (log: {result.log_path})",
                          tail or "(the tool's log is empty)", step=result.step, argv=result.argv,
                          returncode=None if timed_out else result.returncode,
                          log_path=result.log_path, tool_message=report.message)
