"""Runs selected tests on a bot's servers, one unittest module at a time."""
from __future__ import annotations

import os
import signal
import time
import unittest
from typing import Any, Callable

from lib.errors import KewpieError, QueryError, ServerError, TestTimeoutError
from lib.logsetup import get_logger
from lib.evidence import EvidenceKeeper
from lib.report import Outcome
from lib.server import CompatLogger, Server
from lib.server_manager import ServerManager
from lib.suites import TestSpec
from lib.testcase import KewpieTestCase
import lib.util.mysqlBaseTestCase as compat_base


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


class TimedResult(unittest.TestResult):
    """A TestResult that also times each test method."""

    def __init__(self) -> None:
        super().__init__()
        self.method_rows: list[tuple[str, str, int]] = []
        self._t0 = 0.0
        self._status = "pass"

    def startTest(self, test: unittest.TestCase) -> None:  # noqa: N802 - unittest API
        """Start the clock for one test method."""
        super().startTest(test)
        self._t0 = time.monotonic()
        self._status = "pass"

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:  # noqa: N802
        """Record an assertion failure."""
        super().addFailure(test, err)
        self._status = "fail"

    def addError(self, test: unittest.TestCase, err: Any) -> None:  # noqa: N802
        """Record an unexpected exception."""
        super().addError(test, err)
        self._status = "fail"

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:  # noqa: N802
        """Record a skipped method."""
        super().addSkip(test, reason)
        self._status = "skipped"

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

    def __init__(self, manager: ServerManager, executor: TestExecutor,
                 test_timeout: float = 0.0, evidence: EvidenceKeeper | None = None) -> None:
        self.manager = manager
        self.executor = executor
        self.test_timeout = test_timeout
        self.evidence = evidence
        self.log = get_logger()

    def run_with_retries(self, spec: TestSpec, retries: int = 0,
                         may_retry: Callable[[], bool] = lambda: True) -> Outcome:
        """Run spec; rerun a failure on fresh servers up to retries times.

        A test that fails and then passes is 'flaky' (never a plain pass); one
        that fails every attempt says how many it had.
        """
        outcome = self.run_one(spec)
        failures: list[str] = []
        total_ms = outcome.time_ms
        while outcome.status in ("fail", "timeout") and len(failures) < retries and may_retry():
            failures.append(self._attempt_text(outcome, len(failures) + 1))
            self.log.info(f"{spec.full_name} failed on attempt {len(failures)}; retrying on "
                          f"fresh servers")
            self.manager.request_reset()
            outcome = self.run_one(spec)
            total_ms += outcome.time_ms
        outcome.time_ms = total_ms
        outcome.attempts = len(failures) + 1
        if failures and outcome.status == "pass":
            outcome.status = "flaky"
            outcome.earlier_failures = failures
            outcome.message = (f"passed on attempt {outcome.attempts} after "
                               f"{len(failures)} failure(s):\n" + "\n".join(failures))
        elif failures:
            outcome.message = (f"failed all {outcome.attempts} attempts; the last one:\n"
                               + outcome.message)
            outcome.earlier_failures = failures
        return outcome

    @staticmethod
    def _attempt_text(outcome: Outcome, attempt: int) -> str:
        where = f" (evidence: {outcome.evidence})" if outcome.evidence else ""
        return f"attempt {attempt}: {outcome.status}{where}\n{outcome.message}"

    def run_one(self, spec: TestSpec) -> Outcome:
        """Get servers, run the module's tests, check the servers, apply the reuse rule."""
        start = time.monotonic()
        try:
            servers = self.manager.get_servers(spec.requirements)
        except (ServerError, QueryError) as exc:  # environment problems (no binary...) end the run
            ms = int((time.monotonic() - start) * 1000)
            message = f"servers for {spec.full_name} could not be started: {exc}"
            evidence = ""
            if self.evidence is not None:
                evidence = self.evidence.save(spec.full_name, message,
                                              self.manager.last_servers, None).path
            return Outcome(spec.full_name, "fail", ms, self.manager.bot_name, message,
                           evidence=evidence)
        self._inject(spec, servers)
        result = TimedResult()
        suite = unittest.TestLoader().loadTestsFromModule(spec.module)
        timed_out = False

        def on_alarm(_signum: int, _frame: Any) -> None:
            """--test-timeout expired: stop the test and kill its servers."""
            nonlocal timed_out
            timed_out = True
            result.stop()
            for server in servers:
                server.kill()
            raise TestTimeoutError(f"test exceeded --test-timeout {self.test_timeout:.0f}s")

        previous = None
        if self.test_timeout > 0:
            previous = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.test_timeout)
        try:
            suite.run(result)
        except TestTimeoutError:
            timed_out = True
        finally:
            if self.test_timeout > 0:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous or signal.SIG_DFL)
        ms = int((time.monotonic() - start) * 1000)
        status, message = self._judge(spec, result, servers, timed_out)
        passed = status in ("pass", "skipped")
        evidence = ""
        if not passed:
            self.manager.teardown()  # quiet datadirs before they are copied
            if self.evidence is not None:
                saved = self.evidence.save(spec.full_name, message, servers, self.executor.logdir)
                evidence = saved.path
                if saved.backtrace:
                    message += f"\n--- backtrace (top frames) ---\n{saved.backtrace}"
        try:
            self.manager.after_test(passed)
        except (KewpieError, ServerError) as exc:
            self.log.warning(f"resetting servers after {spec.full_name} failed: {exc}")
            self.manager.teardown(fast=True)
        return Outcome(spec.full_name, status, ms, self.manager.bot_name, message,
                       result.method_rows, evidence=evidence)

    def _inject(self, spec: TestSpec, servers: list[Server]) -> None:
        """Give the module its servers, the 2012 way and the modern way."""
        self.executor.servers = servers
        self.executor.current_testcase = spec
        module = spec.module
        module.servers = servers
        module.test_executor = self.executor
        module.server_manager = self.manager
        compat_base.servers = servers
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, KewpieTestCase):
                value.servers = servers
                value.server_manager = self.manager
                value.test_executor = self.executor

    def _judge(self, spec: TestSpec, result: TimedResult, servers: list[Server],
               timed_out: bool) -> tuple[str, str]:
        parts: list[str] = []
        for test, text in result.failures + result.errors:
            parts.append(f"{test.id().split('.', 2)[-1]}:\n{_short_traceback(text)}")
        dead = []
        if not timed_out:
            for server in servers:
                health = server.health()
                if health.state in ("crashed", "hung"):
                    dead.append(server)
                    parts.append(f"{health.message}; error log {server.error_log} ends with:\n"
                                 f"{server.error_log_tail(20)}")
        if timed_out:
            status = "timeout"
        elif result.failures or result.errors or dead:
            status = "fail"
        elif result.testsRun and len(result.skipped) == result.testsRun:
            status = "skipped"
            parts = [f"skipped: {reason}" for _, reason in result.skipped[:3]]
        elif result.testsRun == 0:
            status = "skipped"
            parts = [f"{spec.path} has no test methods"]
        else:
            status = "pass"
        if status in ("fail", "timeout"):
            reports = [r for r in (s.status_report() for s in servers) if r]
            if reports:
                parts.append("--- server status ---\n" + "\n".join(reports))
        if status in ("fail", "timeout") and not dead:
            for server in servers:
                tail = server.error_log_tail(8)
                if tail:
                    parts.append(f"--- {server.name} error log ({server.error_log}) tail ---\n{tail}")
        return status, "\n".join(parts)
