"""Runs selected tests on a bot's servers, one unittest module at a time.

Each run of a test module gets a :class:`~lib.suites.context.TestContext`,
handed to its KewpieTestCase instances before they run; the kewpie 2012
globals are derived from it by :mod:`lib.kewpie2012.context`.
"""
from __future__ import annotations

import time
import unittest
from typing import Any, Callable, Iterator

from ..errors import QueryError, ServerError, SuiteError
from .deadreport import dead_server_report
from .evidence import EvidenceKeeper
from .knownfailures import KnownFailures, KnownVerdict
from ..servers.health import HealthState
from ..platform.logsetup import get_logger
from ..platform.netns import unavailable_reason
from .report import Outcome
from .watchdog import TestWatchdog
from ..servers.server import Server
from ..servers.manager import ServerManager
from ..suites.loader import TestSpec
from ..suites.testcase import KewpieTestCase
from ..suites.context import BotSetup, TestContext
from ..suites.status import TestStatus
from ..kewpie2012.context import install_globals, skip_reason
from ..checks.errorlog import LogMarks
from .postchecks import (debugger_problems, forget_fault_windows, load_gendata,
                         warnings_fail, warnings_note, warnings_problem)
from .leftovers import (collect_leftovers, leftover_report, tagged_environment,
                        tags_for_test)
from ..platform.process import TAG_BOT
from ..servers.manager import stop_all


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


class Runner:
    """Runs TestSpecs on one bot: servers, the test, crash checks, retries, evidence."""

    def __init__(self, manager: ServerManager, setup: BotSetup,
                 test_timeout: float = 0.0, evidence: EvidenceKeeper | None = None) -> None:
        """setup: the bot's :class:`BotSetup` (:func:`lib.run.native.make_runner` builds
        it from the config).  test_timeout 0: no limit (see :mod:`lib.run.watchdog`)."""
        self.manager = manager
        self.setup = setup
        self.test_timeout = test_timeout
        self.evidence = evidence
        self.log = get_logger()
        self.netns_problem: str | None = None  # why namespaces cannot be made (None: not asked)
        self.log_marks = LogMarks()  # how far each server's error log was checked
        self.valgrind_seen: set[str] = set()
        self.kept: list[Server] = []  # --keep-failed: the failed test's servers, left running
        self.tests_run = 0  # numbers each test's tag (lib/run/leftovers.py)
        self.known_failures = KnownFailures(tuple(getattr(setup.config, "known_bugs", ()) or ()))

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
        """Get servers, run the module's tests, check the servers, apply the reuse rule.

        A module that did not import fails here with its one error line, and a
        2012 module whose ``skip_checks`` says so is skipped, both before any
        server starts.
        """
        if spec.disabled:  # disabled.txt (--enable-disabled clears it): reported, never run
            return Outcome(spec.full_name, TestStatus.SKIPPED, 0, self.manager.bot_name,
                           f"disabled: {spec.disabled}")
        start = time.monotonic()
        if spec.broken:
            return Outcome(spec.full_name, TestStatus.FAIL, 0, self.manager.bot_name,
                           spec.load_error)
        try:
            reason = skip_reason(spec, self.setup)
        except SuiteError as exc:
            return Outcome(spec.full_name, TestStatus.FAIL, 0, self.manager.bot_name, str(exc))
        if reason is not None:
            return Outcome(spec.full_name, TestStatus.SKIPPED, 0, self.manager.bot_name,
                           f"skipped: {reason}")
        if spec.requirements.namespaced:
            if self.netns_problem is None:
                self.netns_problem = unavailable_reason()
            if self.netns_problem:
                return Outcome(spec.full_name, TestStatus.SKIPPED, 0, self.manager.bot_name,
                               f"skipped: network = 'namespaces' but {self.netns_problem}")
        try:
            servers = self.manager.get_servers(spec.requirements)
        except (ServerError, QueryError) as exc:  # environment problems (no binary...) end the run
            ms = int((time.monotonic() - start) * 1000)
            message = f"servers for {spec.full_name} could not be started: {exc}"
            evidence = ""
            if self.evidence is not None:
                evidence = self.evidence.save(spec.full_name, message,
                                              self.manager.last_servers, None).path
            return Outcome(spec.full_name, TestStatus.FAIL, ms, self.manager.bot_name, message,
                           evidence=evidence)
        config = self.setup.config
        self.log_marks.forget_others(servers)
        result = TimedResult()
        suite = unittest.TestLoader().loadTestsFromModule(spec.module)
        context = TestContext(spec, tuple(servers), self.manager, self.setup, result)
        self._hand_over(context, suite)
        pre_problem = ""
        if getattr(config, "gendata", ""):
            pre_problem = load_gendata(self.setup, servers, spec.requirements.pairs,
                                       spec.requirements.server_type)

        def on_timeout() -> None:
            """--test-timeout expired (watchdog thread): no further method, servers killed."""
            result.stop()
            for server in servers:
                try:
                    server.kill()
                except Exception:  # noqa: BLE001 - the other servers must still die
                    self.log.debug(f"killing {server.name} on timeout failed", exc_info=True)

        watchdog = TestWatchdog(self.test_timeout, on_timeout)
        tag = self.next_test_tag()
        with tagged_environment(tags_for_test(self.manager.settings.env, tag)):
            if not pre_problem:
                watchdog.run(lambda: suite.run(result))
        timed_out = watchdog.timed_out
        left = leftover_report(collect_leftovers(tag, spec.suite.kept_processes,
                                                 self.server_pids(servers)))
        ms = int((time.monotonic() - start) * 1000)
        status, message, dead = self._judge(spec, result, servers, timed_out)
        verdict = self.known_failures.judge(spec.suite.path, dead) if dead else KnownVerdict()
        if verdict.note:
            message += "\n" + verdict.note
        keep_failed = getattr(config, "keep_failed", False) and not self.kept
        wrapper = self.manager.settings.wrapper
        if (wrapper is not None and wrapper.stop_after_test and not timed_out
                and not (keep_failed and status.failed)):
            stop_all(servers)  # valgrind reports (leaks) when the server exits
            self.manager.request_reset()
        status, message, notes = self._post_checks(spec, context, servers, status, message,
                                                   "\n".join(p for p in (pre_problem, left) if p))
        passed = status.ok
        evidence = ""
        keep = not passed and keep_failed and any(s.is_alive() for s in servers)
        if keep:
            self.kept = list(servers)  # left running; lib.run.debugging reports them
        elif not passed:
            self.manager.teardown()  # quiet datadirs before they are copied
        if not passed:
            if self.evidence is not None:
                saved = self.evidence.save(spec.full_name, message, servers, self.setup.log_dir)
                evidence = saved.path
                if saved.backtrace:
                    message += f"\n--- backtrace (top frames) ---\n{saved.backtrace}"
        if keep:
            return Outcome(spec.full_name, status, ms, self.manager.bot_name, message,
                           result.method_rows, evidence=evidence, notes=notes,
                           known=verdict.known)
        reasons = self.manager.after_test(passed)
        return Outcome(spec.full_name, status, ms, self.manager.bot_name, message,
                       result.method_rows, evidence=evidence, resets=1 if reasons else 0,
                       reset_reason="; ".join(reasons), notes=notes, known=verdict.known)

    def next_test_tag(self) -> str:
        """The value of the next test's ``KEWPIE_TEST`` tag (``<run>/<bot>/<n>``)."""
        self.tests_run += 1
        bot = self.manager.settings.env.get(TAG_BOT) or self.manager.bot_name
        return f"{bot}/{self.tests_run}"

    def server_pids(self, servers: list[Server]) -> list[int]:
        """The pids of the servers kewpie started for this bot (never a test's leftover)."""
        return [pid for pid in (s.pid for s in [*servers, *self.manager.servers]) if pid]

    @staticmethod
    def _hand_over(context: TestContext, suite: unittest.TestSuite) -> None:
        """Give each loaded test the context (once), and derive the 2012 globals from it."""
        tests = list(_tests_of(suite))
        for test in tests:
            if isinstance(test, KewpieTestCase):
                test.use_context(context)
        install_globals(context, tests)

    def _post_checks(self, spec: TestSpec, context: TestContext, servers: list[Server],
                     status: TestStatus, message: str,
                     pre_problem: str) -> tuple[TestStatus, str, str]:
        """--gendata's failure, valgrind's reports and the error-log warnings check:
        each fails a passing test, and adds its text to a failing one.  Error-log lines
        that only get reported (:func:`~lib.run.postchecks.warnings_fail`: a kewpie 2012
        module, by default) are added to a failing test's message, else returned as its
        notes: (status, message, notes)."""
        config = self.setup.config
        check = getattr(config, "check_warnings", None)
        problems = [pre_problem] if pre_problem else []
        reported = ""
        if check is False:
            for server in servers:
                self.log_marks.skip_to_end(server)
            forget_fault_windows(servers)
        else:
            found = warnings_problem(self.log_marks, servers,
                                     [*spec.suite.suppressions, *context.suppressions])
            if warnings_fail(check, spec.check_warnings):
                problems.append(found)
            elif found:
                reported = warnings_note(found)
        problems += debugger_problems(self.manager.settings.wrapper, servers,
                                      self.valgrind_seen, status.failed)
        problems = [p for p in problems if p]
        if problems and not status.failed:
            status = TestStatus.FAIL
            message = ""
        if status.failed:
            return status, "\n".join(p for p in [message, *problems, reported] if p), ""
        return status, message, reported

    def _judge(self, spec: TestSpec, result: TimedResult, servers: list[Server],
               timed_out: bool) -> tuple[TestStatus, str, list[Server]]:
        parts: list[str] = []
        for test, text in result.failures + result.errors:
            parts.append(f"{test.id().split('.', 2)[-1]}:\n{_short_traceback(text)}")
        dead = []
        if not timed_out:
            for server in servers:
                health = server.health()
                if HealthState(health.state).dead:
                    dead.append(server)
                    parts.append(dead_server_report(server, health.message))
        if timed_out:
            status = TestStatus.TIMEOUT
            parts.insert(0, f"test exceeded --test-timeout {self.test_timeout:g}s: "
                            f"its servers were killed")
        elif result.failures or result.errors or dead:
            status = TestStatus.FAIL
        elif result.testsRun and len(result.skipped) == result.testsRun:
            status = TestStatus.SKIPPED
            parts = [f"skipped: {reason}" for _, reason in result.skipped[:3]]
        elif result.testsRun == 0:
            status = TestStatus.SKIPPED
            parts = [f"{spec.path} has no test methods"]
        else:
            status = TestStatus.PASS
        if status.failed:
            reports = [r for r in (s.status_report() for s in servers) if r]
            if reports:
                parts.append("--- server status ---\n" + "\n".join(reports))
        if status.failed and not dead:
            for server in servers:
                tail = server.errlog.tail(8)
                if tail:
                    parts.append(f"--- {server.name} error log ({server.paths.error_log}) tail ---\n{tail}")
        return status, "\n".join(parts), dead


def _tests_of(suite: unittest.TestSuite) -> Iterator[unittest.TestCase]:
    """The test cases of a (nested) suite, in order."""
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _tests_of(item)
        else:
            yield item
