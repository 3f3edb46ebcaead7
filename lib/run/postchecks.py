"""What the runner checks around each test besides its own assertions: the
error-log warnings check, valgrind's reports, and ``--gendata`` loads before it.

Each check returns the failure text ('' when fine); the attempt pipeline
(lib/run/attempt.py) turns a non-empty one into a failed test.
"""
from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Sequence

from ..checks import errorlog, valgrind
from ..platform.logsetup import get_logger
from ..platform.logtail import tail_file
from ..servers.faultwindows import PEER, TARGET, FaultWindow
from ..servers.server import Server

if TYPE_CHECKING:
    from ..servers.wrappers import ServerWrapper
    from ..suites.context import BotSetup


def warnings_problem(marks: errorlog.LogMarks, servers: Iterable[Server],
                     suppressions: Iterable[str]) -> str:
    """The [ERROR]/[Warning] lines servers logged since their last check, minus the
    global, suite and test suppressions and the lines of a fault class inside that
    fault's window on the server ('' when none).  The servers' fault windows are
    forgotten once judged."""
    servers = list(servers)
    try:
        patterns = errorlog.compile_suppressions(list(suppressions))
    except re.error as exc:
        forget_fault_windows(servers)
        return f"error log warnings: a suppression is not a regular expression: {exc}"
    found: dict[str, tuple[str, list[str]]] = {}
    log = get_logger()
    for server in servers:
        judged = errorlog.judge(marks.new_text(server), patterns, windows_seen_by(server, servers))
        for line, window, fault_class in judged.excused:
            log.debug(f"warnings check: {server.name}: excused by {window.describe()} "
                      f"({fault_class.name}): {line}")
        if judged.failing:
            found[server.name] = (server.paths.error_log, judged.failing)
    forget_fault_windows(servers)
    return errorlog.report(found) if found else ""


def warnings_fail(check_warnings: bool | None, module_default: bool) -> bool:
    """Whether a test's new error-log lines fail it: ``--check-warnings`` (True) fails
    every test on them; by default (None) the test's own rule decides (the loader's
    ``TestSpec.check_warnings``: new-style modules fail, kewpie 2012's are only
    reported unless their suite_config.py sets ``check_warnings = True``);
    ``--no-check-warnings`` (False) neither checks nor reports."""
    if check_warnings is None:
        return module_default
    return check_warnings


def warnings_note(found: str) -> str:
    """The error-log lines of a test they do not fail (a kewpie 2012 module), as
    reported after its row."""
    return ("error log lines, reported, not failed (kewpie 2012 judged only the unittest "
            "result; check_warnings = True in suite_config.py or --check-warnings fails on "
            "them):\n" + found.split("\n", 1)[1])


def windows_seen_by(server: Server, servers: Sequence[Server]) -> list[FaultWindow]:
    """server's fault windows, plus a peer's copy of every target window of another member
    of its group (``Server.shares_group``): a Galera node a test stopped opens a window
    only on itself, and the others see it leave as peers."""
    windows = server.fault_windows.all()
    for other in servers:
        if other is not server and server.shares_group(other):
            windows += [replace(w, server=server.name, role=PEER)
                        for w in other.fault_windows.all() if w.role == TARGET]
    return windows


def forget_fault_windows(servers: Iterable[Server]) -> None:
    """Drop the servers' fault windows (after their test's lines were judged)."""
    for server in servers:
        server.fault_windows.clear()


def valgrind_problem(servers: Iterable[Server], seen: set[str]) -> str:
    """Reports of valgrind logs that finished since the last check and count errors
    ('' when none); seen collects the logs already judged."""
    parts = []
    for server in servers:
        for path in valgrind.valgrind_logs(server.paths.logdir):
            if path in seen:
                continue
            count = valgrind.errors_in(path)
            if count is None:
                continue  # still running, or killed -9 before it could report
            seen.add(path)
            if count:
                parts.append(f"valgrind: {server.name} reported {count} error(s) "
                             f"({os.path.basename(path)}, kept in the evidence):\n"
                             f"{valgrind.report(path)}")
    return "\n".join(parts)


def debugger_problems(wrapper: ServerWrapper | None, servers: Iterable[Server], seen: set[str],
                      failed: bool) -> list[str]:
    """What the servers' debugger found: valgrind's new reports, and on a failed test
    the gdb report of a server that stopped on a signal (--gdb)."""
    servers = list(servers)
    problems = [valgrind_problem(servers, seen)]
    if failed and wrapper is not None and wrapper.kind == "gdb":
        for server in servers:
            if "received signal" in tail_file(server.paths.stdout_log, 400):
                problems.append(f"--gdb: {server.name} stopped on a signal; gdb's report "
                                f"with every thread's backtrace: {server.paths.stdout_log} "
                                f"(evidence: {server.name}/stdout.log)")
    return [p for p in problems if p]


def load_gendata(setup: BotSetup, servers: list[Server], pairs: Iterable[tuple[int, int]],
                 server_type: str) -> str:
    """--gendata: load the file into schema test of every server that is no replica
    (the first node of a cluster); the failure text, '' when loaded."""
    from ..randgen.api import randgen_load
    replicas = {b for _, b in pairs}
    targets = servers[:1] if server_type == "galera" else \
        [s for i, s in enumerate(servers) if i not in replicas]
    for server in targets:
        result = randgen_load(setup.log_dir, setup.tools.randgen, server, None,
                              setup.config.tools.gendata, 1000, 1, 3600.0, setup.seed, "test")
        if not result.ok:
            return f"--gendata {setup.config.tools.gendata} failed on {server.name}:\n{result.summary()}"
    return ""
