"""Unit tests for the test context (lib/suites/context.py), its 2012 compat globals
(lib/kewpie2012/context.py), the runner's hand-over, and the status enums.

Covers: lib/suites/context.py, lib/suites/testcase.py, lib/suites/status.py,
lib/kewpie2012/context.py, lib/run/runner.py
"""
import types
import unittest

import pytest

import lib.kewpie2012.mysqlBaseTestCase as compat_base
from lib.config import Reporting, RunConfig, Tools
from lib.consistency.verdict import Verdict, VerdictStatus, combine
from lib.errors import KewpieError
from lib.servers.health import HealthState
from lib.run.report import Outcome
from lib.run.runner import Runner, TimedResult, _tests_of
from lib.suites.testcase import KewpieTestCase
from lib.suites.context import BotSetup, TestContext, ToolPaths
from lib.suites.status import TestStatus
from lib.kewpie2012.wrapper import unwrap


class FakeManager:
    bot_name = "bot3"


def _context(module, result=None, servers=("s0", "s1")):
    spec = types.SimpleNamespace(module=module, full_name="suite.x_test")
    setup = BotSetup("bot3", "/logs", "/wd", "/root", ToolPaths("/rg", "/xb", ""), seed=7)
    return TestContext(spec, tuple(servers), FakeManager(), setup, result or TimedResult())


def _module_with(source):
    module = types.ModuleType("ctx_fixture")
    exec(source, module.__dict__)
    return module


SOURCE = """
from lib.suites.testcase import KewpieTestCase
from lib.kewpie2012.mysqlBaseTestCase import mysqlBaseTestCase
servers = []
server_manager = None
test_executor = None

class Modern(KewpieTestCase):
    def test_a(self):
        pass

class Old(mysqlBaseTestCase):
    def test_b(self):
        pass
"""


def test_hand_over_gives_context_and_derives_2012_globals():
    module = _module_with(SOURCE)
    context = _context(module)
    suite = unittest.TestLoader().loadTestsFromModule(module)
    Runner._hand_over(context, suite)
    tests = list(_tests_of(suite))
    modern = next(t for t in tests if type(t).__name__ == "Modern")
    old = next(t for t in tests if type(t).__name__ == "Old")
    assert modern.context is context
    assert modern.servers == ["s0", "s1"] and modern.server_manager is context.manager
    assert module.servers == ["s0", "s1"] and unwrap(module.server_manager) is context.manager
    assert [unwrap(s) for s in module.servers] == ["s0", "s1"]  # 2012 wrappers of the servers
    assert compat_base.servers is module.servers
    assert module.server_manager.bot_name == "bot3"  # the modern manager's names too
    executor = module.test_executor
    assert executor.name == "bot3" and executor.logdir == "/logs"
    assert executor.servers is module.servers and executor.master_server is module.servers[0]
    assert executor.server_manager is module.server_manager
    assert executor.system_manager.randgen_path == "/rg"
    assert executor.system_manager.xtrabackup_path == "/xb"
    assert old.test_executor is executor and not hasattr(modern, "test_executor")
    old.setUp()
    assert old.servers is module.servers


def test_context_is_frozen_and_given_once():
    context = _context(types.ModuleType("m"))
    with pytest.raises(AttributeError):
        context.servers = ()  # type: ignore[misc]
    test = KewpieTestCase()
    with pytest.raises(KewpieError, match="no test context"):
        test.context
    test.use_context(context)
    test.use_context(context)  # the same one again is harmless
    with pytest.raises(KewpieError, match="already"):
        test.use_context(_context(types.ModuleType("m")))
    assert (context.name, context.bot, context.log_dir, context.seed) == ("suite.x_test", "bot3",
                                                                         "/logs", 7)


def test_has_failed_reads_the_result_the_runner_passed():
    module = _module_with("""
from lib.suites.testcase import KewpieTestCase
class T(KewpieTestCase):
    seen = []
    def test_fails(self):
        self.addCleanup(lambda: T.seen.append(self.context.has_failed(self)))
        self.fail("on purpose")
    def test_passes(self):
        self.addCleanup(lambda: T.seen.append(self.context.has_failed(self)))
""")
    result = TimedResult()
    context = _context(module, result)
    suite = unittest.TestLoader().loadTestsFromModule(module)
    Runner._hand_over(context, suite)
    suite.run(result)
    assert module.T.seen == [True, False]
    assert [row[1] for row in result.method_rows] == [TestStatus.FAIL, TestStatus.PASS]


def test_setup_from_config():
    config = RunConfig(root="/root", tools=Tools(xtrabackup_path="/x", innobackupex_path="/i"),
                       reporting=Reporting(verbose=True))
    setup = BotSetup("bot1", "/log", "/wd", "/root", ToolPaths("/root/randgen", "/x", "/i"),
                     True, config=config)
    assert BotSetup.from_config("bot1", "/log", "/wd", config, None) == setup


def test_status_enums():
    assert TestStatus.FAIL.failed and TestStatus.TIMEOUT.failed
    assert not any(s.failed for s in (TestStatus.PASS, TestStatus.FLAKY, TestStatus.SKIPPED))
    assert TestStatus.PASS.ok and TestStatus.SKIPPED.ok and not TestStatus.FLAKY.ok
    assert TestStatus.FAIL == "fail" and f"[ {TestStatus.TIMEOUT} ]" == "[ timeout ]"
    outcome = Outcome("s.t", "timeout", 5)
    assert outcome.status is TestStatus.TIMEOUT and outcome.failed
    assert HealthState("hung").dead and HealthState("crashed").dead
    assert not HealthState("stopped").dead and not HealthState.OK.dead
    assert Verdict("c", "valid", "").status is VerdictStatus.VALID
    assert combine("x", []).status is VerdictStatus.UNKNOWN
    assert VerdictStatus.INVALID.invalid and not VerdictStatus.UNKNOWN.valid
    with pytest.raises(ValueError):
        TestStatus("passed")


def test_lifecycle_enums_match_the_strings_returned_today():
    from lib.platform.lifecycle import ReadyWait, StopResult
    assert StopResult("killed").forced and StopResult("terminated").forced
    assert not StopResult("gone").forced and not StopResult("shutdown").forced
    assert ReadyWait("").ready and not ReadyWait("exited").ready and ReadyWait("timeout") == "timeout"
