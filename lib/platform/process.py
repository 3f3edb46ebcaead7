"""A small process executor in the mirakuru style.

Children run in their own session (process group), carry tag variables in
their environment so a sweep can find every one of them, can be tied to the
harness's life (they get SIGKILL if the harness dies), and are stopped with
bounded waits.  Our own children are reaped with ``wait()``; a process we did
not start (found in a state file) counts as exited once it is a zombie.
"""
from __future__ import annotations

import ctypes
import grp
import os
import pwd
import resource
import select
import signal
import subprocess
import time
from typing import Callable

import psutil

from lib.platform.launcher import Launcher

TAG_WORKDIR = "KEWPIE_WORKDIR"
TAG_RUN = "KEWPIE_RUN"
TAG_NAME = "KEWPIE_NAME"
TAG_BOT = "KEWPIE_BOT"
PR_SET_PDEATHSIG = 1


def group_of(user: str) -> str:
    """The name of a user's primary group."""
    return grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _server_preexec() -> None:
    """preexec hook for servers: die with the harness, and allow core dumps."""
    die_with_parent()
    _allow_cores()


def _allow_cores() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    except (ValueError, OSError):
        pass


def pid_alive(pid: int, create_time: float | None = None) -> bool:
    """True if pid runs (not a zombie) and, if given, was created at create_time."""
    try:
        proc = psutil.Process(pid)
        if create_time is not None and abs(proc.create_time() - create_time) > 1.0:
            return False
        return proc.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
        return False


def wait_pid_gone(pid: int, timeout: float, create_time: float | None = None) -> bool:
    """Poll until a (foreign) pid is gone or a zombie; True if it went."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid, create_time):
            return True
        time.sleep(0.02)
    return not pid_alive(pid, create_time)


def signal_pid(pid: int, sig: int, group: bool = True) -> None:
    """Send sig to pid's process group (if it leads one) or to pid; ignore if gone."""
    try:
        if group and os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def tagged_processes(tag: str, value: str) -> list[psutil.Process]:
    """Every live process whose environment has tag=value (the sweep)."""
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if proc.pid == os.getpid():
                continue
            if proc.environ().get(tag) == value and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def stop_foreign(pid: int, create_time: float | None, term_timeout: float = 10.0,
                 kill_timeout: float = 5.0) -> str:
    """Stop a process we did not start: SIGTERM, then SIGKILL. Returns how it ended."""
    if not pid_alive(pid, create_time):
        return "gone"
    signal_pid(pid, signal.SIGTERM)
    if wait_pid_gone(pid, term_timeout, create_time):
        return "terminated"
    signal_pid(pid, signal.SIGKILL)
    wait_pid_gone(pid, kill_timeout, create_time)
    return "killed"


class ProcessExecutor:
    """Start, watch and stop one child process."""

    def __init__(self, argv: list[str], env: dict[str, str], log_path: str,
                 user: str | None = None, pass_fds: tuple[int, ...] = (),
                 die_with_parent: bool = True, cwd: str | None = None,
                 launcher: Launcher | None = None) -> None:
        self.argv = argv
        self.env = env
        self.log_path = log_path
        self.user = user
        self.pass_fds = pass_fds
        self.die_with_parent = die_with_parent
        self.cwd = cwd
        self.launcher = launcher
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0
        self.create_time: float | None = None

    @property
    def pid(self) -> int | None:
        """The child's pid, or None before start."""
        return self.proc.pid if self.proc else None

    def start(self) -> None:
        """Launch the child in its own session with output to log_path."""
        if self.launcher is not None and self.die_with_parent:
            # the parent-death signal follows the forking thread: fork from a long-lived one
            self.proc = self.launcher.call(self._launch)
        else:
            self.proc = self._launch()
        self.started_at = time.monotonic()
        try:
            self.create_time = psutil.Process(self.proc.pid).create_time()
        except psutil.Error:
            self.create_time = None

    def _launch(self) -> subprocess.Popen:
        with open(self.log_path, "ab") as out:
            return subprocess.Popen(
                self.argv, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                start_new_session=True, pass_fds=self.pass_fds, cwd=self.cwd,
                user=self.user, group=self._group(),
                extra_groups=[] if self.user else None,
                preexec_fn=_server_preexec if self.die_with_parent else _allow_cores)

    def _group(self) -> str | None:
        return group_of(self.user) if self.user else None

    def running(self) -> bool:
        """True while the child has not exited (reaps it if it has)."""
        return self.proc is not None and self.proc.poll() is None

    def returncode(self) -> int | None:
        """The exit status once exited (negative = killed by that signal)."""
        return self.proc.poll() if self.proc else None

    def wait_ready(self, check: Callable[[], bool], timeout: float,
                   interval: float = 0.02) -> tuple[bool, str]:
        """Poll check() until it is true; fail fast if the child exits.

        Returns (ready, reason) where reason is '' on success, 'exited' or
        'timeout'.
        """
        deadline = time.monotonic() + timeout
        while True:
            if not self.running():
                return False, "exited"
            if check():
                return True, ""
            if time.monotonic() >= deadline:
                return False, "timeout"
            time.sleep(interval)

    def wait(self, timeout: float) -> bool:
        """Wait for the child to exit; True if it did within timeout.

        Blocks on a pidfd (woken the moment the child exits) rather than
        Popen.wait's sleep loop, which adds up to 50 ms to every stop.
        """
        if self.proc is None or self.proc.poll() is not None:
            return True
        try:
            fd = os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):  # no pidfd, or already reaped elsewhere
            fd = -1
        if fd >= 0:
            try:
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                if not poller.poll(max(0, int(timeout * 1000))):
                    return False
            finally:
                os.close(fd)
            timeout = 5.0  # exited: reaping is immediate
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def send(self, sig: int) -> None:
        """Send a signal to the child's process group."""
        if self.proc is not None and self.proc.poll() is None:
            signal_pid(self.proc.pid, sig)

    def terminate(self, timeout: float) -> bool:
        """SIGTERM and wait up to timeout; True if it exited."""
        self.send(signal.SIGTERM)
        return self.wait(timeout)

    def kill(self, timeout: float = 10.0) -> None:
        """SIGKILL the process group and reap the child."""
        self.send(signal.SIGCONT)
        if self.proc is not None and self.proc.poll() is None:
            signal_pid(self.proc.pid, signal.SIGKILL)
        self.wait(timeout)

    def stop(self, term_timeout: float = 10.0) -> str:
        """SIGTERM, then SIGKILL after term_timeout. Returns how it ended."""
        if not self.running():
            return "gone"
        self.send(signal.SIGCONT)
        if self.terminate(term_timeout):
            return "terminated"
        self.kill()
        return "killed"
