"""kewpie 2012's server and manager wrappers (lib/kewpie2012/wrapper.py, lib/kewpie2012/server_compat.py,
lib/kewpie2012/manager_compat.py): the 2012 names over a modern server, everything else
delegated, equality and identity as 2012 code expects.

Covers: lib/kewpie2012/wrapper.py, lib/kewpie2012/server_compat.py, lib/kewpie2012/manager_compat.py
"""
import pytest

from lib.errors import ServerStartError
from lib.platform.ports import PortLease
from lib.servers.codetree import CodeTree, ServerVersion
from lib.servers.options import parse_options
from lib.servers.server import Server, ServerSettings
from lib.kewpie2012.manager_compat import Kewpie2012Manager
from lib.kewpie2012.server_compat import Kewpie2012Server, ServerWrappers
from lib.kewpie2012.wrapper import unwrap

VERSION = ServerVersion("10.11.19", "-MariaDB", "debian-linux-gnu", "x86_64", "Debian 12")


def _server(tmp_path, name="s0", first=47200):
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd",
                                           "dump": "/usr/bin/mariadb-dump",
                                           "client": "/usr/bin/mariadb",
                                           "admin": "/usr/bin/mariadb-admin"}, version=VERSION)
    lease = PortLease(first=first, size=4, lock_path=str(tmp_path / f"{name}.lock"), fd=-1)
    settings = ServerSettings(user=None, env={}, die_with_parent=True,
                              socket_fallback_dir=str(tmp_path / "sock"))
    return Server(name, 0, tree, str(tmp_path / f"var_{name}"), lease,
                  parse_options(["--max-connections=77"]), settings)


def test_2012_names_are_views_of_the_modern_ones(tmp_path):
    server = _server(tmp_path)
    old = Kewpie2012Server(server)
    assert old.master_port == server.port == 47200
    assert old.cnf_file == server.paths.cnf_path
    assert (old.vardir, old.datadir, old.error_log) == (
        server.paths.vardir, server.paths.datadir, server.paths.error_log)
    assert (old.type, old.basedir, old.status) == ("mysql", "/usr", 0)
    assert (old.mysqldump, old.mysql_client, old.mysqladmin) == (
        "/usr/bin/mariadb-dump", "/usr/bin/mariadb", "/usr/bin/mariadb-admin")
    assert old.version == "10.11.19-MariaDB"
    assert old.server_options == ["--max-connections=77"]
    assert old.get_pid() is None and old.dump_errlog() == ""
    assert hasattr(old.logging, "test_debug")


def test_every_other_name_is_the_servers(tmp_path):
    server = _server(tmp_path)
    old = Kewpie2012Server(server)
    assert old.paths is server.paths and old.name == "s0"
    assert old.effective_options() == server.effective_options()
    old.harness_options = parse_options(["--log-bin"])  # a modern name: written to the server
    assert server.harness_options == old.harness_options
    old.client_init_command = "SET NAMES latin1"  # a 2012 name: the wrapper's own
    assert not hasattr(server, "client_init_command")
    with pytest.raises(AttributeError):
        old.master_port = 1  # read-only, and never a stray attribute on the server
    assert not hasattr(server, "master_port")
    assert {"master_port", "execute", "datadir", "paths"} <= set(dir(old))
    assert repr(old) == repr(server)


def test_a_wrapper_equals_and_hashes_as_its_server(tmp_path):
    s0, s1 = _server(tmp_path), _server(tmp_path, "s1", 47210)
    w0, w1 = Kewpie2012Server(s0), Kewpie2012Server(s1)
    assert w0 == s0 and s0 == w0 and w0 != s1 and w0 != w1
    assert hash(w0) == hash(s0) and s0 in {w0} and w0 in {s0}
    assert [w0, w1].index(s1) == 1 and [s0, s1].index(w1) == 1
    assert unwrap(w0) is s0 and unwrap(s0) is s0


def test_wrappers_hands_out_one_wrapper_per_server(tmp_path):
    s0, s1 = _server(tmp_path), _server(tmp_path, "s1", 47210)
    wrappers = ServerWrappers()
    w0 = wrappers.wrap(s0)
    assert wrappers.wrap(s0) is w0 and wrappers.wrap(w0) is w0
    assert wrappers.wrap_all([s0, s1]) == [w0, wrappers.wrap(s1)]
    assert wrappers.wrap_all([s0, s1])[1] is wrappers.wrap(s1)


class FakeServer:
    """Records the lifecycle calls the 2012 methods make."""

    def __init__(self, name, fails=False):
        self.name, self.fails, self.calls = name, fails, []
        self.alive = True

    def start(self, timeout=None, wait=True, extra_args=(), **kwargs):
        self.calls.append(("start", kwargs))
        if self.fails:
            raise ServerStartError(f"{self.name} did not start")
        self.alive = True

    def stop(self):
        self.calls.append(("stop",))
        self.alive = False

    def restart(self, options=None):
        self.calls.append(("restart", options))

    def kill(self):
        self.calls.append(("kill",))
        self.alive = False

    def is_alive(self):
        return self.alive


class FakeManager:
    def __init__(self, servers):
        self.servers = servers
        self.bot_name = "bot0"
        self.reset_asked = False

    def request_reset(self):
        self.reset_asked = True


def test_start_keeps_2012_return_codes_and_passes_modern_keywords():
    good, bad = FakeServer("s0"), FakeServer("s1", fails=True)
    assert Kewpie2012Server(good).start(working_environ={}, new_cluster=True) == 0
    assert good.calls == [("start", {"new_cluster": True})]
    assert Kewpie2012Server(bad).start(expect_fail=True) == 1
    with pytest.raises(ServerStartError):
        Kewpie2012Server(bad).start()
    assert Kewpie2012Server(good).die() == 0 and good.calls[-1] == ("kill",)


def test_restore_snapshot_stops_and_copies_the_pristine_datadir():
    server, restored = FakeServer("s0"), []
    Kewpie2012Server(server, restored.append).restore_snapshot()
    assert server.calls == [("stop",)] and restored == [server]
    with pytest.raises(RuntimeError, match="no pristine datadir"):
        Kewpie2012Server(server).restore_snapshot()


def test_manager_2012_methods():
    s0, s1 = FakeServer("s0"), FakeServer("s1", fails=True)
    modern = FakeManager([s0, s1])
    wrappers = ServerWrappers()
    manager = Kewpie2012Manager(modern, wrappers)
    servers = manager.servers
    assert servers == [s0, s1] and servers[0] is wrappers.wrap(s0)  # the module's objects
    assert manager.bot_name == "bot0" and unwrap(manager) is modern
    assert manager.stop_server(servers[0]) == 0 and s0.calls == [("stop",)]
    assert manager.start_server(servers[0], None, {}, 0) == 0 and not s0.calls[-1][1]
    assert manager.start_server(s1, expect_fail=True) == 1
    assert manager.start_servers(expect_fail=True) == 1
    manager.restart_server(servers[0], ["--x=1"])
    assert s0.calls[-1] == ("restart", ["--x=1"])
    assert manager.stop_servers() == 0 and not s0.alive
    manager.reset_servers("bot0")
    assert modern.reset_asked
