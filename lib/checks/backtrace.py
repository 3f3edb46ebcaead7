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
    return "\n".join(crashing_thread(proc.stdout)[:TOP_FRAMES])


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
