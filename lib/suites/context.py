"""The test context: everything a test is given, built by the runner and handed over once.

The runner builds one :class:`TestContext` per test module run (per
attempt) and gives it to every :class:`~lib.suites.testcase.KewpieTestCase`
instance it loaded, before the tests run (``test.use_context(context)``).
Modern code reads ``self.context.servers``, ``self.context.manager``,
``self.context.log_dir``, ``self.context.tools`` and ``self.context.seed``;
the kewpie 2012 globals (``servers``, ``test_executor``,
``server_manager``) are derived from the context by :mod:`lib.kewpie2012.context`
alone and never read back by new code.
"""
from __future__ import annotations

import os
import unittest
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..config import RunConfig

if TYPE_CHECKING:
    from ..servers.codetree import CodeTree
    from ..servers.server import Server
    from ..servers.manager import ServerManager
    from .loader import TestSpec


@dataclass(frozen=True)
class ToolPaths:
    """External tools of the run: the randgen folder, and backup tools given on the
    command line (empty: the code tree's own are used)."""

    randgen: str
    xtrabackup: str = ""
    innobackupex: str = ""


@dataclass(frozen=True)
class BotSetup:
    """What stays the same for every test one bot runs: its name, directories and tools.

    ``seed`` is the default seed of random loads (``KewpieTestCase.randgen``);
    ``code_tree`` and ``config`` are the run's CodeTree and RunConfig.
    """

    bot: str
    log_dir: str
    workdir: str
    root: str
    tools: ToolPaths
    verbose: bool = False
    seed: int = 1
    code_tree: CodeTree | None = None
    config: RunConfig = field(default_factory=RunConfig)

    @classmethod
    def from_config(cls, bot: str, log_dir: str, workdir: str, config: RunConfig,
                    code_tree: CodeTree | None = None) -> "BotSetup":
        """A bot's setup from the RunConfig (``--randgen-path``, ``--xtrabackup-path``...)."""
        given = config.tools
        tools = ToolPaths(randgen=given.randgen_path or os.path.join(config.root, "randgen"),
                          xtrabackup=given.xtrabackup_path, innobackupex=given.innobackupex_path)
        return cls(bot, log_dir, workdir, config.root, tools, config.reporting.verbose,
                   seed=given.randgen_seed or 1,  # --randgen-seed
                   code_tree=code_tree, config=config)


@dataclass(frozen=True)
class TestContext:
    """One test module's run: its servers, their manager, the bot's setup, and the
    unittest result the runner passes to the tests (read by :meth:`has_failed`)."""

    __test__ = False  # not a pytest test class despite the name

    spec: TestSpec
    servers: tuple[Server, ...]
    manager: ServerManager
    setup: BotSetup
    result: unittest.TestResult
    suppressions: list[str] = field(default_factory=list)  # this test's error-log regexes

    @property
    def name(self) -> str:
        """``suite.test`` as in the report's rows."""
        return self.spec.full_name

    @property
    def bot(self) -> str:
        """The bot running the test (``bot0``, ``bot1``...)."""
        return self.setup.bot

    @property
    def log_dir(self) -> str:
        """The bot's log directory: kept as evidence when the test fails."""
        return self.setup.log_dir

    @property
    def tools(self) -> ToolPaths:
        """See :class:`ToolPaths`."""
        return self.setup.tools

    @property
    def seed(self) -> int:
        """See :class:`BotSetup`."""
        return self.setup.seed

    def has_failed(self, test: unittest.TestCase) -> bool:
        """True when test recorded a failure or an error in this run so far
        (usable in cleanups, which run before the test's result is final)."""
        return any(t is test for t, _ in list(self.result.failures) + list(self.result.errors))
