"""kewpie 2012's test globals, derived from the :class:`~lib.suites.context.TestContext`.

The only place that produces ``servers``, ``test_executor`` and
``server_manager`` (module globals of the test module,
``lib.util.mysqlBaseTestCase.servers``, and ``test_executor`` on each test
instance).  They are written for old tests to read; kewpie's own code reads
the context instead (tests/unit/test_house_rules.py checks it).
"""
from __future__ import annotations

import os
import unittest
from typing import TYPE_CHECKING, Any, Iterable

from lib.platform.logsetup import get_logger
from lib.servers.server import CompatLogger
from lib.suites.context import TestContext
import lib.util.mysqlBaseTestCase as compat_base

if TYPE_CHECKING:
    from lib.servers.server import Server
    from lib.servers.manager import ServerManager
    from lib.suites.loader import TestSpec


class SystemManager:
    """kewpie 2012's ``test_executor.system_manager``: paths and the run config."""

    def __init__(self, workdir: str, root: str, code_tree: Any, config: Any = None) -> None:
        self.workdir = workdir
        self.testdir = root
        self.code_tree = code_tree
        self.config = config
        self.randgen_path = (getattr(config, "randgen_path", "") or os.path.join(root, "randgen"))
        self.xtrabackup_path = getattr(config, "xtrabackup_path", "")
        self.innobackupex_path = getattr(config, "innobackupex_path", "")


class TestExecutor:
    """kewpie 2012's ``test_executor`` global: the bot running the current test."""

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, name: str, system_manager: SystemManager, server_manager: ServerManager,
                 logdir: str, verbose: bool) -> None:
        self.name = name
        self.system_manager = system_manager
        self.server_manager = server_manager
        self.logdir = logdir
        self.verbose = verbose
        self.logging = CompatLogger(get_logger())
        self.servers: list[Server] = []
        self.current_testcase: TestSpec | None = None
        self.working_environment = dict(os.environ)

    @property
    def master_server(self) -> Server | None:
        """The first server of the current test."""
        return self.servers[0] if self.servers else None


def executor_for(context: TestContext, servers: list[Server]) -> TestExecutor:
    """A 2012 ``test_executor`` for context, whose ``servers`` is the given list."""
    setup = context.setup
    system = SystemManager(setup.workdir, setup.root, setup.code_tree, setup.config)
    system.randgen_path = setup.tools.randgen
    system.xtrabackup_path = setup.tools.xtrabackup
    system.innobackupex_path = setup.tools.innobackupex
    executor = TestExecutor(setup.bot, system, context.manager, setup.log_dir, setup.verbose)
    executor.logging = CompatLogger(get_logger(), bool(getattr(setup.config, "test_debug", False)))
    executor.servers = servers
    executor.current_testcase = context.spec
    return executor


def install_globals(context: TestContext, tests: Iterable[unittest.TestCase]) -> None:
    """Set the 2012 names from context: the test module's ``servers``, ``test_executor``
    and ``server_manager`` globals, ``mysqlBaseTestCase.servers``, and ``test_executor``
    on each test (the three globals share one list of servers, as in 2012)."""
    servers = list(context.servers)
    executor = executor_for(context, servers)
    module = context.spec.module
    module.servers = servers
    module.test_executor = executor
    module.server_manager = context.manager
    compat_base.servers = servers
    for test in tests:
        test.test_executor = executor  # type: ignore[attr-defined]
