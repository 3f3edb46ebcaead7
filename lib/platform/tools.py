"""One-shot tools: run a command to its end, bounded in time, and say how it went.

:func:`run_tool` runs one command (``mariadbd --version``, the bootstrap,
``--wsrep-recover``, pt-table-checksum, sysbench, ``cp -a``...) and
:func:`run_pipeline` a producer piped into a consumer (``mariabackup
--stream | mbstream -x``).  Both start their children through
``lib.platform.process.spawn`` (own session, parent-death signal, optionally
as another user, ``TMPDIR`` set) and, when the timeout passes, stop every
child's whole process group with the one stop policy (SIGTERM, a short
wait, SIGKILL).  Output is either captured (``stdout``/``stderr``) or written
to a log file with no Python in the data path.
"""
from __future__ import annotations

import io
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Mapping, Sequence, TypedDict

from .process import spawn, stop_child, tool_env, wait_exit

TERM_GRACE = 2.0   # seconds a timed-out tool gets between SIGTERM and SIGKILL


@dataclass(frozen=True)
class ToolResult:
    """How one tool run ended: exit status, output (or its log), duration, timeout.

    returncode is negative when a signal ended the tool (always so after a
    timeout).  With a log file, stdout and stderr are empty and
    :attr:`output` reads the log.
    """

    argv: list[str]
    returncode: int
    seconds: float
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""
    log_path: str | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Exited 0 within its time."""
        return self.returncode == 0 and not self.timed_out

    @property
    def output(self) -> str:
        """stdout then stderr, or the log file's text when the output went to a log."""
        if self.log_path is None:
            return self.stdout + self.stderr
        try:
            with open(self.log_path, errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""


class _SpawnArgs(TypedDict):
    """What run_tool hands spawn whatever it does with the output."""

    env: dict[str, str]
    user: str | None
    cwd: str | None
    stdin: int | IO[bytes]


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def run_tool(argv: Sequence[str], *, user: str | None = None,
             env: Mapping[str, str] | None = None, tmpdir: str | None = None,
             timeout: float | None = None, log_path: str | None = None,
             cwd: str | None = None, input: str | None = None,
             on_line: Callable[[str], object] | None = None, append: bool = False,
             stdin_path: str | None = None) -> ToolResult:
    """Run argv to its end; its whole process group is stopped if timeout passes.

    Output: with log_path, stdout and stderr go to that file (truncated
    first, unless append); with on_line, each line of the merged output is handed to it as it
    comes (and kept in ``lines``); else both are captured as text.  input, if
    given, is written to the tool's stdin; stdin_path, if given, is the file the tool
    reads as its stdin, byte for byte (otherwise stdin is /dev/null).
    Raises OSError when the tool cannot be started (or stdin_path cannot be opened).
    """
    if stdin_path is not None:
        with open(stdin_path, "rb") as source:
            return _run(argv, user, env, tmpdir, timeout, log_path, cwd, None, on_line,
                        append, source)
    return _run(argv, user, env, tmpdir, timeout, log_path, cwd, input, on_line, append,
                subprocess.PIPE if input is not None else subprocess.DEVNULL)


def _run(argv: Sequence[str], user: str | None, env: Mapping[str, str] | None,
         tmpdir: str | None, timeout: float | None, log_path: str | None, cwd: str | None,
         input: str | None, on_line: Callable[[str], object] | None, append: bool,
         stdin: int | IO[bytes]) -> ToolResult:
    """run_tool with its stdin chosen."""
    deadline = None if timeout is None else time.monotonic() + timeout
    start = time.monotonic()
    kwargs = _SpawnArgs(env=tool_env(env, tmpdir), user=user, cwd=cwd, stdin=stdin)
    if log_path is not None:
        with open(log_path, "ab" if append else "wb") as log:
            proc = spawn(argv, stdout=log, stderr=log, **kwargs)
        try:
            if input is not None:
                _feed(proc, input)
            timed_out = not wait_exit(proc, _remaining(deadline))
        except BaseException:
            stop_child(proc, 0.0)
            raise
        if timed_out:
            stop_child(proc, TERM_GRACE)
        return ToolResult(list(argv), proc.returncode, time.monotonic() - start, timed_out,
                          log_path=log_path)
    if on_line is not None:
        return _run_streamed(argv, kwargs, input, deadline, on_line, start)
    proc = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    timed_out = False
    try:
        out, err = proc.communicate(input, timeout=_remaining(deadline))
    except subprocess.TimeoutExpired:
        timed_out = True
        stop_child(proc, TERM_GRACE)
        try:  # what it wrote before it was stopped (a grandchild in another session may hold the pipes)
            out, err = proc.communicate(timeout=TERM_GRACE)
        except subprocess.TimeoutExpired:
            out, err = "", ""
    except BaseException:
        stop_child(proc, 0.0)
        raise
    return ToolResult(list(argv), proc.wait(), time.monotonic() - start, timed_out,
                      stdout=out or "", stderr=err or "")


def _feed(proc: subprocess.Popen[Any], data: str) -> None:
    """Write data to the tool's stdin (bytes or text, as the pipe is) and close it."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(data if isinstance(proc.stdin, io.TextIOWrapper) else data.encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass


def _run_streamed(argv: Sequence[str], kwargs: _SpawnArgs, input: str | None,
                  deadline: float | None, on_line: Callable[[str], object],
                  start: float) -> ToolResult:
    """run_tool's line-by-line variant; a timer stops the group when time is up."""
    proc = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    assert proc.stdout is not None  # stdout=PIPE
    if input is not None:
        _feed(proc, input)
    expired = threading.Event()

    def expire() -> None:
        """Time is up: stop the tool's group (its output then ends)."""
        expired.set()
        stop_child(proc, TERM_GRACE)

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), expire) \
        if deadline is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    lines: list[str] = []
    try:
        for line in proc.stdout:
            line = line.rstrip("\n")
            lines.append(line)
            on_line(line)
    except BaseException:
        stop_child(proc, 0.0)
        raise
    finally:
        if timer is not None:
            timer.cancel()
            timer.join()
        proc.stdout.close()
    code = proc.wait()
    return ToolResult(list(argv), code, time.monotonic() - start, expired.is_set(), lines=lines)


def run_pipeline(producer: Sequence[str], consumer: Sequence[str], *, log_path: str,
                 consumer_log: str, user: str | None = None,
                 env: Mapping[str, str] | None = None, tmpdir: str | None = None,
                 timeout: float | None = None,
                 cwd: str | None = None) -> tuple[ToolResult, ToolResult]:
    """``producer | consumer``: the producer's stdout feeds the consumer's stdin.

    The producer's stderr goes to log_path, the consumer's output to
    consumer_log.  If timeout passes, both process groups are stopped and
    both results say timed_out.  Raises OSError when either cannot start.
    """
    environment = tool_env(env, tmpdir)
    deadline = None if timeout is None else time.monotonic() + timeout
    start = time.monotonic()
    procs: list[subprocess.Popen[Any]] = []
    try:
        with open(log_path, "wb") as out, open(consumer_log, "wb") as xout:
            first = spawn(producer, env=environment, user=user, cwd=cwd,
                          stdout=subprocess.PIPE, stderr=out)
            procs.append(first)
            assert first.stdout is not None
            procs.append(spawn(consumer, env=environment, user=user, cwd=cwd,
                               stdin=first.stdout, stdout=xout, stderr=xout))
            first.stdout.close()  # the consumer holds the pipe now
        timed_out = not all([wait_exit(p, _remaining(deadline)) for p in procs])
    except BaseException:
        for proc in procs:
            stop_child(proc, 0.0)
        raise
    if timed_out:
        for proc in procs:
            stop_child(proc, TERM_GRACE)
    seconds = time.monotonic() - start
    return (ToolResult(list(producer), procs[0].returncode, seconds, timed_out, log_path=log_path),
            ToolResult(list(consumer), procs[1].returncode, seconds, timed_out,
                       log_path=consumer_log))
