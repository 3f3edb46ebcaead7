"""The parts of a Server (layout, logs, health, lifecycle template) and the
public stop/pause methods other code uses instead of reaching into it.

Covers: lib/servers/server.py, lib/servers/layout.py, lib/servers/logs.py,
lib/servers/health.py, lib/servers/lifecycle.py, lib/servers/sql.py
"""
import os
import signal
import socket

import pytest

from lib.errors import ServerStartError
from lib.platform.lifecycle import ReadyWait, StopResult
from lib.platform.ports import PortLease
from lib.servers.codetree import CodeTree
from lib.servers.health import Health, HealthState, unanswered_health
from lib.servers.layout import ServerLayout, socket_path
from lib.servers.lifecycle import HasLogs, Killable, Pausable, Startable, Stoppable
from lib.servers.logs import ErrorLog
from lib.servers.server import Server, ServerSettings
from tests.parsed import parsed


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
    assert s.paths.vardir == str(tmp_path / "var_s0") and s.paths.datadir.endswith("/data")
    with pytest.raises(AttributeError):
        s.paths = s.paths
    with pytest.raises(AttributeError):
        s.paths.datadir = "/elsewhere"


def test_layout_make_dirs_with_extra(tmp_path):
    lay = ServerLayout.under(str(tmp_path / "v"), "/tmp", 1, (str(tmp_path / "v" / "sst"),))
    lay.make_dirs()
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


def _scripted(tmp_path, script: str) -> Server:
    """A server whose program is a shell script (no SQL: it never answers a ping)."""
    program = tmp_path / "fake-mariadbd"
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(0o755)
    tree = CodeTree(basedir="/usr", tools={"server": str(program)})
    lease = PortLease(first=free_port(), size=1, lock_path=str(tmp_path / "l.lock"), fd=-1)
    settings = ServerSettings(user=None, env=dict(os.environ), die_with_parent=True)
    return Server("s0", 0, tree, str(tmp_path / "var_s0"), lease, [], settings)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_start_fails_fast_when_the_process_exits(tmp_path):
    server = _scripted(tmp_path, "exit 3")
    server.paths.make_dirs()
    with pytest.raises(ServerStartError, match="exited with status 3 while starting"):
        server.start(timeout=30)
    assert os.path.isfile(server.paths.cnf_path) and server.start_count == 1


def test_a_server_that_never_answers_is_killed_at_its_timeout(tmp_path):
    server = _scripted(tmp_path, "exec sleep 30")
    server.paths.make_dirs()
    server.start(wait=False)
    assert server.is_alive()
    with pytest.raises(ServerStartError, match="did not answer within 0.3s"):
        server.wait_ready(timeout=0.3)
    assert not server.is_alive() and server.executor is not None
    assert server.executor.returncode() == -signal.SIGKILL


def test_the_pre_start_check_refuses_a_port_in_use(tmp_path):
    server = _scripted(tmp_path, "exec sleep 30")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", server.port))
        sock.listen()
        with pytest.raises(ServerStartError, match="already in use"):
            server.start()
    assert server.executor is None


def test_server_has_the_capabilities(tmp_path):
    s = _server(tmp_path)
    for protocol in (Startable, Stoppable, Killable, Pausable, HasLogs):
        assert isinstance(s, protocol), protocol.__name__


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


def test_a_starting_servers_probe_waits_for_its_handshake_until_the_deadline(monkeypatch,
                                                                            tmp_path):
    """mariadbd has its socket before it takes connections: the readiness probe's handshake
    may wait until the start's deadline (a probe that gave up on it would leave an
    'Aborted connection ... without authentication' warning); a health probe of a running
    server waits PROBE_TIMEOUT."""
    import time

    import pymysql

    from lib.servers.sql import PROBE_TIMEOUT, handshake_wait
    seen = []

    def connect(**params):
        seen.append(params)
        raise pymysql.OperationalError(2013, "Lost connection to MySQL server during query")
    monkeypatch.setattr(pymysql, "connect", connect)
    server = _server(tmp_path)
    server.paths.make_dirs()
    open(server.paths.socket_file, "w").close()
    server._ready_by = time.monotonic() + 300  # what _await_ready sets: its deadline
    assert not server._ready()
    assert 290 < seen[-1]["read_timeout"] <= 300 and seen[-1]["connect_timeout"] > 290
    assert not server.sql.ping()
    assert seen[-1]["read_timeout"] == seen[-1]["connect_timeout"] == PROBE_TIMEOUT
    assert handshake_wait(time.monotonic() - 5) == PROBE_TIMEOUT  # never below it


def test_the_lost_connection_codes_are_defined_once():
    """One list of the client's lost-connection errors (lib/servers/sql.py), which the
    loads (lib/randgen/connection.py) and the wrong-result oracles read as it is."""
    import ast

    from tests.conftest import ROOT
    from lib.hunt.wrongresult import execute
    from lib.randgen import connection
    from lib.servers import sql
    assert connection.LOST_CONNECTION_CODES is sql.LOST_CONNECTION_CODES
    assert execute.LOST_CONNECTION_CODES is sql.LOST_CONNECTION_CODES
    assert sql.LOST_CONNECTION_CODES == {2002, 2003, 2006, 2013, 2055}
    defined = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "lib")):
        for name in files:
            path = os.path.join(dirpath, name)
            if name.endswith(".py"):
                tree = parsed(path)
                defined += [os.path.relpath(path, ROOT) for node in ast.walk(tree)
                            if isinstance(node, ast.Assign)
                            and any(getattr(t, "id", "") == "LOST_CONNECTION_CODES"
                                    for t in node.targets)]
    assert defined == ["lib/servers/sql.py"]
