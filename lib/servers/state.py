"""The workdir's record of running servers (``servers.json``).

Written whenever a server starts or stops, so ``--mode=cleanup`` (or the next
run in the same workdir) can stop servers that a ``--start-and-exit`` run or
a crashed harness left behind.
"""
from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Callable, Iterable

import psutil

from ..platform.logsetup import get_logger
from ..platform.process import TAG_WORKDIR, stop_foreign, tagged_processes, pid_alive


class StateFile:
    """Reads and writes the servers.json description of a workdir."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()

    def write(self, run: dict[str, Any], servers: Iterable[dict[str, Any]]) -> None:
        """Atomically record the run and its live servers."""
        data = {"run": run, "updated": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "servers": [s for s in servers if s.get("pid")]}
        with self._lock:
            tmp = f"{self.path}.tmp-{os.getpid()}-{threading.get_ident()}"
            # 0600 from the start: the recorded options may hold passwords (wsrep-sst-auth)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as fh:
                json.dump(data, fh, indent=2, sort_keys=True)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)

    def read(self) -> dict[str, Any]:
        """The recorded state ({} if none or unreadable)."""
        try:
            with open(self.path) as fh:
                state = json.load(fh)
        except (OSError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def clear(self) -> None:
        """Forget every server."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def pid_from_file(pid_file: str, cnf: str) -> int | None:
    """The live pid in pid_file, if that process runs with --defaults-file=cnf."""
    try:
        with open(pid_file) as fh:
            pid = int(fh.read().strip())
        cmdline = psutil.Process(pid).cmdline()
    except (OSError, ValueError, psutil.Error):
        return None
    if cnf and f"--defaults-file={cnf}" in cmdline and pid_alive(pid):
        return pid
    return None


def stop_recorded(states: list[StateFile], workdir: str,
                  announce: Callable[[str], None] | None = None) -> int:
    """Stop every server recorded in the state files plus any process tagged with workdir.

    Returns how many processes were stopped.
    """
    log = get_logger()
    say = announce or log.info
    stopped = 0
    seen: set[int] = set()
    recorded = [srv for state in states for srv in state.read().get("servers", [])]
    for srv in recorded:
        pid = srv.get("pid")
        if pid and pid_alive(pid, srv.get("create_time")):
            say(f"Killing pid {pid} from {srv.get('pid_file', srv.get('vardir', '?'))}")
            stop_foreign(pid, srv.get("create_time"))
            seen.add(pid)
            stopped += 1
        # A server restarted outside kewpie (its start script) has a new pid.
        other = pid_from_file(srv.get("pid_file", ""), srv.get("cnf", ""))
        if other and other not in seen:
            say(f"Killing pid {other} from {srv['pid_file']}")
            stop_foreign(other, None)
            seen.add(other)
            stopped += 1
    # The sweep: anything started for this workdir that the record missed.
    leftovers = tagged_processes(TAG_WORKDIR, workdir)
    for proc in leftovers:
        if proc.pid in seen:
            continue
        say(f"Killing pid {proc.pid} tagged with workdir {workdir}")
        stop_foreign(proc.pid, proc.create_time())
        stopped += 1
    for state in states:
        state.clear()
    return stopped
