"""Starting, watching and stopping child processes: the one place that starts programs.

Every program kewpie starts -- a server (:class:`ProcessExecutor`) or a one-shot
tool (``lib.platform.tools.run_tool``) -- is launched by :func:`spawn`: in its
own session (process group), optionally as another user, tied to the
harness's life (the parent-death signal SIGKILLs it if the harness dies), with
the tag variables (``TAG_*``) its caller put in its environment so a sweep can
find it, and never with the secrets kewpie was handed in its own environment
(``KEWPIE_HISTORY_DSN``: lib/platform/secrets.py).  Every stop follows
:func:`stop_policy` -- a server's, a tool's that timed out, a leftover's found by its
tags (:func:`stop_tagged`): SIGCONT, the request to exit (SIGTERM, or the process's
own clean request: a server's SQL ``SHUTDOWN``), a bounded wait, then SIGKILL of the
group; a kill is the policy's last step alone.  Our own children are reaped with
``wait()``; a process we did not start (found in a state file) counts as exited once
it is a zombie.  (A fork of the harness itself that runs Python -- a bot -- is made by
:mod:`lib.platform.workers`.)
"""
from __future__ import annotations

import ctypes
import errno
import grp
import os
import pwd
import resource
import select
import shutil
import signal
import subprocess
import time
from typing import IO, TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypedDict

if TYPE_CHECKING:
    import psutil


from .launcher import Launcher
from .lifecycle import ReadyWait, StopResult
from .secrets import child_environment

TAG_WORKDIR = "KEWPIE_WORKDIR"
TAG_RUN = "KEWPIE_RUN"
TAG_NAME = "KEWPIE_NAME"
TAG_BOT = "KEWPIE_BOT"
TAG_TEST = "KEWPIE_TEST"   # set for what one test starts: what is left of it afterwards
PR_SET_PDEATHSIG = 1
KILL_TIMEOUT = 10.0   # seconds to wait for a SIGKILLed group's leader to be reaped

# What callers hand to spawn and get back from it, re-exported so that no module
# outside lib/platform/ imports subprocess (tests/unit/test_house_rules.py).
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
STDOUT = subprocess.STDOUT
Popen = subprocess.Popen


def group_of(user: str) -> str:
    """The name of a user's primary group."""
    return grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent (thread) dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _child_setup(with_parent: bool, core_dumps: bool) -> Callable[[], None] | None:
    """The preexec hook: parent-death signal and/or core dumps (None if neither).

    prctl is looked up here, in the parent: the hook runs between fork and
    exec, where loading anything could deadlock on a lock another thread held.
    """
    if not with_parent and not core_dumps:
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl if with_parent else None

    def setup() -> None:
        """In the child, before exec."""
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if core_dumps:
            _allow_cores()
    return setup


def _allow_cores() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    except (ValueError, OSError):
        pass


class UserSwitch(TypedDict, total=False):
    """Popen's arguments that run a child as another user (empty: as us)."""

    user: str
    group: str
    extra_groups: list[str]


def _switch_user(user: str | None) -> UserSwitch:
    """Popen arguments that run the child as user (none if it is us already)."""
    if not user or (os.geteuid() != 0 and pwd.getpwuid(os.geteuid()).pw_name == user):
        return {}
    return {"user": user, "group": group_of(user), "extra_groups": []}


def tool_env(env: Mapping[str, str] | None, tmpdir: str | None) -> dict[str, str]:
    """A child's environment: env (default: ours, with its tags but the test tag: a tool
    kewpie runs, and waits for, is never a test's leftover -- a spare datadir copied in
    the background while a test runs included) and TMPDIR if given."""
    out = dict(env) if env is not None else {k: v for k, v in os.environ.items()
                                             if k != TAG_TEST}
    if tmpdir:
        out["TMPDIR"] = tmpdir
    return out


def with_tags(env: Mapping[str, str] | None, tagged: Mapping[str, str] | None) -> dict[str, str]:
    """env (default: ours) plus the run's tags (workdir, run, bot) found in tagged, the
    environment of something the run started (a server's): a child started with it is
    found by the end-of-run sweep even when its caller knows nothing of the run."""
    out = dict(env if env is not None else os.environ)
    out.update({tag: tagged[tag] for tag in (TAG_WORKDIR, TAG_RUN, TAG_BOT)
                if tagged and tag in tagged})
    return out


def spawn(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
          user: str | None = None, cwd: str | None = None,
          stdin: int | IO[Any] | None = subprocess.DEVNULL, stdout: int | IO[Any] | None = None,
          stderr: int | IO[Any] | None = None, pass_fds: Sequence[int] = (),
          with_parent: bool = True, core_dumps: bool = False,
          text: bool = False, netns: str | None = None) -> subprocess.Popen[Any]:
    """Start argv in its own process group: the only Popen in kewpie's process layer.

    Its own process group (one kill stops it and what it started), not its own
    session: Linux schedules each session as one group (autogroup), and on a
    loaded machine a client and a server in different groups wait milliseconds
    for each other at every round trip (a mysql-test case of 65535 single-row
    inserts took 45 s instead of 5 s); kewpie's children stay in the harness's
    session, as mysql-test-run's do in its.

    with_parent sets the parent-death signal (the child is SIGKILLed when the
    *thread* that forked it exits -- see lib.platform.launcher); core_dumps
    raises the core-size limit to its hard limit (servers).  A user other
    than ours needs root; the child then gets that user's primary group and
    no supplementary groups.  netns: the child is born in that network namespace
    (see lib.platform.nsenter.entered).  For a tool (not core_dumps), where
    util-linux's setpriv is found, it does the user switch and parent-death
    signal in the child, so that Popen can vfork instead of forking the harness.
    """
    env = child_environment(env, os.environ)  # a server's user must not read our secrets
    if netns:
        from .nsenter import entered
        with entered(netns):
            return spawn(argv, env=env, user=user, cwd=cwd, stdin=stdin, stdout=stdout,
                         stderr=stderr, pass_fds=pass_fds, with_parent=with_parent,
                         core_dumps=core_dumps, text=text)
    switch = _switch_user(user)
    # servers (core_dumps) keep the hook: it sets the parent-death signal before
    # Popen returns, so a launch can never race the exit of the thread that asked
    lean = None if core_dumps else _through_setpriv(argv, env, cwd, switch, with_parent)
    if lean is not None:  # no Python between fork and exec: Popen can vfork
        return subprocess.Popen(
            lean, env=dict(env) if env is not None else None, cwd=cwd,
            stdin=stdin, stdout=stdout, stderr=stderr, pass_fds=tuple(pass_fds),
            process_group=0, text=text, errors="replace" if text else None)
    return subprocess.Popen(
        list(argv), env=dict(env) if env is not None else None, cwd=cwd,
        stdin=stdin, stdout=stdout, stderr=stderr, pass_fds=tuple(pass_fds),
        process_group=0, preexec_fn=_child_setup(with_parent, core_dumps),
        text=text, errors="replace" if text else None, **switch)


def _through_setpriv(argv: Sequence[str], env: Mapping[str, str] | None, cwd: str | None,
                     switch: UserSwitch, with_parent: bool) -> list[str] | None:
    """argv run by util-linux's setpriv, which switches the user and sets the
    parent-death signal before it execs argv; None when setpriv is missing (the
    preexec hook then does it).

    A fork of the harness (a process of 100 MB and more) costs about 9 ms of
    CPU and wall time; Popen can only use vfork when no Python code runs in the
    child and no user switch is asked of it.  The signal is set a moment after
    Popen returns: for a one-shot tool, whose caller waits for it, that is the
    same.  A program that cannot be found raises FileNotFoundError here, as
    Popen would.
    """
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    program = os.path.join(cwd, argv[0]) if cwd and "/" in argv[0] else argv[0]
    if shutil.which(program, path=path) is None:
        raise FileNotFoundError(errno.ENOENT, f"No such file or directory: {argv[0]!r}",
                                argv[0])
    prefix = [setpriv]
    if switch:
        prefix += [f"--reuid={switch['user']}", f"--regid={switch['group']}", "--clear-groups"]
    if with_parent:
        prefix.append("--pdeathsig=KILL")
    return [*prefix, "--", *argv] if len(prefix) > 1 else list(argv)


def wait_exit(proc: subprocess.Popen[Any], timeout: float | None) -> bool:
    """Wait for our child to exit and reap it; True if it did within timeout.

    Blocks on a pidfd (woken the moment the child exits) rather than
    Popen.wait's sleep loop, which adds up to 50 ms to every wait.
    """
    if proc.poll() is not None:
        return True
    if timeout is None:
        proc.wait()
        return True
    try:
        fd = os.pidfd_open(proc.pid)
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
        proc.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        return False


def process_create_time(pid: int) -> float | None:
    """When pid started, in seconds since the epoch, as psutil's ``create_time`` counts it
    (its start in clock ticks after boot, plus the boot time), read from /proc without
    importing psutil (~10 ms, on the critical path of a server's start); None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        with open("/proc/stat", "rb") as f:
            boot = next(line for line in f if line.startswith(b"btime "))
    except (OSError, StopIteration):
        return None
    fields = stat[stat.rfind(b")") + 2:].split()   # after "pid (comm) ": state is field 3
    return float(fields[19]) / os.sysconf("SC_CLK_TCK") + float(boot.split()[1])


def pid_alive(pid: int, create_time: float | None = None) -> bool:
    """True if pid runs (not a zombie) and, if given, was created at create_time."""
    import psutil  # psutil (~10 ms of imports) only where a process is asked about
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
    """Every live process whose environment has tag=value (the sweep).

    Each ``/proc/<pid>/environ`` is first searched as bytes for the entry, and
    only a process that has it is asked through psutil (its parsed environment,
    its state): parsing every process's environment cost each run's start ~10 ms.
    """
    entry = f"{tag}={value}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if entry not in fh.read():
                    continue
        except OSError:
            continue
        import psutil  # only for a process that carries the tag
        try:
            proc = psutil.Process(int(name))
            if proc.environ().get(tag) == value and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (OSError, psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def tag_problem(environ: Mapping[str, str] | None, tag: str, value: str) -> str:
    """'' when an environment carries tag=value, else what it has instead."""
    if environ is None:
        return "its environment cannot be read"
    found = environ.get(tag)
    if found is None:
        return f"it has no {tag} in its environment"
    if found != value:
        return f"its {tag} is {found}"
    return ""


def tag_mismatch(pid: int, tag: str, value: str) -> str:
    """'' when live process pid carries tag=value in its environment (kewpie started it
    for that workdir, run or bot), else why not: a pid read from a file is acted on
    only when this is ''."""
    import psutil
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return "it has exited"
        environ: Mapping[str, str] | None = proc.environ()
    except psutil.NoSuchProcess:
        return "it has exited"
    except (psutil.AccessDenied, psutil.ZombieProcess):
        environ = None
    return tag_problem(environ, tag, value)


def reap_if_child(pid: int) -> None:
    """Collect pid's exit status if it is an exited child of ours (a zombie we would
    otherwise keep until its Popen object is collected); nothing otherwise."""
    import psutil
    try:
        if psutil.Process(pid).ppid() != os.getpid():
            return
        os.waitpid(pid, os.WNOHANG)
    except (psutil.Error, ChildProcessError, ProcessLookupError):
        pass


def stop_policy(alive: Callable[[], bool], send: Callable[[int], None],
                wait_gone: Callable[[float], bool], term_timeout: float,
                kill_timeout: float = KILL_TIMEOUT,
                request: Callable[[float], bool] | None = None) -> StopResult:
    """The one way kewpie stops a process: asked to exit, a bounded wait, then SIGKILL.

    send delivers a signal to the process group; wait_gone(timeout) is True
    once the process has exited (reaped if ours, a zombie if not).  The
    process first gets SIGCONT, so one that is stopped (SIGSTOP: a paused
    server) runs to act on what follows; then request(term_timeout), the
    process's own clean way out (a server's SQL ``SHUTDOWN``), when given and
    taken (it returns True) -- else SIGTERM.  After term_timeout, SIGKILL.  A
    term_timeout of 0 is a kill: SIGKILL at once, the policy's last step alone.
    """
    if not alive():
        return StopResult.GONE
    if term_timeout > 0:
        send(signal.SIGCONT)
        how = StopResult.SHUTDOWN
        if request is None or not request(term_timeout):
            how = StopResult.TERMINATED
            send(signal.SIGTERM)
        if wait_gone(term_timeout):
            return how
    send(signal.SIGKILL)
    wait_gone(kill_timeout)
    return StopResult.KILLED


def stop_child(proc: subprocess.Popen[Any], term_timeout: float,
               kill_timeout: float = KILL_TIMEOUT,
               request: Callable[[float], bool] | None = None) -> StopResult:
    """:func:`stop_policy` for a child we started in its own session (reaps it).

    The signals go to the child's process group, and whatever is left of the
    group once the child has ended (a grandchild ignoring SIGTERM) gets
    SIGKILL: the whole group ends.
    """
    def send(sig: int) -> None:
        """Signal the child's group (it outlives the child while members remain)."""
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    result = stop_policy(lambda: proc.poll() is None, send,
                         lambda timeout: wait_exit(proc, timeout), term_timeout, kill_timeout,
                         request)
    if result is not StopResult.GONE:
        send(signal.SIGKILL)
    return result


def stop_foreign(pid: int, create_time: float | None, term_timeout: float = 10.0,
                 kill_timeout: float = 5.0) -> StopResult:
    """:func:`stop_policy` for a process we did not start (found in a state file)."""
    return stop_policy(lambda: pid_alive(pid, create_time), lambda sig: signal_pid(pid, sig),
                       lambda timeout: wait_pid_gone(pid, timeout, create_time),
                       term_timeout, kill_timeout)


def stop_foreign_all(targets: Sequence[tuple[int, float | None]], term_timeout: float,
                     kill_timeout: float = 5.0) -> StopResult:
    """:func:`stop_policy` for several processes we did not start, together: each
    (pid, create time) is signalled at every step, and the wait is for all of them
    (one bound, not one each).  GONE when none was running."""
    def running() -> list[tuple[int, float | None]]:
        """The targets still running."""
        return [(pid, born) for pid, born in targets if pid_alive(pid, born)]

    def send(sig: int) -> None:
        """Signal each target still running (its group when it leads one)."""
        for pid, _ in running():
            signal_pid(pid, sig)

    def wait_gone(timeout: float) -> bool:
        """Poll until every target is gone (or a zombie)."""
        deadline = time.monotonic() + timeout
        while running():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True
    return stop_policy(lambda: bool(running()), send, wait_gone, term_timeout, kill_timeout)


def stop_tagged(tag: str, value: str, term_timeout: float,
                kill_timeout: float = 5.0) -> list[tuple[int, str]]:
    """Stop every live process whose environment has tag=value (what a server or a run
    left behind: SST scripts, rsync, socat...), together, by :func:`stop_foreign_all`;
    returns each one's (pid, name) as found.  They are found by their tag even when
    they left their parent's process group."""
    procs = tagged_processes(tag, value)
    if not procs:
        return []
    import psutil  # loaded by tagged_processes for what it found
    found: list[tuple[int, float | None, str]] = []
    for proc in procs:
        try:
            found.append((proc.pid, proc.create_time(), proc.name()))
        except psutil.Error:
            continue
    if found:
        stop_foreign_all([(pid, born) for pid, born, _ in found], term_timeout, kill_timeout)
    return [(pid, name) for pid, _, name in found]


class ProcessExecutor:
    """One long-running child (a server): start, readiness wait, signals, stop.

    The child's output is appended to log_path.  With die_with_parent and a
    launcher, the fork happens on the launcher's long-lived thread so the
    parent-death signal fires only when the harness dies.
    """

    def __init__(self, argv: list[str], env: dict[str, str], log_path: str,
                 user: str | None = None, pass_fds: tuple[int, ...] = (),
                 die_with_parent: bool = True, cwd: str | None = None,
                 launcher: Launcher | None = None, netns: str | None = None) -> None:
        self.argv = argv
        self.netns = netns
        self.env = env
        self.log_path = log_path
        self.user = user
        self.pass_fds = pass_fds
        self.die_with_parent = die_with_parent
        self.cwd = cwd
        self.launcher = launcher
        self.proc: subprocess.Popen[Any] | None = None
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
        self.create_time = process_create_time(self.proc.pid)

    def _launch(self) -> subprocess.Popen[Any]:
        with open(self.log_path, "ab") as out:
            return spawn(self.argv, env=self.env, user=self.user, cwd=self.cwd,
                         stdout=out, stderr=out, pass_fds=self.pass_fds,
                         with_parent=self.die_with_parent, core_dumps=True, netns=self.netns)

    def running(self) -> bool:
        """True while the child has not exited (reaps it if it has)."""
        return self.proc is not None and self.proc.poll() is None

    def returncode(self) -> int | None:
        """The exit status once exited (negative = killed by that signal)."""
        return self.proc.poll() if self.proc else None

    def wait_ready(self, check: Callable[[], bool], timeout: float,
                   interval: float = 0.005) -> tuple[bool, ReadyWait]:
        """Poll check() until it is true; fail fast if the child exits.

        Returns (ready, reason): ReadyWait.READY (``""``), EXITED or TIMEOUT.
        """
        deadline = time.monotonic() + timeout
        while True:
            if not self.running():
                return False, ReadyWait.EXITED
            if check():
                return True, ReadyWait.READY
            if time.monotonic() >= deadline:
                return False, ReadyWait.TIMEOUT
            time.sleep(interval)

    def wait(self, timeout: float) -> bool:
        """Wait for the child to exit (and reap it); True if it did within timeout."""
        return self.proc is None or wait_exit(self.proc, timeout)

    def send(self, sig: int) -> None:
        """Send a signal to the child's process group (nothing once it has exited)."""
        if self.proc is not None and self.proc.poll() is None:
            signal_pid(self.proc.pid, sig)

    def kill(self, timeout: float = KILL_TIMEOUT) -> StopResult:
        """SIGKILL the process group and reap the child: the policy's last step alone."""
        return self.stop(0, timeout)

    def stop(self, term_timeout: float = 10.0, kill_timeout: float = KILL_TIMEOUT,
             request: Callable[[float], bool] | None = None) -> StopResult:
        """:func:`stop_policy`: SIGCONT, request (else SIGTERM), wait up to term_timeout,
        then SIGKILL; term_timeout 0 kills at once."""
        if self.proc is None:
            return StopResult.GONE
        return stop_child(self.proc, term_timeout, kill_timeout, request)
