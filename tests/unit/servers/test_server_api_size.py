"""The central classes stay small and the kewpie 2012 API is off the modern core
(lib/servers/server.py, lib/servers/galera.py, lib/servers/manager.py,
lib/suites/testcase.py): Server's public names (methods, properties, class attributes)
are at most 25, a Galera node adds few, ServerManager has no mode flag callers set from
outside (they are method calls), no 2012 name is on Server, ServerManager or
KewpieTestCase (they live on the wrappers of lib/kewpie2012/server_compat.py and
lib/kewpie2012/manager_compat.py), and modern code imports nothing from lib/kewpie2012/.

Covers: lib/servers/server.py, lib/servers/galera.py, lib/servers/manager.py, lib/mtr/server.py,
lib/suites/testcase.py, lib/kewpie2012/server_compat.py
"""
import ast
import inspect
import os
import re

import pytest

from lib.mtr.server import MtrGaleraServer
from lib.servers.galera import GaleraServer
from lib.servers.manager import ServerManager
from lib.servers.server import Server
from lib.suites.testcase import ClusterTestCase, KewpieTestCase
from lib.kewpie2012.manager_compat import Kewpie2012Manager
from lib.kewpie2012.server_compat import Kewpie2012Server
from tests.conftest import ROOT
from tests.parsed import parsed

LIB = os.path.join(ROOT, "lib")

MAX_SERVER_NAMES = 25
MAX_GALERA_EXTRA_NAMES = 5  # Galera's own: wsrep_status, is_synced, wipe_datadir...
# what callers once set on a manager to change how it behaved
MANAGER_MODE_FLAGS = ("reuse_expected", "last_test", "snapshot_formation",
                      "formed_from_snapshot", "force_reset")

SERVER_2012_NAMES = (
    "master_port", "cnf_file", "type", "basedir", "mysqldump", "mysql_client", "mysqladmin",
    "version", "std_data", "server_options", "status", "logging", "client_init_command",
    "restore_pristine", "get_innodb_version", "get_xtradb_version", "get_pid", "die",
    "dump_errlog", "restore_snapshot", "slave_stop", "slave_start", "slave_ready",
    "get_binlog_info", "set_master", "wait_sync_with_slaves", "get_bzr_info",
    "apply_server_options", "vardir", "datadir", "logdir", "tmpdir", "error_log", "pid_file",
    "socket_file")
# 2012 names of the server that are modern names elsewhere (KewpieTestCase.server_manager)
SERVER_ONLY_2012_NAMES = ("server_manager",)
MANAGER_2012_NAMES = ("start_server", "stop_server", "restart_server", "start_servers",
                      "stop_servers", "reset_servers", "load_datadir")
TESTCASE_2012_NAMES = ("test_executor", "system_manager")
ALL_2012_NAMES = SERVER_2012_NAMES + MANAGER_2012_NAMES + TESTCASE_2012_NAMES

# Modules outside lib/kewpie2012/ that may import it, and why.
COMPAT_IMPORTERS = {
    "lib/run/runner.py": "the hand-over: derives a 2012 module's globals from its context",
    "lib/cli.py": "--opt-matrix is checked with kewpie 2012's parser",
}


def public_names(cls):
    """Names in dir(cls) not starting with '_': methods, properties, class attributes."""
    return sorted(n for n in dir(cls) if not n.startswith("_"))


def test_server_has_at_most_25_public_names():
    found = public_names(Server)
    assert len(found) <= MAX_SERVER_NAMES, f"{len(found)} public names: {found}"


@pytest.mark.parametrize("cls", [GaleraServer, MtrGaleraServer], ids=lambda c: c.__name__)
def test_a_galera_node_adds_few(cls):
    extra = sorted(set(public_names(cls)) - set(public_names(Server)))
    assert len(extra) <= MAX_GALERA_EXTRA_NAMES, extra


def test_mtr_galera_nodes_are_nodes_of_the_one_node_type():
    assert issubclass(MtrGaleraServer, GaleraServer)


def test_no_mode_flag_is_set_on_a_manager_from_outside():
    """The flags are private: callers say what they know by method calls."""
    found = []
    for dirpath, _, files in os.walk(LIB):
        for name in files:
            if name.endswith(".py") and name != "manager.py":
                text = open(os.path.join(dirpath, name)).read()
                found += [f"{name}: {flag}" for flag in MANAGER_MODE_FLAGS
                          if re.search(rf"manager\.{flag}\s*=", text)]
    assert found == []
    assert [f for f in MANAGER_MODE_FLAGS if hasattr(ServerManager, f)] == []


@pytest.mark.parametrize("cls", [Server, GaleraServer, ServerManager, KewpieTestCase,
                                 ClusterTestCase], ids=lambda c: c.__name__)
def test_no_2012_name_on_the_modern_classes(cls):
    assert [n for n in ALL_2012_NAMES if hasattr(cls, n)] == []


@pytest.mark.parametrize("cls", [Server, GaleraServer, ServerManager], ids=lambda c: c.__name__)
def test_no_2012_server_name_on_the_modern_servers(cls):
    assert [n for n in SERVER_ONLY_2012_NAMES if hasattr(cls, n)] == []


@pytest.mark.parametrize("method", [Server.start, Server.restart, GaleraServer.start],
                         ids=lambda m: m.__qualname__)
def test_no_2012_arguments_on_modern_methods(method):
    params = inspect.signature(method).parameters
    assert not {"expect_fail", "working_environ", "quiet"} & set(params)


def test_the_wrappers_carry_the_2012_names():
    assert [n for n in SERVER_2012_NAMES + SERVER_ONLY_2012_NAMES
            if n != "restore_pristine" and not hasattr(Kewpie2012Server, n)] == []
    assert [n for n in MANAGER_2012_NAMES if not hasattr(Kewpie2012Manager, n)] == []
    assert "expect_fail" in inspect.signature(Kewpie2012Server.start).parameters


def _module_of(path):
    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    return rel[:-1] if rel[-1] == "__init__" else rel


def _imports_compat(path):
    """Line numbers of imports of lib.kewpie2012 (absolute or relative) in the file at path."""
    parts = _module_of(path)
    package = parts if path.endswith("__init__.py") else parts[:-1]
    lines = []
    for node in ast.walk(parsed(path)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (node.module or "").split(".") if node.level == 0 else \
                package[:len(package) - node.level + 1] + ([node.module] if node.module else [])
            names = [".".join(base + [a.name]) for a in node.names]
        if any(n.split(".")[:2] in (["lib", "kewpie2012"], ["lib", "util"]) for n in names):
            lines.append(node.lineno)
    return lines


def test_the_import_resolver_sees_relative_imports():
    path = os.path.join(LIB, "kewpie2012", "context.py")
    assert _imports_compat(path)  # "from . import mysqlBaseTestCase"


def test_modern_code_imports_nothing_from_the_2012_api():
    found = []
    for dirpath, _, files in os.walk(LIB):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, ROOT)
            if not name.endswith(".py") or rel.startswith(os.path.join("lib", "kewpie2012", "")) \
                    or rel in COMPAT_IMPORTERS:
                continue
            found += [f"{rel}:{line}" for line in _imports_compat(path)]
    assert found == []
