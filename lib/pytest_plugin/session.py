"""One pytest process's bot: a RunEnvironment, its ServerManager, evidence, and the end.

Built as ``lib/run/native.py`` builds a bot (``env.make_manager``,
``BotSetup.from_config``, an evidence keeper), opened at the first test that
asks for servers, closed with ``env.close()`` when the session ends.  Each
test is an attempt of the bot's pipeline (:mod:`lib.run.attempt`), as a
kewpie test is: its servers and a ``TestContext`` when its fixture is set up,
the watchdog around its call, the judge at the call's report (crashed or hung
servers fail it, with the known bugs they died of), and at the fixture's
teardown the post-checks (leftover processes, the error-log warnings check),
the evidence (``workdir/failed/<run>/<name>/``) and the reuse rule, which
decides whether the next test shares its servers.  Tests of one *unit* (the
scope: function, class, module, package or session) with equal requirements
share servers without the rule in between, as the methods of one kewpie test
module do.
"""
from __future__ import annotations

import dataclasses
import os
import re
import signal
import threading
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable

from ..errors import KewpieError
from ..platform.logsetup import configure, get_logger
from .helper import KewpieServers, new_result
from .marker import Declared
from ..config import RunConfig
from ..run.attempt import Attempt, Pipeline, RawResult, Rules, Verdict
from ..run.environment import RunEnvironment
from ..run.recording import RunHistory, open_history
from ..run.setup import check_galera
from ..servers.manager import ServerManager
from ..servers.option_safety import check_requirements
from ..servers.requirements import Requirements
from ..servers.server import Server
from ..suites.context import BotSetup, TestContext
from ..suites.loader import SuiteConfig, TestSpec, warnings_fail
from ..suites.status import TestStatus

UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._=\[\]+-]")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class ServersNotStarted(Exception):
    """A test's servers could not be started (the test errors; the session goes on)."""


def bot_name(worker: str | None) -> str:
    """The bot of a pytest process: ``bot0``, or ``botN`` for pytest-xdist's worker ``gwN``."""
    if worker and worker.startswith("gw") and worker[2:].isdigit():
        return f"bot{int(worker[2:])}"
    return "bot0"


def evidence_name(nodeid: str) -> str:
    """A test's name in rows and under workdir/failed: ``file.test`` (``file.Class.test``),
    parameters kept, characters a directory name should not have replaced."""
    path, _, rest = nodeid.partition("::")
    module = os.path.splitext(os.path.basename(path))[0]
    return UNSAFE_NAME.sub("_", f"{module}.{rest.replace('::', '.')}" if rest else module)


@dataclass
class TestRun:
    """One test's servers, context and helper, and the failures pytest reported for it."""

    __test__ = False  # not a test class despite the name

    context: TestContext
    helper: KewpieServers
    scope_unit: str
    attempt: Attempt
    failures: list[str] = field(default_factory=list)
    xfailed: bool = False

    @property
    def name(self) -> str:
        """``file.test``."""
        return self.context.name

    @property
    def servers(self) -> list[Server]:
        """The test's servers."""
        return list(self.context.servers)


@dataclass(frozen=True)
class Saved:
    """Evidence kept for one failed test."""

    test: str
    path: str


class KewpieSession:
    """The bot of one pytest process (pytest-xdist: of one worker)."""

    def __init__(self, config: RunConfig, bot: str, session_id: str | None = None,
                 keep_failed: bool = False) -> None:
        """session_id: pytest-xdist's run id, shared by the workers of one run (they
        share the workdir, one bot each); None for a lone pytest process."""
        self.config = config
        self.bot = bot
        self.session_id = session_id
        self.keep_failed = keep_failed
        self.declared: list[tuple[str, Requirements]] = []
        self.env: RunEnvironment | None = None
        self.manager: ServerManager | None = None
        self.setup: BotSetup | None = None
        self.pipeline: Pipeline | None = None
        self.saved: list[Saved] = []
        self.known: list[tuple[str, str]] = []  # (test, the known bugs its servers died of)
        self.kept: list[Server] = []
        self.kept_test = ""
        self.interrupted = False
        self.log_file = ""
        self.history: RunHistory | None = None
        self._signals: dict[int, Any] = {}
        self.log = get_logger()

    # ------------------------------------------------------------ opening
    @property
    def is_open(self) -> bool:
        """True once the environment and the bot's manager exist."""
        return self.manager is not None

    def open(self) -> None:
        """Open the workdir (with the session's other workers under pytest-xdist), find
        the code tree, check every collected test's servers (Galera pieces, unsafe
        options) before any starts, and make the bot's manager.  KewpieError on bad
        input or environment; nothing is left running or locked then."""
        env = RunEnvironment(self.config)
        self.env = env
        self._catch_stop_signals()
        try:
            if self.session_id:
                env.join_workdir(self.session_id)
            else:
                env.open_workdir(fresh=True)
            self.log_file = (env.workdir.bot_log_file(self.bot) if self.session_id
                             else env.workdir.log_file)
            configure(self.config.reporting.verbose, logfile=self.log_file, console=False)
            tree = env.discover_tree()
            if any(reqs.server_type == "galera" for _, reqs in self.declared):
                check_galera(self.config, tree, self.log)
            check_requirements(self.declared, tree.server, env.workdir.path)
            manager = env.make_manager(self.bot)
            if self.keep_failed:  # kept servers must outlive pytest, as --start-and-exit's do
                manager.settings = dataclasses.replace(manager.settings, die_with_parent=False)
            logdir = os.path.join(manager.bot_dir, "log")
            os.makedirs(logdir, exist_ok=True)
            self.setup = BotSetup.from_config(self.bot, logdir, env.workdir.path, self.config,
                                              tree)
            self.pipeline = Pipeline(self.config, self.bot, env.evidence_keeper(self.log_file),
                                     logdir, self.config.reporting.test_timeout, self.keep_failed,
                                     timeout_option="--kewpie-test-timeout")
            # the results history: one run per session (pytest-xdist's workers share it)
            self.history = open_history(env, mode="pytest", run_key=(
                f"pytest-xdist:{self.session_id}" if self.session_id else ""))
            self.manager = manager
        except BaseException:
            self.close(interrupted=False)
            raise

    def _catch_stop_signals(self) -> None:
        """SIGTERM and SIGHUP end the session as Ctrl-C does (servers stopped), not the
        process on the spot."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in STOP_SIGNALS:
            self._signals[sig] = signal.signal(sig, _interrupt)

    # ------------------------------------------------------------ one test
    def begin(self, nodeid: str, path: str, module: ModuleType | None, declared: Declared,
              scope_unit: str) -> TestRun:
        """The servers stage of the test's attempt (the current servers when the reuse
        rule kept them) and its context.  ServersNotStarted when they cannot start
        (evidence saved)."""
        assert self.manager is not None and self.setup is not None and self.pipeline is not None
        manager = self.manager
        name = evidence_name(nodeid)
        suite_name, _, test = name.partition(".")
        suite = SuiteConfig(name=suite_name, path=os.path.dirname(path))
        module = module or ModuleType(suite_name)
        spec = TestSpec(suite=suite, name=test or suite_name, path=path, module=module,
                        requirements=declared.requirements,
                        check_warnings=warnings_fail(suite, module))
        own: list[str] = []   # the test's suppressions (kewpie.suppress_warning)
        attempt = self.pipeline.attempt(name, manager, Rules.for_spec(spec, own))
        failed = attempt.start(lambda: manager.get_servers(spec.requirements))
        if failed is not None:
            if failed.evidence:
                self.saved.append(Saved(name, failed.evidence))
            raise ServersNotStarted(failed.message)
        context = TestContext(spec, tuple(attempt.servers), manager, self.setup, new_result(),
                              suppressions=own)
        # KewpieTestCase names a test's backup directory after its class's module: the test's
        helper_class = type("KewpieServers", (KewpieServers,), {"__module__": name})
        return TestRun(context, helper_class(context), scope_unit, attempt)

    def judge(self, run: TestRun, status: TestStatus) -> Verdict:
        """After a test's call (status: what pytest made of it): the attempt's judge --
        crashed or hung servers with the known bugs they died of, a failure's server
        status and error-log tails."""
        return run.attempt.judge(RawResult(status))

    def end(self, run: TestRun, continues: bool) -> str:
        """After a test: its helpers' cleanups, then the rest of its attempt (post-checks,
        evidence, the reuse rule) -- no teardown or reuse rule when the next test continues
        the same unit on the same servers (continues), none when a failed test's servers
        are kept (--kewpie-keep-failed).  Returns what the post-checks found in a test that
        had not failed ('' when nothing): the test fails at its teardown with it."""
        if run.failures:
            run.helper.mark_failed("\n".join(run.failures))
        try:
            with run.attempt.environ():
                run.helper.finish()
        finally:
            problem = "" if self.interrupted else self._after(run, continues)
        return problem

    def _after(self, run: TestRun, continues: bool) -> str:
        assert self.pipeline is not None and self.setup is not None
        log_dir = self.setup.log_dir
        verdict = run.attempt.verdict
        judged_failed = verdict is not None and verdict.status.failed
        outcome = run.attempt.finish(run.failures, continues, reusable=not run.xfailed,
                                     tool_logs=lambda: log_dir)
        if outcome.evidence:
            self.saved.append(Saved(run.name, outcome.evidence))
        if outcome.failed and outcome.known:
            self.known.append((run.name, outcome.known))
        if outcome.notes:
            self.log.info(f"{run.name}: {outcome.notes}")
        if self.pipeline.kept and not self.kept:
            self.kept, self.kept_test = self.pipeline.kept, self.pipeline.kept_test
            self.log.info(f"keeping the servers of {run.name} running (--kewpie-keep-failed)")
        elif not continues:
            self.log.info(f"{run.name}: {outcome.status}; servers "
                          f"{'reset: ' + outcome.reset_reason if outcome.resets else 'kept'}")
        if outcome.failed and not run.failures and not judged_failed:
            return outcome.message
        return ""

    def record(self, nodeid: str, status: str, duration_ms: int, failure: str) -> None:
        """Record a finished kewpie test in the results history (its evidence, if kept)."""
        if self.history is None:
            return
        name = evidence_name(nodeid)
        evidence = next((s.path for s in reversed(self.saved) if s.test == name), "")
        self.history.record_result(name, status, duration_ms, failure=failure,
                                   evidence=evidence, bot=self.bot)

    # ------------------------------------------------------------ the end
    def describe_kept(self) -> list[str]:
        """One line per kept server: name, address, socket, vardir."""
        return [f"{s.name}: 127.0.0.1:{s.port} socket {s.paths.socket_file} vardir {s.paths.vardir}"
                for s in self.kept]

    def close(self, interrupted: bool, exit_code: int | None = None) -> None:
        """Stop every server this process started (fast when interrupted) — except the
        kept servers of a failed test, which outlive pytest until ``--mode=cleanup``;
        record the end of the session's run in the results history (exit_code: pytest's,
        when this process knows it)."""
        self.interrupted = self.interrupted or interrupted
        env, self.env = self.env, None
        history, self.history = self.history, None
        if history is not None:
            history.close(exit_code)
        try:
            if env is not None:
                if self.kept and not self.interrupted:
                    env.keep_servers = True
                else:
                    self.kept = []
                env.close(fast=self.interrupted)
        finally:
            self.manager = None
            for sig, handler in self._signals.items():
                signal.signal(sig, handler)
            self._signals = {}


def _interrupt(signum: int, _frame: object) -> None:
    """SIGTERM/SIGHUP: end the session as Ctrl-C does."""
    raise KeyboardInterrupt(f"signal {signum}")


def ignoring_sigint(step: Callable[[], None]) -> None:
    """Run step with Ctrl-C ignored (a second Ctrl-C must not interrupt the cleanup)."""
    if threading.current_thread() is not threading.main_thread():
        step()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        step()
    finally:
        signal.signal(signal.SIGINT, previous)


def sweep_after_workers(config: RunConfig, session_id: str) -> int:
    """pytest-xdist's controller, once its workers are gone: stop what the session's
    workers left running (a worker killed before its cleanup) and forget it.

    Only when the workdir's lock still names this session and no process holds
    it; returns how many processes were stopped.
    """
    from ..run.cleanup import cleanup
    from ..servers.state import StateFile
    from ..platform.safedirs import read_small_file
    held_by = (read_small_file(os.path.join(config.workdir, "kewpie.lock"), 200) or "").split()
    if held_by[1:] != ["session", session_id]:
        return 0
    env = RunEnvironment(config)
    try:
        before = [s for path in env.workdir.state_files()
                  for s in StateFile(path).read().get("servers", [])]
        try:
            cleanup(env)
        except KewpieError:  # a worker still holds the workdir: it cleans up itself
            return 0
        for path in env.workdir.state_files():
            StateFile(path).clear()
        return len(before)
    finally:
        env.close()
