"""The one stop path: every stop, kill and leftover sweep goes through the platform's
stop policy (SIGCONT, the request to exit -- a server's SQL SHUTDOWN, else SIGTERM --, a
bounded wait, SIGKILL), shown on real processes: a paused server stops at SIGTERM
instead of waiting for SIGKILL, what a server left behind is found by its tag and
stopped with it, several leftovers share one bound, a kill is the policy's last step.

Covers: lib/platform/process.py (stop_policy, stop_foreign_all, stop_tagged),
lib/platform/workers.py (stop_workers), lib/servers/server.py (stop, kill, discard),
lib/servers/manager.py (stop_all), lib/run/environment.py (leftovers at close)
"""
from __future__ import annotations

import os
import shutil
import signal
import time

import pytest

from lib.platform.lifecycle import StopResult
from lib.platform.ports import PortLease
from lib.platform.process import (TAG_NAME, ProcessExecutor, spawn, stop_foreign_all,
                                  stop_policy, stop_tagged, tagged_processes, wait_exit)
from lib.servers.codetree import CodeTree
from lib.servers.manager import stop_all
from lib.servers.server import Server, ServerSettings

SH = shutil.which("sh")
# a process that ignores SIGTERM (its sleep too: it is started after the trap)
STUBBORN = "trap '' TERM; : > \"$READY\"; while :; do sleep 1; done"


class Recorder:
    """The policy's steps as a log: what was sent, asked and waited for."""

    def __init__(self, exits_on: set[str], request_taken: bool | None = None) -> None:
        self.steps: list[str] = []
        self.alive = True
        self.exits_on = exits_on
        self.request_taken = request_taken

    def send(self, sig: int) -> None:
        name = signal.Signals(sig).name
        self.steps.append(name)
        if name in self.exits_on:
            self.alive = False

    def request(self, timeout: float) -> bool:
        self.steps.append("request")
        assert self.request_taken is not None
        if self.request_taken:
            self.alive = False
        return self.request_taken

    def wait_gone(self, timeout: float) -> bool:
        self.steps.append("wait")
        return not self.alive


@pytest.mark.parametrize("exits_on, taken, expected, how", [
    ({"SIGTERM"}, None, ["SIGCONT", "SIGTERM", "wait"], StopResult.TERMINATED),
    (set(), True, ["SIGCONT", "request", "wait"], StopResult.SHUTDOWN),
    ({"SIGTERM"}, False, ["SIGCONT", "request", "SIGTERM", "wait"], StopResult.TERMINATED),
    ({"SIGKILL"}, None, ["SIGCONT", "SIGTERM", "wait", "SIGKILL", "wait"], StopResult.KILLED),
])
def test_the_policy_continues_asks_waits_then_kills(exits_on, taken, expected, how):
    rec = Recorder(exits_on, taken)
    got = stop_policy(lambda: rec.alive, rec.send, rec.wait_gone, 1.0,
                      request=rec.request if taken is not None else None)
    assert (rec.steps, got) == (expected, how)


def test_a_kill_is_the_policys_last_step_alone():
    rec = Recorder({"SIGKILL"}, True)
    assert stop_policy(lambda: rec.alive, rec.send, rec.wait_gone, 0,
                       request=rec.request) is StopResult.KILLED
    assert rec.steps == ["SIGKILL", "wait"]
    assert stop_policy(lambda: False, rec.send, rec.wait_gone, 1.0) is StopResult.GONE


def _server(tmp_path, cls=Server, name="s0") -> Server:
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd"})
    lease = PortLease(first=47200, size=4, lock_path=str(tmp_path / f"{name}.lock"), fd=-1)
    settings = ServerSettings(user=None, env={}, die_with_parent=True)
    return cls(name, 0, tree, str(tmp_path / f"var_{name}"), lease, [], settings)


def _run(server: Server, script: str) -> None:
    """The server's process is script (no SQL: its SHUTDOWN is refused, as a joiner's in SST)."""
    env = dict(os.environ, **{TAG_NAME: server.paths.vardir})
    os.makedirs(server.paths.vardir, exist_ok=True)
    server.executor = ProcessExecutor([SH, "-c", script], env,
                                      os.path.join(server.paths.vardir, "out.log"),
                                      die_with_parent=False)
    server.executor.start()


def _helper(server: Server, script: str = "sleep 30", traps: bool = False):
    """A process the server 'started' and left behind: its tag, not its group.  Returned
    once the sweep can see it: until the child has exec'ed, its /proc environ is still
    the test's own, without the tag (a stop in that window misses it: a CI failure)."""
    ready = os.path.join(server.paths.vardir, "helper.ready")
    if os.path.exists(ready):
        os.unlink(ready)
    proc = spawn([SH, "-c", script],
                 env=dict(os.environ, READY=ready, **{TAG_NAME: server.paths.vardir}))
    deadline = time.monotonic() + 30
    while proc.pid not in {p.pid for p in tagged_processes(TAG_NAME, server.paths.vardir)}:
        assert time.monotonic() < deadline, "the helper never showed its tag"
        time.sleep(0.01)
    if traps:
        while not os.path.exists(ready):   # its trap is set
            assert time.monotonic() < deadline, "the helper never set its trap"
            time.sleep(0.01)
    return proc


def test_a_paused_server_stops_at_sigterm_not_at_sigkill(tmp_path):
    """Server.stop had no SIGCONT: a frozen server waited out the timeout for SIGKILL."""
    server = _server(tmp_path)
    _run(server, "sleep 30")
    server.pause()
    started = time.monotonic()
    assert server.stop(timeout=3) is StopResult.TERMINATED
    assert time.monotonic() - started < 2.5 and not server.is_alive()


def test_stop_and_kill_end_what_the_server_left_behind(tmp_path):
    server = _server(tmp_path)
    _run(server, "sleep 30")
    helper = _helper(server)
    try:
        assert server.stop(timeout=3) is StopResult.TERMINATED
        assert wait_exit(helper, 5) and helper.returncode == -signal.SIGTERM
        _run(server, "sleep 30")
        stubborn = _helper(server, STUBBORN, traps=True)
        server.kill()
        assert server.executor is not None and server.executor.returncode() == -signal.SIGKILL
        assert wait_exit(stubborn, 5) and stubborn.returncode == -signal.SIGKILL
    finally:
        for proc in (helper,):
            proc.kill()
            proc.wait()


def test_stop_all_fast_terminates_plain_servers_and_kills_galera_nodes(tmp_path):
    from lib.servers.galera import GaleraServer
    plain, node = _server(tmp_path), _server(tmp_path, GaleraServer, "s1")
    _run(plain, "sleep 30")
    _run(node, "sleep 30")
    stop_all([plain, node], fast=True)
    assert plain.executor is not None and plain.executor.returncode() == -signal.SIGTERM
    assert node.executor is not None and node.executor.returncode() == -signal.SIGKILL
    assert plain.stop_requested and node.stop_requested


def test_leftovers_are_stopped_together_within_one_bound(tmp_path):
    tag = f"{tmp_path}/bot0"
    readies = [str(tmp_path / f"ready{i}") for i in range(3)]
    procs = [spawn(["bash", "-c", STUBBORN], env=dict(os.environ, READY=ready, **{TAG_NAME: tag}))
             for ready in readies]
    try:
        deadline = time.monotonic() + 30
        while not all(os.path.exists(ready) for ready in readies):   # the traps are set
            assert time.monotonic() < deadline, "the stubborn processes never set their traps"
            time.sleep(0.01)
        started = time.monotonic()
        found = stop_tagged(TAG_NAME, tag, term_timeout=1.0)
        took = time.monotonic() - started
        assert {p.pid for p in procs} <= {pid for pid, _ in found}   # and their sleeps
        assert all(wait_exit(p, 5) and p.returncode == -signal.SIGKILL for p in procs)
        assert 1.0 <= took < 2.5   # one grace for all three, not one each
        deadline = time.monotonic() + 5   # a sleep the loops began during the grace
        while tagged_processes(TAG_NAME, tag) and time.monotonic() < deadline:
            time.sleep(0.05)                # died with its group's SIGKILL
        assert tagged_processes(TAG_NAME, tag) == []
        assert stop_foreign_all([(procs[0].pid, None)], 1.0) is StopResult.GONE
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
