"""The parts of a Server (layout, logs, health, lifecycle template) and the
public stop/pause methods other code uses instead of reaching into it.

Covers: lib/servers/server.py, lib/servers/layout.py, lib/servers/logs.py,
lib/servers/health.py, lib/servers/lifecycle.py, lib/servers/sql.py
"""
import os
import signal

import pytest

from lib.errors import ServerStartError
from lib.platform.lifecycle import ReadyWait, StopResult
from lib.platform.ports import PortLease
from lib.servers.codetree import CodeTree
from lib.servers.health import Health, HealthState, unanswered_health
from lib.servers.layout import ServerLayout, socket_path
from lib.servers.lifecycle import HasLogs, Killable, Pausable, Startable, Stoppable, start_process
from lib.servers.logs import ErrorLog
from lib.servers.server import Server, ServerSettings


class FakeExecutor:
    """Stands in for ProcessExecutor: records signals, exits on SIGTERM/SIGKILL if told to."""

    def __init__(self, exits_on_term=True, ready_reason=ReadyWait.READY):
        self.pid, self.create_time, self.alive = 4242, 1.0, True
        self.exits_on_term, self.ready_reason, self.signals = exits_on_term, ready_reason, []

    def running(self):
        return self.alive

    def wait(self, timeout):
        return not self.alive

    def send(self, sig):
        self.signals.append(sig)
        if sig == signal.SIGTERM and self.exits_on_term:
            self.alive = False

    def kill(self):
        self.signals.append(signal.SIGKILL)
        self.alive = False

    def returncode(self):
        return None if self.alive else -15

    def wait_ready(self, check, timeout):
        return self.ready_reason.ready, self.ready_reason


def _server(tmp_path, cls=Server):
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd"})
    lease = PortLease(first=47200, size=4, lock_path=str(tmp_path / "l.lock"), fd=-1)
    settings = ServerSettings(user=None, env={}, die_with_parent=True)
    server = cls("s0", 0, tree, str(tmp_path / "var_s0"), lease, [], settings)
    return server


def test_layout_paths_and_socket_fallback(tmp_path):
    lay = ServerLayout.under("/v/var_s0", "/short", 47200)
    assert (lay.datadir, lay.error_log, lay.pid_file) == (
        "/v/var_s0/data", "/v/var_s0/log/error.log", "/v/var_s0/run/my.pid")
    assert socket_path("/x" * 60, "/short", 47200) == "/short/kw-47200.sock"


def test_server_paths_come_from_its_layout_and_are_read_only(tmp_path):
    s = _server(tmp_path)
    assert s.datadir == s.layout.datadir and s.vardir == str(tmp_path / "var_s0")
    with pytest.raises(AttributeError):
        s.datadir = "/elsewhere"


def test_layout_make_dirs_with_extra(tmp_path):
    lay = ServerLayout.under(str(tmp_path / "v"), "/tmp", 1)
    lay.make_dirs(None, extra=(str(tmp_path / "v" / "sst"),))
    assert all((tmp_path / "v" / d).is_dir() for d in ("log", "tmp", "run", "sst"))


def test_error_log_mark_since_tail(tmp_path):
    log = ErrorLog(str(tmp_path / "error.log"))
    assert log.size() == 0 and log.since(0) == "" and "is empty" in log.tail_or_note()
    (tmp_path / "error.log").write_text("one\n")
    mark = log.size()
    with open(tmp_path / "error.log", "a") as fh:
        fh.write("two\n")
    assert log.since(mark) == "two\n" and log.tail(1) == "two"


def test_unanswered_health_states():
    assert unanswered_health("s0", 1, True, False, None).state is HealthState.HUNG
    assert unanswered_health("s0", 1, False, True, 0).state is HealthState.STOPPED
    crashed = unanswered_health("s0", 1, False, False, -9)
    assert crashed.state == "crashed" and crashed.state.dead and "signal 9" in crashed.message
    assert Health(HealthState.OK, "").ok


class Steps:
    def __init__(self, reason):
        self.calls, self.reason = [], reason

    def pre_start_check(self):
        self.calls.append("check")

    def launch(self, extra_args):
        self.calls.append(("launch", extra_args))
        return FakeExecutor(ready_reason=self.reason)

    def ready(self):
        return True

    def start_failed(self, why, timeout):
        self.calls.append(("failed", why))
        raise ServerStartError(str(why))


def test_start_template_order_and_fail_fast():
    ok = Steps(ReadyWait.READY)
    start_process(ok, 1.0, extra_args=("--x",))
    assert ok.calls == ["check", ("launch", ("--x",))]
    exited = Steps(ReadyWait.EXITED)
    with pytest.raises(ServerStartError):
        start_process(exited, 1.0)
    assert exited.calls[-1] == ("failed", ReadyWait.EXITED)
    nowait = Steps(ReadyWait.TIMEOUT)
    start_process(nowait, 1.0, wait=False)
    assert len(nowait.calls) == 2


def test_server_has_the_capabilities(tmp_path):
    s = _server(tmp_path)
    for protocol in (Startable, Stoppable, Killable, Pausable, HasLogs):
        assert isinstance(s, protocol), protocol.__name__


def test_server_start_failure_reports_exit(tmp_path):
    s = _server(tmp_path)
    s.executor = FakeExecutor()
    s.executor.alive = False
    with pytest.raises(ServerStartError, match="exited with status -15"):
        s.start_failed(ReadyWait.EXITED, 5)


def test_stop_without_process_is_gone(tmp_path):
    s = _server(tmp_path)
    assert s.stop() is StopResult.GONE and s.stop_requested
    assert s.health().state is HealthState.STOPPED


def test_paused_resumes_even_on_error(tmp_path):
    s = _server(tmp_path)
    s.executor = FakeExecutor()
    with pytest.raises(RuntimeError):
        with s.paused():
            assert s.executor.signals == [signal.SIGSTOP]
            raise RuntimeError
    assert s.executor.signals == [signal.SIGSTOP, signal.SIGCONT]


def test_server_and_lease_are_context_managers(tmp_path):
    s = _server(tmp_path)
    calls = []
    s.start = lambda: calls.append("start")
    s.stop = lambda: calls.append("stop")
    with s as same:
        assert same is s
    assert calls == ["start", "stop"]
    fd = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT)
    lease = PortLease(first=1, size=1, lock_path="x", fd=fd)
    with lease:
        assert lease.held
    assert not lease.held


def test_socket_connections_skip_tls_unless_asked(monkeypatch):
    """Over the unix socket no SSL context is built (~35 ms each); ssl* arguments and
    TCP keep PyMySQL's own behaviour."""
    import pymysql

    from lib.servers.sql import SqlClient
    seen = []
    monkeypatch.setattr(pymysql, "connect", lambda **params: seen.append(params))
    client = SqlClient("s0", "/tmp/x.sock", 3306, lambda: True, lambda: "")
    client.connect()
    client.connect(ssl_ca="/ca.pem")
    client.connect_tcp()
    assert seen[0]["ssl_disabled"] is True
    assert "ssl_disabled" not in seen[1] and "ssl_disabled" not in seen[2]
