"""Launching the first test's servers early: which runs may, and how a manager hands a
launched set (or the failure of its launch) to the next get_servers (fake servers and
kinds; nothing starts).

Covers: lib/modes/native/early_start.py, lib/servers/manager.py (launch, get_servers)
"""
from types import ModuleType, SimpleNamespace

import pytest

from lib.errors import ServerStartError
from lib.config import Reporting, RunConfig, Selection
from lib.modes.native.early_start import first_test
from lib.servers.manager import ServerKind, ServerManager
from lib.servers.requirements import Requirements
from lib.suites.loader import SuiteConfig
from lib.suites.loader import TestSpec as Spec

PLAIN = Requirements.declared("mysql", [[]])
OTHER = Requirements.declared("mysql", [[], []])


def _spec(reqs=PLAIN, disabled="", load_error="", skip_checks=False):
    module = ModuleType("fake_test")
    if skip_checks:
        module.skip_checks = lambda system: (True, "no")
    return Spec(suite=SuiteConfig("main", "/nowhere"), name="fake_test", path="",
                module=module, requirements=reqs, disabled=disabled, load_error=load_error)


def _env(parallel=1, shard="", start_and_exit=False):
    return SimpleNamespace(config=RunConfig(start_and_exit=start_and_exit,
                                            reporting=Reporting(parallel=parallel),
                                            selection=Selection(shard=shard)))


def test_first_test_of_a_plain_run_is_launched_early():
    spec = _spec()
    assert first_test(_env(), [spec, _spec()]) is spec


@pytest.mark.parametrize("config", [dict(parallel=2), dict(shard="1/2"),
                                    dict(start_and_exit=True)])
def test_no_early_launch_for_bots_shards_or_start_and_exit(config):
    assert first_test(_env(**config), [_spec()]) is None


@pytest.mark.parametrize("spec", [
    _spec(disabled="bug 1"), _spec(load_error="SyntaxError"), _spec(skip_checks=True),
    _spec(Requirements.declared("mysql", [[]], network="namespaces"))])
def test_no_early_launch_for_a_test_that_may_not_start_its_servers(spec):
    assert first_test(_env(), [spec]) is None


def test_no_early_launch_without_tests():
    assert first_test(_env(), []) is None


class FakeServer:
    """Records what the kind's halves did to it."""

    net = None

    def __init__(self, name, index, tree, vardir, lease, options, settings, on_change=None,
                 net=None):
        self.name, self.index = name, index
        self.paths = SimpleNamespace(vardir=vardir)
        self.steps = []
        self.alive = False

    def is_alive(self):
        return self.alive

    def kill(self):
        self.steps.append("killed")
        self.alive = False

    def discard(self, fast=False):
        self.steps.append("discarded")
        self.alive = False


def _launch(manager, servers, reqs):
    if manager.fail_launch:
        raise ServerStartError("port 1 is already in use")
    for server in servers:
        server.steps.append("spawned")
        server.alive = True


def _finish(manager, servers, reqs):
    for server in servers:
        server.steps.append("ready")


def _start(manager, servers, reqs):
    _launch(manager, servers, reqs)
    _finish(manager, servers, reqs)


def _manager(tmp_path, fail_launch=False):
    leaser = SimpleNamespace(lease=lambda: SimpleNamespace(release=lambda: None))
    kinds = {"mysql": ServerKind(FakeServer, _start, lambda m, t: None,
                                 launch_set=_launch, finish_set=_finish)}
    manager = ServerManager("bot0", str(tmp_path), SimpleNamespace(basedir="/usr"), leaser,
                            SimpleNamespace(), SimpleNamespace(trees=None), kinds)
    manager.more_tests(False)
    manager.fail_launch = fail_launch
    return manager


def test_get_servers_finishes_the_launched_set(tmp_path):
    manager = _manager(tmp_path)
    assert manager.launch(PLAIN)
    launched = list(manager.servers)
    assert [s.steps for s in launched] == [["spawned"]]
    assert manager.get_servers(PLAIN) == launched
    assert [s.steps for s in launched] == [["spawned", "ready"]]  # not spawned twice
    assert manager._launched is None


def test_a_launched_set_for_other_requirements_is_killed(tmp_path):
    manager = _manager(tmp_path)
    manager.launch(PLAIN)
    launched = list(manager.servers)
    servers = manager.get_servers(OTHER)
    assert launched[0].steps == ["spawned", "killed"]
    assert [s.steps for s in servers] == [["spawned", "ready"], ["spawned", "ready"]]


def test_a_failed_launch_is_raised_by_get_servers(tmp_path):
    manager = _manager(tmp_path, fail_launch=True)
    assert manager.launch(PLAIN)  # the failure waits for the test that needs the servers
    assert manager.servers == [] and manager.last_servers
    with pytest.raises(ServerStartError, match="already in use"):
        manager.get_servers(PLAIN)
    assert manager._launched is None


def test_launch_refuses_a_manager_with_servers_or_a_namespaced_set(tmp_path):
    manager = _manager(tmp_path)
    assert not manager.launch(Requirements.declared("mysql", [[]], network="namespaces"))
    manager.get_servers(PLAIN)
    assert not manager.launch(PLAIN)


def test_teardown_forgets_a_launched_set(tmp_path):
    manager = _manager(tmp_path)
    manager.launch(PLAIN)
    launched = list(manager.servers)
    manager.teardown(discard=True)
    assert manager._launched is None and launched[0].steps == ["spawned", "killed"]
