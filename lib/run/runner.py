"""Runs selected tests on a bot's servers, one unittest module at a time.

Each run of a test module gets a :class:`~lib.suites.context.TestContext`,
handed to its KewpieTestCase instances before they run; the kewpie 2012
globals are derived from it by :mod:`lib.kewpie2012.context`.  The module is a
:class:`UnittestBody` of the bot's attempt pipeline (:mod:`lib.run.attempt`),
which gets its servers, runs it, judges it, checks after it, keeps the
evidence and applies the reuse rule.
"""
from __future__ import annotations

import time
import unittest
from typing import Any, Callable, Iterator

from ..errors import SuiteError
from .attempt import Pipeline, RawResult, Rules, TestBody
from .evidence import EvidenceKeeper
from ..platform.logsetup import get_logger
from ..platform.netns import unavailable_reason
from .leftovers import tagged_environment
from .postchecks import load_gendata
from .report import Outcome
from ..servers.server import Server
from ..servers.manager import ServerManager
from ..suites.loader import TestSpec
from ..suites.testcase import KewpieTestCase
from ..suites.context import BotSetup, TestContext
from ..suites.status import TestStatus
from ..kewpie2012.context import install_globals, skip_reason


class TimedResult(unittest.TestResult):
    """A TestResult that also times each test method."""

    def __init__(self) -> None:
        super().__init__()
        self.method_rows: list[tuple[str, TestStatus, int]] = []
        self._t0 = 0.0
        self._status = TestStatus.PASS

    def startTest(self, test: unittest.TestCase) -> None:  # noqa: N802 - unittest API
        """Start the clock for one test method."""
        super().startTest(test)
        self._t0 = time.monotonic()
        self._status = TestStatus.PASS

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:  # noqa: N802
        """Record an assertion failure."""
        super().addFailure(test, err)
        self._status = TestStatus.FAIL

    def addError(self, test: unittest.TestCase, err: Any) -> None:  # noqa: N802
        """Record an unexpected exception."""
        super().addError(test, err)
        self._status = TestStatus.FAIL

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:  # noqa: N802
        """Record a skipped method."""
        super().addSkip(test, reason)
        self._status = TestStatus.SKIPPED

    def stopTest(self, test: unittest.TestCase) -> None:  # noqa: N802
        """Stop the clock and keep the method's row."""
        super().stopTest(test)
        name = test.id().rsplit(".", 1)[-1] if hasattr(test, "id") else str(test)
        self.method_rows.append((name, self._status, int((time.monotonic() - self._t0) * 1000)))


def _short_traceback(text: str, limit: int = 25, message_limit: int = 80) -> str:
    """The traceback cut to limit lines; the exception's own message is kept whole
    (up to message_limit lines): a checker's evidence is in it."""
    lines = text.rstrip().splitlines()
    last_frame = max((i for i, line in enumerate(lines) if line.startswith("  File ")),
                     default=-1)
    start = last_frame + 1
    while 0 <= last_frame < start < len(lines) and lines[start].startswith("    "):
        start += 1  # the frame's source line(s)
    frames, message = lines[:start], lines[start:]
    if len(frames) > limit:
        frames = frames[:3] + ["  ..."] + frames[-(limit - 4):]
    if len(message) > message_limit:
        message = message[:message_limit] + [f"... ({len(message) - message_limit} more lines)"]
    return "\n".join(frames + message)


class UnittestBody(TestBody):
    """A test module's unittest cases as the pipeline runs them: ``--gendata`` first,
    then the cases with the test's tags in the environment; the watchdog stops the
    result (no further method starts)."""

    def __init__(self, spec: TestSpec, suite: unittest.TestSuite, result: TimedResult,
                 setup: BotSetup) -> None:
        self.spec = spec
        self.suite = suite
        self.result = result
        self.setup = setup

    def prepare(self, servers: list[Server]) -> str:
        """--gendata's load into the servers ('' when loaded, or none asked for)."""
        if not self.setup.config.tools.gendata:
            return ""
        return load_gendata(self.setup, servers, self.spec.requirements.pairs,
                            self.spec.requirements.server_type)

    def run(self, servers: list[Server], tags: dict[str, str]) -> RawResult:
        """The module's cases, with tags in this process's environment (what they start
        inherits them)."""
        with tagged_environment(tags):
            self.suite.run(self.result)
        return raw_result(self.result, self.spec)

    def interrupt(self) -> None:
        """--test-timeout: no further method starts."""
        self.result.stop()


def raw_result(result: TimedResult, spec: TestSpec) -> RawResult:
    """What a module's unittest result says: its failures' tracebacks, all skipped (with
    the reasons), no test methods, or a pass."""
    parts = [f"{test.id().split('.', 2)[-1]}:\n{_short_traceback(text)}"
             for test, text in result.failures + result.errors]
    if parts:
        status = TestStatus.FAIL
    elif result.testsRun and len(result.skipped) == result.testsRun:
        status = TestStatus.SKIPPED
        parts = [f"skipped: {reason}" for _, reason in result.skipped[:3]]
    elif result.testsRun == 0:
        status = TestStatus.SKIPPED
        parts = [f"{spec.path} has no test methods"]
    else:
        status = TestStatus.PASS
    return RawResult(status, "\n".join(parts), result.method_rows)


class Runner:
    """Runs TestSpecs on one bot through its attempt pipeline, with retries."""

    def __init__(self, manager: ServerManager, setup: BotSetup,
                 test_timeout: float = 0.0, evidence: EvidenceKeeper | None = None,
                 keep_failed: bool = False) -> None:
        """setup: the bot's :class:`BotSetup` (:func:`lib.run.native.make_runner` builds
        it from the config).  test_timeout 0: no limit (see :mod:`lib.run.watchdog`);
        keep_failed: --keep-failed."""
        self.manager = manager
        self.setup = setup
        self.test_timeout = test_timeout
        self.evidence = evidence
        self.log = get_logger()
        self.netns_problem: str | None = None  # why namespaces cannot be made (None: not asked)
        self.pipeline = Pipeline(setup.config, setup.bot, evidence, setup.log_dir, test_timeout,
                                 keep_failed)

    @property
    def kept(self) -> list[Server]:
        """--keep-failed: the failed test's servers, left running (lib.run.debugging
        reports them)."""
        return self.pipeline.kept

    def run_with_retries(self, spec: TestSpec, retries: int = 0,
                         may_retry: Callable[[], bool] = lambda: True) -> Outcome:
        """Run spec; rerun a failure on fresh servers up to retries times.

        A test that fails and then passes is 'flaky' (never a plain pass); one
        that fails every attempt says how many it had.
        """
        outcome = self.run_one(spec)
        failures: list[str] = []
        total_ms, resets = outcome.time_ms, outcome.resets
        while outcome.failed and len(failures) < retries and may_retry() and not self.kept:
            failures.append(self._attempt_text(outcome, len(failures) + 1))
            self.log.info(f"{spec.full_name} failed on attempt {len(failures)}; retrying on "
                          f"fresh servers")
            self.manager.request_reset()
            outcome = self.run_one(spec)
            total_ms += outcome.time_ms
            resets += outcome.resets
        outcome.time_ms = total_ms
        outcome.resets = resets
        outcome.attempts = len(failures) + 1
        if failures and outcome.status == TestStatus.PASS:
            outcome.status = TestStatus.FLAKY
            outcome.earlier_failures = failures
            outcome.message = (f"passed on attempt {outcome.attempts} after "
                               f"{len(failures)} failure(s):\n" + "\n".join(failures))
        elif failures:
            outcome.message = (f"failed all {outcome.attempts} attempts; the last one:\n"
                               + outcome.message)
            outcome.earlier_failures = failures
        return outcome

    def expect_next(self, spec: TestSpec | None) -> None:
        """The test this bot will run after the one it is about to run, as far as the
        scheduler can tell (None: none known).  A runner may prepare its servers in the background;
        this one does not."""
        del spec

    def expect_later(self, spec: TestSpec | None) -> None:
        """The test this bot will run after the announced next one, when that next one is
        the last its servers serve and this one needs others (None: none known).  A
        runner may prepare its servers in the background; this one does not."""
        del spec

    def current_key(self) -> object:
        """What the bot's servers can serve (scheduling affinity), None when it has none."""
        return self.manager.current if self.manager.servers else None

    @staticmethod
    def _attempt_text(outcome: Outcome, attempt: int) -> str:
        where = f" (evidence: {outcome.evidence})" if outcome.evidence else ""
        return f"attempt {attempt}: {outcome.status}{where}\n{outcome.message}"

    def run_one(self, spec: TestSpec) -> Outcome:
        """One attempt of the module: servers, its tests, the checks, evidence, reuse.

        A module that did not import fails here with its one error line, and a
        2012 module whose ``skip_checks`` says so is skipped, both before any
        server starts.
        """
        early = self._before_servers(spec)
        if early is not None:
            return early
        own: list[str] = []   # the test's suppressions (KewpieTestCase.suppress_warning)
        attempt = self.pipeline.attempt(spec.full_name, self.manager, Rules.for_spec(spec, own))
        failed = attempt.start(lambda: self.manager.get_servers(spec.requirements))
        if failed is not None:
            return failed
        result = TimedResult()
        suite = unittest.TestLoader().loadTestsFromModule(spec.module)
        self._hand_over(TestContext(spec, tuple(attempt.servers), self.manager, self.setup,
                                    result, suppressions=own), suite)
        return attempt.run(UnittestBody(spec, suite, result, self.setup))

    def _before_servers(self, spec: TestSpec) -> Outcome | None:
        """The outcome of a test that starts no server: disabled, not imported, skipped by
        its 2012 ``skip_checks``, or namespaces it cannot have (None: it runs)."""
        bot = self.manager.bot_name
        if spec.disabled:  # disabled.txt (--enable-disabled clears it): reported, never run
            return Outcome(spec.full_name, TestStatus.SKIPPED, 0, bot, f"disabled: {spec.disabled}")
        if spec.broken:
            return Outcome(spec.full_name, TestStatus.FAIL, 0, bot, spec.load_error)
        try:
            reason = skip_reason(spec, self.setup)
        except SuiteError as exc:
            return Outcome(spec.full_name, TestStatus.FAIL, 0, bot, str(exc))
        if reason is not None:
            return Outcome(spec.full_name, TestStatus.SKIPPED, 0, bot, f"skipped: {reason}")
        if spec.requirements.namespaced:
            if self.netns_problem is None:
                self.netns_problem = unavailable_reason()
            if self.netns_problem:
                return Outcome(spec.full_name, TestStatus.SKIPPED, 0, bot,
                               f"skipped: network = 'namespaces' but {self.netns_problem}")
        return None

    @staticmethod
    def _hand_over(context: TestContext, suite: unittest.TestSuite) -> None:
        """Give each loaded test the context (once), and derive the 2012 globals from it."""
        tests = list(_tests_of(suite))
        for test in tests:
            if isinstance(test, KewpieTestCase):
                test.use_context(context)
        install_globals(context, tests)


def _tests_of(suite: unittest.TestSuite) -> Iterator[unittest.TestCase]:
    """The test cases of a (nested) suite, in order."""
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _tests_of(item)
        else:
            yield item
