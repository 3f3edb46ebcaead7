"""Servers started under a debugger or wrapper: valgrind, rr, gdb, gdbserver
(``--manual-gdb``), eatmydata, or any command (``--server-wrapper``).

A :class:`ServerWrapper` turns a server's command line into the wrapped one
(:meth:`ServerWrapper.wrap`) and says how much slower servers get under it
(``timeout_factor``: start, shutdown and test timeouts are multiplied).  Every
wrapper writes its output into the server's ``log/`` directory, which a failed
test's evidence keeps: ``valgrind.<pid>.log``, ``rr/`` (the trace), and gdb's
backtraces in ``stdout.log``.  The server process kewpie watches is the
wrapper's (valgrind and eatmydata become the server; rr, gdb and gdbserver
are its parent), so stopping, killing and crash detection work unchanged.
"""
from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..config import Debugging
from ..errors import UsageError
from ..platform.logsetup import get_logger

if TYPE_CHECKING:
    from .server import Server

VALGRIND_FACTOR = 10.0
RR_FACTOR = 5.0
GDB_FACTOR = 2.0
CUSTOM_FACTOR = 3.0
MANUAL_GDB_START = 3600.0  # seconds a --manual-gdb server may wait for you
# Server options under valgrind: it has no io_uring (InnoDB would hang at start), and
# cannot reserve the address space of innodb_buffer_pool_size_max's default (8 TB).
VALGRIND_SERVER_ARGS = ("--loose-innodb-use-native-aio=0",
                        "--loose-innodb-buffer-pool-size-max=256M")
SUPPRESSIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "valgrind.supp")


def _need(program: str, package: str) -> str:
    path = shutil.which(program)
    if not path:
        raise UsageError(f"{program} is not installed: apt-get install {package} "
                         f"(scripts/setup.sh installs it)")
    return path


@dataclass(frozen=True)
class ServerWrapper:
    """How servers are wrapped: ``kind`` (valgrind, rr, gdb, manual-gdb, custom, or ''
    for none) plus eatmydata, with the kind's settings."""

    kind: str = ""
    eatmydata: bool = False
    template: str = ""  # custom: 'CMD {args}'
    valgrind_options: tuple[str, ...] = ()
    suppressions: tuple[str, ...] = ()  # valgrind suppression files
    programs: dict[str, str] = field(default_factory=dict)

    @property
    def timeout_factor(self) -> float:
        """How much longer servers take to start, stop and run tests under this wrapper."""
        return {"valgrind": VALGRIND_FACTOR, "rr": RR_FACTOR, "gdb": GDB_FACTOR,
                "custom": CUSTOM_FACTOR}.get(self.kind, 1.0)

    @property
    def start_timeout(self) -> float | None:
        """A fixed start timeout (--manual-gdb waits for a person), else None."""
        return MANUAL_GDB_START if self.kind == "manual-gdb" else None

    @property
    def server_is_process(self) -> bool:
        """The watched process is mariadbd itself (valgrind and eatmydata exec into it);
        under gdb, rr, gdbserver or a custom wrapper it is the server's parent."""
        return self.kind in ("", "valgrind")

    @property
    def stop_after_test(self) -> bool:
        """Servers must stop cleanly after each test (valgrind reports leaks at exit)."""
        return self.kind == "valgrind"

    def wrap(self, server: "Server", argv: list[str]) -> list[str]:
        """The command line that runs argv (the server's) under this wrapper."""
        wrapped = getattr(self, f"_wrap_{self.kind.replace('-', '_')}")(server, argv) \
            if self.kind else list(argv)
        if self.eatmydata:
            wrapped = [self.programs["eatmydata"], *wrapped]
        return wrapped

    def _wrap_valgrind(self, server: "Server", argv: list[str]) -> list[str]:
        supp = [f"--suppressions={path}" for path in self.suppressions]
        return [self.programs["valgrind"], "--tool=memcheck", "--leak-check=full",
                "--show-leak-kinds=definite", "--errors-for-leak-kinds=definite",
                "--num-callers=30", "--gen-suppressions=all", "--error-limit=no",
                f"--log-file={os.path.join(server.paths.logdir, 'valgrind.%p.log')}",
                *supp, *self.valgrind_options, *argv, *VALGRIND_SERVER_ARGS]

    def _wrap_rr(self, server: "Server", argv: list[str]) -> list[str]:
        trace = os.path.join(server.paths.logdir, "rr", f"{server.name}-start{server.start_count + 1}")
        os.makedirs(os.path.dirname(trace), exist_ok=True)
        if server.settings.user:
            shutil.chown(os.path.dirname(trace), server.settings.user, server.settings.user)
        return [self.programs["rr"], "record", "--output-trace-dir", trace, *argv,
                "--loose-innodb-use-native-aio=0", "--loose-innodb-flush-method=fsync"]

    def _wrap_gdb(self, _server: "Server", argv: list[str]) -> list[str]:
        commands = ["set pagination off", "set confirm off", "handle SIGPIPE nostop noprint",
                    "handle SIGUSR1 nostop noprint", "handle SIGUSR2 nostop noprint", "run",
                    "info registers rip", "thread apply all bt 30"]
        ex = [arg for command in commands for arg in ("-ex", command)]
        return [self.programs["gdb"], "-batch", "-nx", "-q", "-return-child-result", *ex,
                "--args", *argv]

    def _wrap_manual_gdb(self, server: "Server", argv: list[str]) -> list[str]:
        # gdbserver itself always listens on every interface, so it talks over stdio
        # instead, behind socat on a unix socket in the vardir (root and the server
        # user may connect): nothing listens beyond this machine, no port is needed.
        sock = os.path.join(server.paths.rundir, "gdb.sock")
        script = os.path.join(server.paths.rundir, "manual-gdb.sh")
        with open(script, "w") as fh:
            fh.write("#!/bin/sh\n# written by kewpie --manual-gdb: the server under gdbserver "
                     "(stdio)\nexec " + shlex.join([self.programs["gdbserver"], "-", *argv]) + "\n")
        os.chmod(script, 0o755)
        log = get_logger()
        log.info(f"--manual-gdb: {server.name} starts when gdb connects. In another terminal run:")
        log.info(f"  gdb -q -ex 'target remote | socat - UNIX-CONNECT:{sock}' -ex continue "
                 f"{argv[0]}")
        log.info(f"  (kewpie waits up to {MANUAL_GDB_START:g}s; Ctrl-C here stops everything)")
        return [self.programs["socat"], f"UNIX-LISTEN:{sock},unlink-early,mode=0700",
                f"EXEC:{script}"]

    def _wrap_custom(self, server: "Server", argv: list[str]) -> list[str]:
        values = {"vardir": server.paths.vardir, "name": server.name}
        words = shlex.split(self.template)
        out: list[str] = []
        for word in words:
            if word == "{args}":
                out.extend(argv)
            else:
                out.append(word.format(args=shlex.join(argv), **values))
        if "{args}" not in words:
            out.extend(argv)
        return out


def valgrind_suppressions(basedir_tree_server: str, suite_files: list[str]) -> tuple[str, ...]:
    """Suppression files for valgrind: kewpie's, the code tree's mysql-test/valgrind.supp
    when installed, and the suites' own (``valgrind.supp`` beside suite_config.py)."""
    files = [SUPPRESSIONS]
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(basedir_tree_server)))
    for candidate in (os.path.join(prefix, "share", "mysql", "mysql-test", "valgrind.supp"),
                      os.path.join(prefix, "mysql-test", "valgrind.supp"),
                      os.path.join(prefix, "share", "mariadb", "mariadb-test", "valgrind.supp")):
        if os.path.isfile(candidate):
            files.append(candidate)
            break
    files.extend(f for f in suite_files if os.path.isfile(f))
    return tuple(dict.fromkeys(files))


def make_wrapper(debugging: Debugging, supp_files: tuple[str, ...] = ()) -> ServerWrapper | None:
    """The wrapper the run's debugging options ask for (None: servers run bare); UsageError when its
    program is missing or a custom template is malformed."""
    programs: dict[str, str] = {}
    kind = ("valgrind" if debugging.valgrind else "rr" if debugging.rr
            else "gdb" if debugging.gdb else "manual-gdb" if debugging.manual_gdb
            else "custom" if debugging.server_wrapper else "")
    if not kind and not debugging.libeatmydata:
        return None
    package = {"valgrind": "valgrind", "rr": "rr", "gdb": "gdb", "manual-gdb": "gdbserver"}
    if kind in package:
        program = "gdbserver" if kind == "manual-gdb" else kind
        programs[program] = _need(program, package[kind])
    if kind == "manual-gdb":
        programs["socat"] = _need("socat", "socat")
    if debugging.libeatmydata:
        programs["eatmydata"] = _need("eatmydata", "eatmydata")
    if kind == "custom":
        try:
            words = shlex.split(debugging.server_wrapper)
            for word in words:
                word.format(args="", vardir="", name="")
        except (ValueError, KeyError, IndexError) as exc:
            raise UsageError(f"--server-wrapper {debugging.server_wrapper!r}: {exc} (use "
                             f"{{args}}, {{vardir}} and {{name}})") from None
        if not words or not shutil.which(words[0]):
            raise UsageError(f"--server-wrapper {debugging.server_wrapper!r}: "
                             f"{words[0] if words else 'nothing'} is not a program on PATH")
    return ServerWrapper(kind, bool(debugging.libeatmydata), debugging.server_wrapper,
                         tuple(debugging.valgrind_options), supp_files, programs)


def rr_cannot_record(scratch_dir: str) -> str:
    """'' when ``rr record`` works on this machine, else rr's own reason in one line
    (typically no hardware performance counters in a VM, or perf_event_paranoid > 1).
    The probe records /bin/true into scratch_dir (removed afterwards)."""
    from ..platform.tools import run_tool
    os.makedirs(scratch_dir, exist_ok=True)
    trace = os.path.join(scratch_dir, "rr-probe")
    try:
        result = run_tool([_need("rr", "rr"), "record", "--output-trace-dir", trace, "/bin/true"],
                          timeout=60, tmpdir=scratch_dir)
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)
    if result.returncode == 0:
        return ""
    lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    reason = next((line for line in lines if "FATAL" in line or "perf" in line.lower()),
                  lines[-1] if lines else f"exit status {result.returncode}")
    if "]" in reason and reason.startswith("["):
        reason = reason.split("]", 1)[1].strip()  # drop rr's [FATAL file:line] prefix
    paranoid = ""
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as fh:
            paranoid = fh.read().strip()
    except OSError:
        pass
    return f"{reason} (kernel.perf_event_paranoid={paranoid or '?'})"
