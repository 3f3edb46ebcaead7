"""kewpie 2012's test globals, derived from the :class:`~lib.suites.context.TestContext`.

The only place that produces ``servers``, ``test_executor`` and
``server_manager`` (module globals of the test module,
``lib.util.mysqlBaseTestCase.servers``, and ``test_executor`` on each 2012
test instance).  They are written for old tests to read, and hold 2012
wrappers around the context's modern objects (:mod:`lib.kewpie2012.server_compat`,
:mod:`lib.kewpie2012.manager_compat`); kewpie's own code reads the context instead
(tests/unit/test_house_rules.py checks it).
"""
from __future__ import annotations

import os
import shutil
import unittest
from types import SimpleNamespace
from typing import TYPE_CHECKING, Iterable

from ..config import RunConfig
from ..home import data_path
from ..errors import SuiteError
from ..platform.logsetup import get_logger
from ..suites.context import BotSetup, TestContext
from ..suites.testcase import KewpieTestCase
from . import mysqlBaseTestCase as compat_base
from .code_manager import CodeManager
from .compat_logger import CompatLogger
from .manager_compat import Kewpie2012Manager
from .matrix_manager import matrixManager, parse_opt_matrix
from .randgen_methods import randgenManager
from .server_compat import Kewpie2012Server, ServerWrappers
from .sqlbench_methods import find_sqlbench
from .xb_manager import xtrabackupManager

if TYPE_CHECKING:
    from ..servers.codetree import CodeTree
    from ..suites.loader import TestSpec


FRONT_END = os.path.join("scripts", "innobackupex")  # kewpie's innobackupex (lib/home.py)


def _tree_tool(code_tree: CodeTree | None, *names: str) -> str:
    tools: dict[str, str] = getattr(code_tree, "tools", None) or {}
    for name in names:
        if tools.get(name):
            return tools[name]
    return ""


def default_xtrabackup_path(code_tree: CodeTree | None) -> str:
    """The backup binary 2012 tests get without --xtrabackup-path: the code tree's
    mariabackup or xtrabackup, else one on PATH ('' when there is none)."""
    return (_tree_tool(code_tree, "mariabackup", "xtrabackup")
            or next((p for p in map(shutil.which, ("mariadb-backup", "mariabackup", "xtrabackup"))
                     if p), ""))


def default_innobackupex_path(code_tree: CodeTree | None, root: str) -> str:
    """The innobackupex 2012 tests get without --innobackupex-path: kewpie's front end
    over ``mariadb-backup --innobackupex`` when mariabackup is the backup tool (see
    :mod:`lib.kewpie2012.innobackupex`), else the code tree's or PATH's innobackupex."""
    found = _tree_tool(code_tree, "innobackupex") or shutil.which("innobackupex") or ""
    version = getattr(code_tree, "version", None)
    mariadb = version is None or version.flavor == "mariadb"
    if (mariadb or not found) and os.path.basename(default_xtrabackup_path(code_tree)).startswith(
            ("mariadb-backup", "mariabackup")):
        return data_path(FRONT_END)
    return found


class SystemManager:
    """kewpie 2012's ``test_executor.system_manager``: paths, the code tree and the run config.

    ``xtrabackup_path`` and ``innobackupex_path`` are the ones given on the
    command line, else the defaults above; ``randgen_seed`` is ``--randgen-seed``.
    """

    def __init__(self, workdir: str, root: str, code_tree: CodeTree | None,
                 config: RunConfig | None = None) -> None:
        self.workdir = workdir
        self.testdir = root
        self.code_tree = code_tree
        self.config = config or RunConfig()
        tools = self.config.tools
        self.randgen_path = tools.randgen_path or os.path.join(root, "randgen")
        self.xtrabackup_path = tools.xtrabackup_path or default_xtrabackup_path(code_tree)
        self.innobackupex_path = (tools.innobackupex_path
                                  or default_innobackupex_path(code_tree, root))
        self.randgen_seed = tools.randgen_seed or 1
        self.code_manager = CodeManager(code_tree,
                                        self.config.servers.default_server_type or "mysql")
        self.logging = CompatLogger(get_logger())
        self.cmd_prefix = ""


class TestExecutor:
    """kewpie 2012's ``test_executor`` global: the bot running the current test."""

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, name: str, system_manager: SystemManager,
                 server_manager: Kewpie2012Manager, logdir: str, verbose: bool) -> None:
        self.name = name
        self.system_manager = system_manager
        self.server_manager = server_manager
        self.logdir = logdir
        self.verbose = verbose
        self.logging = CompatLogger(get_logger())
        self.servers: list[Kewpie2012Server] = []
        self.current_testcase: TestSpec | None = None
        self.working_environment = dict(os.environ)
        self.matrix_manager = matrixManager(parse_opt_matrix(
            system_manager.config.tools.opt_matrix))
        self.xtrabackup_manager = xtrabackupManager(server_manager, system_manager)
        self.randgen_manager = randgenManager(self)

    @property
    def master_server(self) -> Kewpie2012Server | None:
        """The first server of the current test."""
        return self.servers[0] if self.servers else None


def system_manager_for(setup: BotSetup) -> SystemManager:
    """kewpie 2012's ``system_manager`` for a bot's setup (its tools and seed)."""
    system = SystemManager(setup.workdir, setup.root, setup.code_tree, setup.config)
    system.randgen_path = setup.tools.randgen
    system.xtrabackup_path = setup.tools.xtrabackup or default_xtrabackup_path(setup.code_tree)
    system.innobackupex_path = (setup.tools.innobackupex
                                or default_innobackupex_path(setup.code_tree, setup.root))
    system.randgen_seed = setup.seed
    return system


def working_environment(system: SystemManager, servers: list[Kewpie2012Server],
                        bot: str) -> dict[str, str]:
    """kewpie 2012's ``test_executor.working_environment`` (the environment of its shell
    commands: sql-bench's, crash-me's): ours, plus 2012's variables for the test's first
    server (``MASTER_MYPORT``, ``MASTER_MYSOCK``, ``MYSQLTEST_VARDIR``,
    ``MYSQL_TMP_DIR``, ``EXE_MYSQL``, ``MYSQL``, ``MYSQL_DUMP``, ``MYSQL_UPGRADE``),
    ``MYSQL_TEST_WORKDIR`` (the workdir) and ``SQLBENCH_DIR``, and with several servers
    ``<BOT>_<SERVER>`` (port) and ``<BOT>_<SERVER>_PID`` for each."""
    env = dict(os.environ)
    env["MYSQL_TEST_WORKDIR"] = system.workdir
    env["SQLBENCH_DIR"] = find_sqlbench(SimpleNamespace(system_manager=system)) or \
        os.path.join(system.testdir, "sql-bench")
    if not servers:
        return env
    master = servers[0]
    port = getattr(master, "master_port", None)
    if port is None:  # not a server (a test's stand-in)
        return env
    tools: dict[str, str] = getattr(getattr(master, "tree", None), "tools", None) or {}
    connect = f"--no-defaults --user=root --host=127.0.0.1 --protocol=tcp --port={port}"
    env.update({"MYSQLTEST_VARDIR": master.paths.vardir, "MYSQL_TMP_DIR": master.paths.tmpdir,
                "MASTER_MYSOCK": master.paths.socket_file, "MASTER_MYPORT": str(port)})
    for name, tool in (("MYSQL", "client"), ("MYSQL_DUMP", "dump"), ("MYSQL_UPGRADE", "upgrade")):
        if tools.get(tool):
            env[name] = f"{tools[tool]} {connect}"
    if tools.get("client"):
        env["EXE_MYSQL"] = tools["client"]
    if len(servers) > 1:
        for server in servers:
            name = f"{bot}_{server.name}".upper()
            env[name] = str(getattr(server, "master_port", ""))
            env[f"{name}_PID"] = str(getattr(server, "pid", None) or "")
    return env


def executor_for(context: TestContext, servers: list[Kewpie2012Server],
                 server_manager: Kewpie2012Manager) -> TestExecutor:
    """A 2012 ``test_executor`` for context, whose ``servers`` is the given list."""
    setup = context.setup
    system = system_manager_for(setup)
    executor = TestExecutor(setup.bot, system, server_manager, setup.log_dir, setup.verbose)
    executor.logging = CompatLogger(get_logger(), setup.config.debugging.test_debug)
    executor.servers = servers
    executor.current_testcase = context.spec
    executor.working_environment = working_environment(system, servers, setup.bot)
    return executor


def install_globals(context: TestContext, tests: Iterable[unittest.TestCase]) -> None:
    """Set the 2012 names from context: the test module's ``servers``, ``test_executor``
    and ``server_manager`` globals, ``mysqlBaseTestCase.servers``, and ``test_executor``
    on each test that is not a KewpieTestCase.  The three globals share one list of
    servers, as in 2012: one 2012 wrapper per server of the context."""
    manager = context.manager
    wrappers = ServerWrappers(lambda server: manager.copy_pristine(server))  # restore_snapshot
    servers = wrappers.wrap_all(context.servers)
    server_manager = Kewpie2012Manager(manager, wrappers)
    executor = executor_for(context, servers, server_manager)
    module = context.spec.module
    setattr(module, "servers", servers)  # the 2012 names are set, never declared
    setattr(module, "test_executor", executor)
    setattr(module, "server_manager", server_manager)
    compat_base.servers = servers
    for test in tests:
        if not isinstance(test, KewpieTestCase):
            setattr(test, "test_executor", executor)


def skip_reason(spec: TestSpec, setup: BotSetup) -> str | None:
    """What a 2012 module's ``skip_checks(system_manager)`` says before its servers start:
    the reason to skip it, or None to run it.  ``skip_checks`` returns
    ``(skip, reason)``; an exception in it is raised as a SuiteError naming the module."""
    check = vars(spec.module).get("skip_checks")
    if not callable(check):
        return None
    system = system_manager_for(setup)
    try:
        answer = check(system)
    except Exception as exc:  # noqa: BLE001 - the test's own code: report it as its failure
        raise SuiteError(f"{spec.path}: skip_checks raised {type(exc).__name__}: {exc}") from None
    if isinstance(answer, tuple) and answer:
        skip, reason = answer[0], (answer[1] if len(answer) > 1 else "")
    else:
        skip, reason = answer, ""
    return (str(reason) or "skip_checks said so") if skip else None
