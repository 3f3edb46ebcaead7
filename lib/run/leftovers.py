"""Processes a test leaves behind: found by the test's tag, reported, stopped by pid.

While a test runs, whatever it starts carries ``KEWPIE_TEST=<run>/<bot>/<n>``
in its environment (:data:`lib.platform.process.TAG_TEST`) besides the run's
own tags (workdir, run, bot): for a kewpie test module, the tags are in the
bot process's environment while the module runs (``subprocess.Popen`` and
kewpie's tools inherit them, daemons and processes in a session of their own
too); for a mysql-test case, in mariadb-test's environment (its ``--exec``
children inherit them); for a pytest test, in the pytest process's environment
while its call runs (not its fixtures: a wider one may outlive the test).  Servers are not tagged with it: kewpie starts them
with the environment it chose for them, and stops them itself.

After the test, every live process with the test's tag that does not end
within a short grace (a client whose server connection the test just killed
is still on its way out) is a leftover.  Each is stopped by its pid (SIGTERM, a bounded wait, SIGKILL -- never by name) and
reported with its pid and command line.  A suite that keeps a process on
purpose names it in ``kept_processes`` (``suite_config.py``, matched against
the process's name, e.g. ``['sleep']``): such a process is neither reported
nor stopped at the test's end; the run's end stops it (by its run tag).
"""
from __future__ import annotations

import os
import shlex
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping

from ..platform.process import (TAG_BOT, TAG_RUN, TAG_TEST, TAG_WORKDIR, reap_if_child,
                                stop_foreign, tagged_processes, wait_pid_gone)

if TYPE_CHECKING:   # psutil is loaded only when a test left a process (tagged_processes)
    import psutil

RUN_TAGS = (TAG_WORKDIR, TAG_RUN, TAG_BOT)
EXIT_GRACE = 5.0   # seconds a tagged process has to end on its own after the test
TERM_GRACE = 5.0   # seconds a leftover has to end after SIGTERM before SIGKILL
COMMAND_WIDTH = 200


@dataclass(frozen=True)
class Leftover:
    """One process a test left running: its pid, name and command line."""

    pid: int
    name: str
    command: str

    def describe(self) -> str:
        """``pid 1234 (sleep 1000)``."""
        return f"pid {self.pid} ({self.command})"


def tags_for_test(run_tags: Mapping[str, str], value: str) -> dict[str, str]:
    """The tags a test's processes get: the run's (workdir, run, bot) and the test's own."""
    tags = {name: run_tags[name] for name in RUN_TAGS if run_tags.get(name)}
    tags[TAG_TEST] = value
    return tags


@contextmanager
def tagged_environment(tags: Mapping[str, str]) -> Iterator[None]:
    """os.environ holds tags while the block runs (what the test starts inherits them);
    the previous values come back afterwards."""
    previous = {name: os.environ.get(name) for name in tags}
    os.environ.update(tags)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _describe(proc: psutil.Process) -> Leftover | None:
    import psutil
    try:
        name = proc.name()
        command = shlex.join(proc.cmdline()) or name
    except psutil.Error:
        return None
    if len(command) > COMMAND_WIDTH:
        command = command[:COMMAND_WIDTH] + "..."
    return Leftover(proc.pid, name, command)


def collect_leftovers(value: str, kept: Iterable[str] = (), exclude: Iterable[int] = (),
                      grace: float = EXIT_GRACE) -> list[Leftover]:
    """Stop (by pid) every process tagged with the test's value that is still alive
    after grace seconds, except those whose name is in kept and the pids in exclude;
    returns what was stopped."""
    kept_names = set(kept)
    skip = set(exclude)
    candidates: list[tuple[psutil.Process, Leftover, float]] = []
    for proc in tagged_processes(TAG_TEST, value):
        import psutil   # tagged_processes has loaded it for what it found
        if proc.pid in skip:
            continue
        left = _describe(proc)
        if left is None or left.name in kept_names:
            continue
        try:
            candidates.append((proc, left, proc.create_time()))
        except psutil.Error:
            continue
    deadline = time.monotonic() + grace
    found = []
    for proc, left, create_time in candidates:
        reap_if_child(proc.pid)
        if wait_pid_gone(proc.pid, max(0.0, deadline - time.monotonic()), create_time):
            reap_if_child(proc.pid)
            continue  # it ended on its own
        found.append(left)
        stop_foreign(proc.pid, create_time, term_timeout=TERM_GRACE)
        reap_if_child(proc.pid)
    return found


def leftover_report(left: list[Leftover], can_keep: bool = True) -> str:
    """The result's text for processes a test left running ('' when none); can_keep: say
    how a suite keeps one on purpose (kewpie suites; mysql-test suites cannot)."""
    if not left:
        return ""
    hint = ("a test stops what it starts; a suite that keeps a process on purpose names it "
            "in kept_processes in suite_config.py" if can_keep else
            "a test stops what it starts")
    return (f"the test left {len(left)} process(es) running, stopped by kewpie: "
            f"{'; '.join(p.describe() for p in left)} ({hint})")
