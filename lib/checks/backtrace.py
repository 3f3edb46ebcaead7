"""A crashed server's core file, read with gdb: where it is and what its stack says.

mariadbd runs with ``--core-file`` (lib/servers/layout.py) and the core-size
limit raised (lib/platform/process.py), so a crash leaves ``core`` (or
``core.<pid>``) in the datadir.  :func:`backtrace` runs gdb in batch mode on
it; the evidence of a failed test (lib/run/evidence.py) and a hunt's crash
findings (lib/hunt/crash.py) keep its output.
"""
from __future__ import annotations

import os
import re
import shutil

from ..platform.tools import run_tool

CORE_RE = re.compile(r"^core(\.\d+)?$")
TOP_FRAMES = 8
GDB_TIMEOUT = 120
# Frames of the signal handler, abort() and assert() themselves: never the bug's.
HANDLER_FRAMES = frozenset({
    "my_print_stacktrace", "handle_fatal_signal", "__restore_rt", "raise", "__GI_raise", "abort",
    "__GI_abort", "__pthread_kill_implementation", "__pthread_kill_internal", "pthread_kill",
    "__pthread_kill", "__GI___pthread_kill", "__assert_fail_base", "__assert_fail",
    "__GI___assert_fail", "ut_dbg_assertion_failed", "my_write_core", "killpg", "my_abort",
    "ib::fatal::~fatal", "ib::fatal_or_error::~fatal_or_error", "<signal handler called>",
    "__libc_message", "__fortify_fail", "__stack_chk_fail", "__chk_fail", "kill", "__kill",
    "__GI_kill",
})
GDB_FRAME_RE = re.compile(r"^#\d+\s+(?:0x[0-9a-fA-F]+ in )?(?P<func><signal handler called>|.+?)"
                          r"(?: \(.*)?$")


def find_core(datadir: str) -> str | None:
    """A core file left in a datadir by a crashed server, if any."""
    try:
        names = sorted(os.listdir(datadir))
    except OSError:
        return None
    for name in names:
        if CORE_RE.match(name):
            return os.path.join(datadir, name)
    return None


def backtrace(binary: str, core: str, out_path: str) -> str:
    """Write gdb's backtraces to out_path and return the crashing thread's top frames."""
    gdb = shutil.which("gdb")
    if not gdb:
        return ""
    argv = [gdb, "-batch", "-nx", "-ex", "bt 40", "-ex", "thread apply all bt 20", binary, core]
    try:
        proc = run_tool(argv, timeout=GDB_TIMEOUT)
    except OSError as exc:
        return f"(gdb failed: {exc})"
    if proc.timed_out:
        return f"(gdb failed: no answer within {GDB_TIMEOUT} s)"
    with open(out_path, "w") as fh:
        fh.write(proc.stdout + proc.stderr)
    return "\n".join(from_abort(crashing_thread(proc.stdout))[:TOP_FRAMES])


def crashing_thread(text: str) -> list[str]:
    """The crashing thread's frame lines (``#0 ...``, ``#1 ...``) in gdb's output: the
    first stack of more than one frame (gdb prints the current frame alone when it
    loads the core, then ``bt``, then every thread's stack)."""
    stacks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("#0"):
            stacks.append([])
        if line.startswith("#") and stacks:
            stacks[-1].append(line)
    return next((s for s in stacks if len(s) > 1), stacks[0] if stacks else [])


def from_abort(lines: list[str]) -> list[str]:
    """gdb's frame lines of a crashing thread from the last signal-handler, abort or
    assert frame on: that frame says how the server died, the ones after it where (the
    handler's own frames above it say nothing about the bug).  All of them when there
    is no such frame."""
    last = -1
    for i, line in enumerate(lines):
        m = GDB_FRAME_RE.match(line)
        if m and m.group("func").strip() in HANDLER_FRAMES:
            last = i
    return lines[max(last, 0):]
