"""One attempt of one test: the one pipeline every way in goes through.

servers → run → judge → post-checks → evidence → reuse decision.  A way in
supplies only how its test runs and what it returned:

- kewpie's suites (:mod:`lib.run.runner`): a unittest module, a
  :class:`TestBody` the pipeline runs (:meth:`Attempt.run`);
- mysql-test cases (:mod:`lib.modes.mtr.lane`): mariadb-test with mtr's own
  check-testcase, check-warnings and restart protocol, a body that also says
  which servers it saw crash and whether its servers need a restart;
- the pytest plugin (:mod:`lib.pytest_plugin.session`): pytest runs the test
  itself, so the plugin calls the stages from its hooks: :meth:`Attempt.start`
  in the fixture's setup, :meth:`Attempt.environ` and :meth:`Attempt.watching`
  around the call, :meth:`Attempt.judge` at the call's report and
  :meth:`Attempt.finish` at the fixture's teardown.

The stages:

1. servers (:meth:`Attempt.start`): from the way in's getter; when they cannot
   start, the test fails with why, the set's evidence, and the set is torn down.
2. run: under the watchdog (``--test-timeout``, :mod:`lib.run.watchdog`) with the
   test's tag (:mod:`lib.run.leftovers`).
3. judge (:meth:`Attempt.judge`): a timeout; dead servers (those the body saw
   crash, else each server's health) with their report (:mod:`lib.run.deadreport`)
   and the known-bugs lookup (:mod:`lib.run.knownfailures`); a failed test's
   server status and error-log tails.
4. post-checks (in :meth:`Attempt.finish`): processes the test left running,
   kewpie's error-log warnings check (not for a body that checks its servers' logs
   itself: mtr's check-warnings is part of a case's run), valgrind and gdb
   (:mod:`lib.run.postchecks`).  Each fails a passing test and adds its text to a
   failing one.
5. evidence (:mod:`lib.run.evidence`), or the failed test's servers kept running
   (``--keep-failed``).
6. reuse: the manager's reuse rule, or the body's own decision (an mtr case:
   check-testcase found its servers changed, or it restarted them).

Only this module calls the judging and post-check functions; the house rule is
tests/unit/run/test_one_pipeline.py.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from ..checks.errorlog import LogMarks
from ..errors import QueryError, ServerError
from ..platform.logsetup import get_logger
from ..platform.process import TAG_BOT, TAG_TEST
from ..servers.health import HealthState
from ..servers.manager import ServerManager, stop_all
from ..servers.server import Server
from ..suites.status import TestStatus
from .deadreport import dead_server_report
from .evidence import EvidenceKeeper
from .knownfailures import KnownFailures, KnownVerdict
from .leftovers import collect_leftovers, leftover_report, tagged_environment, tags_for_test
from .postchecks import (debugger_problems, forget_fault_windows, warnings_fail, warnings_note,
                         warnings_problem)
from .report import Outcome
from .watchdog import TestWatchdog

if TYPE_CHECKING:
    from ..config import RunConfig
    from ..suites.loader import TestSpec

TAIL_LINES = 8   # of each server's error log, under a failure that is no server's death
RESTART_REASON = "the test failed or restarted its servers"


@dataclass
class RawResult:
    """What a test body returned, before kewpie judges it."""

    status: TestStatus
    message: str = ""
    methods: Sequence[tuple[str, str, int]] = ()
    problems: Sequence[str] = ()   # found beside the run (a --gendata load): each fails it
    # the servers the body saw crash, and why; None: each server's health decides
    crashed: Sequence[tuple[Server, str]] | None = None
    needs_restart: bool = False    # for a body that decides its servers' reuse itself
    restart_reason: str = ""
    refused: str = ""              # not run: its server options are unsafe (why)


@dataclass(frozen=True)
class Rules:
    """What differs between the ways in once a test ran."""

    suite_path: str = ""                   # the folder of its known_bugs.txt
    kept_processes: tuple[str, ...] = ()   # names of processes it may leave running
    can_keep: bool = True                  # whether its suite can keep one (the report's hint)
    check_warnings: bool = True            # its own rule: new error-log lines fail it
    suppressions: tuple[Sequence[str], ...] = ()   # groups of error-log regexes
    kewpie_warnings: bool = True           # False: the body checks its servers' logs itself
    reuse_rule: bool = True                # False: the body decides (RawResult.needs_restart)

    @classmethod
    def for_spec(cls, spec: TestSpec, own: Sequence[str] = ()) -> "Rules":
        """A kewpie test's: its suite's known bugs, kept processes and suppressions, its
        module's warnings rule, and own (the test's suppressions, a list it may grow)."""
        return cls(spec.suite.path, tuple(spec.suite.kept_processes), True,
                   spec.check_warnings, (spec.suite.suppressions, own))

    @classmethod
    def self_checked(cls, suite_path: str) -> "Rules":
        """A mysql-test case's: mtr's own check-warnings and check-testcase decide."""
        return cls(suite_path, (), False, kewpie_warnings=False, reuse_rule=False)


@dataclass
class Verdict:
    """What the judge made of a raw result."""

    status: TestStatus
    message: str
    dead: list[Server]
    known: KnownVerdict
    raw: RawResult


class TestBody:
    """How one test runs: what a way in gives :meth:`Attempt.run` (subclass it)."""

    __test__ = False  # not a pytest test class despite the name

    def prepare(self, servers: list[Server]) -> str:
        """Before the run, outside the watchdog: a problem ('' when none) fails the test,
        which does not run."""
        del servers
        return ""

    def run(self, servers: list[Server], tags: dict[str, str]) -> RawResult:
        """Run the test on servers; what it started carries tags.  Its own verdict."""
        raise NotImplementedError

    def interrupt(self) -> None:
        """The watchdog's: end the run from outside (its servers are killed besides)."""

    def evidence_logs(self) -> str | None:
        """The tool logs kept with a failure's evidence (None: the bot's log directory)."""
        return None

    def server_pids(self) -> list[int]:
        """Pids of servers besides the attempt's and its manager's, never a leftover."""
        return []


class Pipeline:
    """One bot's pipeline: what it keeps from one test to the next."""

    def __init__(self, config: RunConfig, bot: str, evidence: EvidenceKeeper | None,
                 log_dir: str | None, test_timeout: float = 0.0, keep_failed: bool = False,
                 timeout_option: str = "--test-timeout") -> None:
        """test_timeout 0: no watchdog; keep_failed: a failed test's servers stay up
        (the first only); timeout_option: the watchdog's option, as a report names it."""
        self.check_warnings = config.debugging.check_warnings
        self.bot = bot
        self.evidence = evidence
        self.log_dir = log_dir
        self.test_timeout = test_timeout
        self.keep_failed = keep_failed
        self.timeout_option = timeout_option
        self.known = KnownFailures(tuple(config.reporting.known_bugs))
        self.log_marks = LogMarks()  # how far each server's error log was checked
        self.valgrind_seen: set[str] = set()
        self.kept: list[Server] = []  # keep_failed: the failed test's servers, left running
        self.kept_test = ""
        self.unit_failed = False      # a test of the current unit (pytest's scope) failed
        self.tests_run = 0            # numbers each test's tag
        self.log = get_logger()

    def attempt(self, name: str, manager: ServerManager, rules: Rules) -> Attempt:
        """A new attempt of the test name on manager's servers."""
        return Attempt(self, name, manager, rules)

    def next_tag(self, manager: ServerManager) -> str:
        """The value of the next test's ``KEWPIE_TEST`` tag (``<run>/<bot>/<n>``)."""
        self.tests_run += 1
        bot = manager.settings.env.get(TAG_BOT) or manager.bot_name
        return f"{bot}/{self.tests_run}"


class Attempt:
    """One test's way through the pipeline (see the module docstring)."""

    def __init__(self, pipeline: Pipeline, name: str, manager: ServerManager,
                 rules: Rules) -> None:
        self.pipeline = pipeline
        self.name = name
        self.manager = manager
        self.rules = rules
        self.started = time.monotonic()
        self.servers: list[Server] = []
        self.tags: dict[str, str] = {}
        self.watchdog = TestWatchdog(0.0, lambda: None)
        self.verdict: Verdict | None = None
        self.left: str | None = None   # the leftover report, once swept
        self.log = pipeline.log

    # ------------------------------------------------------------ 1. servers
    def start(self, get_servers: Callable[[], list[Server]],
              errors: tuple[type[Exception], ...] = (ServerError, QueryError)) -> Outcome | None:
        """The test's servers (``self.servers``) from get_servers; None when they run,
        else the failed outcome (errors: what counts as servers that could not start)."""
        try:
            self.servers = list(get_servers())
        except errors as exc:
            return self._not_started(exc)
        self.tags = tags_for_test(self.manager.settings.env,
                                  self.pipeline.next_tag(self.manager))
        return None

    def _not_started(self, exc: Exception) -> Outcome:
        message = f"servers for {self.name} could not be started: {exc}"
        detail = getattr(exc, "log_tail", "") or ""
        if detail:
            message += f"\n{detail}"
        evidence = ""
        if self.pipeline.evidence is not None:
            evidence = self.pipeline.evidence.save(self.name, message, self.manager.last_servers,
                                                   None).path
        self.manager.teardown(fast=True)
        return Outcome(self.name, TestStatus.FAIL, self._ms(), self.pipeline.bot, message,
                       evidence=evidence, resets=1)

    # ------------------------------------------------------------ 2. run
    def run(self, body: TestBody) -> Outcome:
        """Every stage after :meth:`start`, for a body the pipeline runs."""
        problem = body.prepare(self.servers)
        raw: RawResult | None = None
        if not problem:
            with self.watching(body.interrupt):
                raw = body.run(self.servers, dict(self.tags))
        self.sweep(body.server_pids())
        if raw is None:  # not run, or ended by the watchdog's last resort
            raw = RawResult(TestStatus.FAIL if not problem else TestStatus.PASS)
        self.judge(replace(raw, problems=[problem, *raw.problems]) if problem else raw)
        return self.finish(tool_logs=body.evidence_logs)

    @contextmanager
    def environ(self) -> Iterator[None]:
        """The test's tags in os.environ while the block runs: what the test starts from
        this process inherits them."""
        with tagged_environment(self.tags):
            yield

    def watching(self, interrupt: Callable[[], None] = lambda: None) -> TestWatchdog:
        """The watchdog over the test's run (a context manager): when time is up,
        interrupt() ends the run from outside and the servers are killed."""
        def on_timeout() -> None:
            """The watchdog thread: the run stopped, then the servers killed."""
            interrupt()
            for server in self.servers:
                try:
                    server.kill()
                except Exception:  # noqa: BLE001 - the other servers must still die
                    self.log.debug(f"killing {server.name} on timeout failed", exc_info=True)

        self.watchdog = TestWatchdog(self.pipeline.test_timeout, on_timeout)
        return self.watchdog

    def sweep(self, extra_pids: Sequence[int] = ()) -> str:
        """Stop (by pid) and report what the test left running (once)."""
        if self.left is None:
            pids = [p for p in (s.pid for s in [*self.servers, *self.manager.servers]) if p]
            found = collect_leftovers(self.tags.get(TAG_TEST, ""), self.rules.kept_processes,
                                      [*pids, *extra_pids]) if self.tags else []
            self.left = leftover_report(found, can_keep=self.rules.can_keep)
        return self.left

    # ------------------------------------------------------------ 3. judge
    def judge(self, raw: RawResult) -> Verdict:
        """The test's status and report from raw: a timeout, dead servers and their
        known bugs, a failure's server status and log tails."""
        timed_out = self.watchdog.timed_out
        dead = [] if timed_out else self._dead(raw)
        parts = [raw.message] if raw.message else []
        parts += [dead_server_report(server, why) for server, why in dead]
        if timed_out:
            status = TestStatus.TIMEOUT
            parts.insert(0, f"test exceeded {self.pipeline.timeout_option} "
                            f"{self.pipeline.test_timeout:g}s: its servers were killed")
        else:
            status = TestStatus.FAIL if dead else raw.status
        if status.failed:
            parts += self._failure_context(bool(dead))
        servers = [server for server, _ in dead]
        known = self.pipeline.known.judge(self.rules.suite_path, servers) if servers \
            else KnownVerdict()
        if known.note:
            parts.append(known.note)
        self.verdict = Verdict(status, "\n".join(parts), servers, known, raw)
        return self.verdict

    def _dead(self, raw: RawResult) -> list[tuple[Server, str]]:
        """The servers that died: as the body saw them, else by each one's health."""
        if raw.crashed is not None:
            return list(raw.crashed)
        dead = []
        for server in self.servers:
            health = server.health()
            if HealthState(health.state).dead:
                dead.append((server, health.message))
        return dead

    def _failure_context(self, dead: bool) -> list[str]:
        """A failed test's server status and, unless a server died (its report has its
        log), each server's error-log tail."""
        parts = []
        reports = [r for r in (s.status_report() for s in self.servers) if r]
        if reports:
            parts.append("--- server status ---\n" + "\n".join(reports))
        if not dead:
            for server in self.servers:
                tail = server.errlog.tail(TAIL_LINES)
                if tail:
                    parts.append(f"--- {server.name} error log ({server.paths.error_log}) tail ---\n"
                                 f"{tail}")
        return parts

    # ------------------------------------------------------------ 4.-6.
    def finish(self, failures: Sequence[str] = (), continues: bool = False,
               reusable: bool = True,
               tool_logs: Callable[[], str | None] | None = None) -> Outcome:
        """Post-checks, evidence and the reuse decision; the test's outcome.

        failures: what failed outside the body's result (pytest's phases); continues:
        the next test goes on with these servers as they are (pytest's scope unit: no
        teardown, no reuse rule now); reusable: False when the servers must not serve
        another test even if it passed (an expected failure); tool_logs: the tool logs
        for the evidence (the bot's log directory by default)."""
        verdict = self.verdict or self.judge(RawResult(
            TestStatus.FAIL if failures else TestStatus.PASS))
        status, message = self._with_failures(verdict, failures)
        left = self.sweep()
        keep_failed = self.pipeline.keep_failed and not self.pipeline.kept
        self._stop_for_debugger(status, keep_failed)
        status, message, notes = self._post_checks(status, message,
                                                   [*verdict.raw.problems, left])
        ms = self._ms()
        kept = keep_failed and status.failed and any(s.is_alive() for s in self.servers)
        evidence, message = self._evidence(status, message, kept, continues,
                                           tool_logs or (lambda: self.pipeline.log_dir))
        resets, reason = (0, "") if kept else self._reuse(status, verdict.raw, continues,
                                                           reusable)
        return Outcome(self.name, status, ms, self.pipeline.bot, message, verdict.raw.methods,
                       evidence=evidence, resets=resets, reset_reason=reason,
                       refused=verdict.raw.refused, notes=notes, known=verdict.known.known)

    @staticmethod
    def _with_failures(verdict: Verdict, failures: Sequence[str]) -> tuple[TestStatus, str]:
        """The verdict with failures from outside the body's result put first."""
        if not failures:
            return verdict.status, verdict.message
        parts = list(failures)
        if verdict.message and not any(verdict.message in f for f in failures):
            parts.append(verdict.message)
        status = verdict.status if verdict.status.failed else TestStatus.FAIL
        return status, "\n".join(parts)

    def _stop_for_debugger(self, status: TestStatus, keep_failed: bool) -> None:
        """A wrapper that reports when the server exits (valgrind's leaks): its servers
        stop now, and the next test gets fresh ones."""
        wrapper = self.manager.settings.wrapper
        if (wrapper is not None and wrapper.stop_after_test and not self.watchdog.timed_out
                and not (keep_failed and status.failed)):
            stop_all(self.servers)
            self.manager.request_reset()

    def _post_checks(self, status: TestStatus, message: str,
                     problems: list[str]) -> tuple[TestStatus, str, str]:
        """The leftovers and problems found so far, the warnings check and the debugger's
        reports: each fails a passing test, and adds its text to a failing one.  Error-log
        lines that only get reported (:func:`~lib.run.postchecks.warnings_fail`) are added
        to a failing test's message, else returned as its notes: (status, message, notes)."""
        problem, reported = self._warnings() if self.rules.kewpie_warnings else ("", "")
        problems = [*problems, problem]
        problems += debugger_problems(self.manager.settings.wrapper, self.servers,
                                      self.pipeline.valgrind_seen, status.failed)
        problems = [p for p in problems if p]
        if problems and not status.failed:
            status, message = TestStatus.FAIL, ""
        if status.failed:
            return status, "\n".join(p for p in [message, *problems, reported] if p), ""
        return status, message, reported

    def _warnings(self) -> tuple[str, str]:
        """kewpie's error-log warnings check: (what fails the test, what is only reported)."""
        marks = self.pipeline.log_marks
        marks.forget_others(self.servers)
        check = self.pipeline.check_warnings
        if check is False:
            for server in self.servers:
                marks.skip_to_end(server)
            forget_fault_windows(self.servers)
            return "", ""
        found = warnings_problem(marks, self.servers,
                                 [regex for group in self.rules.suppressions for regex in group])
        if warnings_fail(check, self.rules.check_warnings):
            return found, ""
        return "", warnings_note(found) if found else ""

    def _evidence(self, status: TestStatus, message: str, kept: bool, continues: bool,
                  tool_logs: Callable[[], str | None]) -> tuple[str, str]:
        """A failed test's servers kept, or stopped quietly; its evidence saved: (where,
        the message with the core's backtrace)."""
        if not status.failed:
            return "", message
        if kept:
            self.pipeline.kept, self.pipeline.kept_test = list(self.servers), self.name
        elif not continues:
            self.manager.teardown()  # quiet datadirs before they are copied
        if self.pipeline.evidence is None:
            return "", message
        logs = tool_logs()  # a body without its own (None): the bot's log directory, as before
        saved = self.pipeline.evidence.save(self.name, message, self.servers,
                                            logs if logs is not None else self.pipeline.log_dir)
        if saved.backtrace:
            message += f"\n--- backtrace (top frames) ---\n{saved.backtrace}"
        return saved.path, message

    def _reuse(self, status: TestStatus, raw: RawResult, continues: bool,
               reusable: bool) -> tuple[int, str]:
        """Whether the next test gets these servers: (resets, why)."""
        pipeline = self.pipeline
        if continues:
            pipeline.unit_failed = pipeline.unit_failed or status.failed
            return 0, ""
        if not self.rules.reuse_rule:
            if status.failed:
                return 1, RESTART_REASON
            if raw.needs_restart:
                self.manager.teardown(discard=True)
                return 1, raw.restart_reason or RESTART_REASON
            return 0, ""
        passed = status.ok and reusable and not pipeline.unit_failed
        pipeline.unit_failed = False
        reasons = self.manager.after_test(passed)
        return (1 if reasons else 0), "; ".join(reasons)

    def _ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)
