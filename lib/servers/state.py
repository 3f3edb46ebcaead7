"""The workdir's record of running servers (``servers.json``).

Written whenever a server starts or stops, so ``--mode=cleanup`` (or the next
run in the same workdir) can stop servers that a ``--start-and-exit`` run or
a crashed harness left behind.
"""
from __future__ import annotations

import json
import os
import stat
import threading
import time
from typing import Any, Callable, Iterable


from ..platform.logsetup import get_logger
from ..platform.process import (TAG_WORKDIR, pid_alive, stop_foreign, tag_mismatch,
                                tagged_processes)
from ..platform.safedirs import read_small_file


class StateFile:
    """Reads and writes the servers.json description of a workdir.

    Never through a link: the file is read with ``O_NOFOLLOW`` and written
    to a temporary file created exclusively, then renamed over it.
    """

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
            fd = _create_exclusive(tmp)
            with os.fdopen(fd, "w") as fh:
                json.dump(data, fh, indent=2, sort_keys=True)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)

    def read(self) -> dict[str, Any]:
        """The recorded state ({} if none, unreadable, or not a regular file)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return {}
        try:
            with os.fdopen(fd) as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    return {}
                data = json.load(fh)
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def written_for(self, workdir: str) -> bool:
        """Whether kewpie wrote this file for workdir (its run names it)."""
        run = self.read().get("run")
        return isinstance(run, dict) and run.get("workdir") == workdir

    def clear(self) -> None:
        """Forget every server."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def _create_exclusive(path: str) -> int:
    """A new private file at path (O_EXCL, never through a link); a leftover of ours
    (a killed writer with the same pid and thread) is replaced."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, flags, 0o600)
    except FileExistsError:
        os.unlink(path)  # the name only, never a link's target
        return os.open(path, flags, 0o600)


def pid_from_file(pid_file: str, cnf: str) -> int | None:
    """The live pid in pid_file, if that process runs with --defaults-file=cnf."""
    import psutil  # psutil (~10 ms of imports) only where a process is asked about
    try:
        pid = int((read_small_file(pid_file, 64) or "").strip())
        cmdline = psutil.Process(pid).cmdline()
    except (OSError, ValueError, psutil.Error):
        return None
    if cnf and f"--defaults-file={cnf}" in cmdline and pid_alive(pid):
        return pid
    return None


def stop_recorded(states: list[StateFile], workdir: str,
                  announce: Callable[[str], None] | None = None) -> int:
    """Stop every server recorded in the state files plus any process tagged with workdir.

    A recorded pid is stopped only when the process carries kewpie's tag for
    this workdir in its environment, never by its pid alone: any other gets a
    WARNING saying it was left alone and why.  The state files kewpie wrote
    for this workdir are removed.  Returns how many processes were stopped.
    """
    log = get_logger()
    say = announce or log.info
    stopped = 0
    seen: set[int] = set()

    def stop(pid: int, create_time: float | None, source: str, named_in: str) -> None:
        """Stop pid if it is kewpie's for this workdir, else say why it is left alone."""
        nonlocal stopped
        if pid in seen:
            return
        seen.add(pid)
        why = tag_mismatch(pid, TAG_WORKDIR, workdir)
        if why:
            log.warning(f"Left pid {pid} alone (named in {named_in}): it is not a process "
                        f"kewpie started for {workdir} ({why})")
            return
        say(f"Killing pid {pid} from {source}")
        stop_foreign(pid, create_time)
        stopped += 1

    for state in states:
        for srv in state.read().get("servers", []):
            if not isinstance(srv, dict):
                continue
            pid, created = srv.get("pid"), srv.get("create_time")
            created = float(created) if isinstance(created, (int, float)) else None
            if isinstance(pid, int) and pid > 0 and pid_alive(pid, created):
                stop(pid, created, str(srv.get("pid_file", srv.get("vardir", "?"))), state.path)
            # A server restarted outside kewpie (its start script) has a new pid.
            other = pid_from_file(str(srv.get("pid_file", "")), str(srv.get("cnf", "")))
            if other:
                import psutil
                try:
                    started = psutil.Process(other).create_time()
                except psutil.Error:
                    continue
                stop(other, started, str(srv["pid_file"]), str(srv["pid_file"]))
    # The sweep: anything started for this workdir that the record missed.
    leftovers = tagged_processes(TAG_WORKDIR, workdir)
    for proc in leftovers:
        if proc.pid in seen:
            continue
        say(f"Killing pid {proc.pid} tagged with workdir {workdir}")
        stop_foreign(proc.pid, proc.create_time())
        stopped += 1
    for state in states:
        if state.written_for(workdir):
            state.clear()
        else:
            log.debug(f"left {state.path} alone: kewpie did not write it for {workdir}")
    return stopped
