"""Running backup tools: as the server's user, output to a log, timed, bounded, tagged.

A tool runs as the user the servers run as (``mysql`` when kewpie runs as
root), so every file it writes (backup, restored datadir) already has the
owner the server needs.  Its stdout and stderr go straight to a log file (no
Python in the data path); a streamed backup pipes the tool's stdout into the
extractor, whose output goes to a second log.  The environment is the
server's (tagged with ``KEWPIE_WORKDIR``/``KEWPIE_RUN``, so kewpie's sweep
finds a tool left running) with ``TMPDIR`` pointing inside the workdir.
Starting, the parent-death signal and stopping on timeout are
``lib.platform.tools``'s (one process layer for all of kewpie).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from .errors import BackupToolError
from .results import StepResult, ToolReport, parse_tool_log
from ..platform.logsetup import get_logger
from ..platform.logtail import tail_file
from ..platform.process import tool_env
from ..platform.tools import run_pipeline, run_tool

DEFAULT_TIMEOUT = 1800.0   # seconds one tool run may take


@dataclass(frozen=True)
class RunAs:
    """Who runs a tool, in which environment and directory."""

    user: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    tmpdir: str | None = None

    def environment(self) -> dict[str, str]:
        """The tool's environment: env (default: ours) with TMPDIR if set."""
        return tool_env(self.env, self.tmpdir)


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
    start = time.monotonic()
    extract_rc: int | None = 0
    if extract_argv is None:
        ran = run_tool(argv, log_path=log_path, user=run_as.user, env=run_as.env,
                       tmpdir=run_as.tmpdir, cwd=run_as.cwd, timeout=timeout)
    else:
        extract_log = extract_log or log_path + ".extract"
        ran, extracted = run_pipeline(argv, extract_argv, log_path=log_path,
                                      consumer_log=extract_log, user=run_as.user,
                                      env=run_as.env, tmpdir=run_as.tmpdir, cwd=run_as.cwd,
                                      timeout=timeout)
        extract_rc = extracted.returncode
    seconds = time.monotonic() - start
    rc = ran.returncode
    report = parse_tool_log(ran.output)
    result = StepResult(step=step, argv=list(argv), returncode=rc,
                        seconds=seconds, log_path=log_path, report=report,
                        extract_argv=list(extract_argv or []))
    log.debug("%s took %.0f ms (exit %s)", step, seconds * 1000, rc)
    if check:
        check_step(result, timeout, ran.timed_out, extract_rc, extract_log)
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
