"""One pytest process's bot: a RunEnvironment, its ServerManager, evidence, and the end.

Built as ``lib/run/native.py`` builds a bot (``env.make_manager``,
``BotSetup.from_config``, ``EvidenceKeeper``), opened at the first test that
asks for servers, closed with ``env.close()`` when the session ends.  Each
test gets servers with ``manager.get_servers`` and a ``TestContext``; when it
ends, its failure is judged as the runner judges one (crashed or hung
servers fail it, evidence goes to ``workdir/failed/<name>/``) and the reuse
rule (``manager.after_test``) decides whether the next test shares its
servers.  Tests of one *unit* (the scope: function, class, module, package or
session) with equal requirements share servers without the rule in between,
as the methods of one kewpie test module do.
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

from ..errors import KewpieError, QueryError, ServerError
from ..platform.logsetup import configure, get_logger
from .helper import KewpieServers, new_result
from .marker import Declared
from ..run.config import RunConfig
from ..run.deadreport import dead_server_report
from ..run.environment import RunEnvironment
from ..run.evidence import EvidenceKeeper
from ..run.recording import RunHistory, open_history
from ..run.setup import check_galera
from ..servers.health import HealthState
from ..servers.manager import ServerManager
from ..servers.option_safety import check_requirements
from ..servers.requirements import Requirements
from ..servers.server import Server
from ..suites.context import BotSetup, TestContext
from ..suites.loader import SuiteConfig, TestSpec

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
        self.evidence: EvidenceKeeper | None = None
        self.saved: list[Saved] = []
        self.kept: list[Server] = []
        self.kept_test = ""
        self.interrupted = False
        self.unit_failed = False
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
            configure(self.config.verbose, logfile=self.log_file, console=False)
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
            self.evidence = env.evidence_keeper(self.log_file)
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
        """Servers for one test (the current ones when the reuse rule kept them) and its
        context.  ServersNotStarted when they cannot start (evidence saved)."""
        assert self.manager is not None and self.setup is not None
        name = evidence_name(nodeid)
        suite, _, test = name.partition(".")
        reqs = declared.requirements
        try:
            servers = self.manager.get_servers(reqs)
        except (ServerError, QueryError) as exc:
            message = f"servers for {name} could not be started: {exc}"
            self._save(name, message, self.manager.last_servers, None)
            self.manager.teardown(fast=True)
            raise ServersNotStarted(message) from None
        spec = TestSpec(suite=SuiteConfig(name=suite, path=os.path.dirname(path)),
                        name=test or suite, path=path, module=module or ModuleType(suite),
                        requirements=reqs)
        context = TestContext(spec, tuple(servers), self.manager, self.setup, new_result())
        # KewpieTestCase names a test's backup directory after its class's module: the test's
        helper_class = type("KewpieServers", (KewpieServers,), {"__module__": name})
        return TestRun(context, helper_class(context), scope_unit)

    def judge(self, run: TestRun, failed: bool) -> tuple[bool, str]:
        """After a test's call: (a server crashed or hung, what to add to its report) —
        the health, status and error-log tails kewpie's rows show."""
        parts: list[str] = []
        dead = False
        for server in run.servers:
            health = server.health()
            if HealthState(health.state).dead:
                dead = True
                parts.append(dead_server_report(server, health.message))
        if failed or dead:
            reports = [r for r in (s.status_report() for s in run.servers) if r]
            if reports:
                parts.append("--- server status ---\n" + "\n".join(reports))
        if failed and not dead:
            for server in run.servers:
                tail = server.errlog.tail(8)
                if tail:
                    parts.append(f"--- {server.name} error log ({server.paths.error_log}) tail ---\n"
                                 f"{tail}")
        return dead, "\n".join(parts)

    def end(self, run: TestRun, continues: bool) -> None:
        """After a test: its helpers' cleanups, evidence of a failure, and the reuse rule
        — unless the next test continues the same unit on the same servers (continues),
        or servers of a failed test are kept (--kewpie-keep-failed)."""
        assert self.manager is not None
        failed = bool(run.failures)
        if failed:
            run.helper.mark_failed("\n".join(run.failures))
        try:
            run.helper.finish()
        finally:
            if not self.interrupted:
                self._after(run, failed, continues)

    def _after(self, run: TestRun, failed: bool, continues: bool) -> None:
        assert self.manager is not None and self.setup is not None
        if failed:
            message = "\n".join(run.failures)
            if self.keep_failed:
                self._save(run.name, message, run.servers, self.setup.log_dir)
                self.kept, self.kept_test = run.servers, run.name
                self.log.info(f"keeping the servers of {run.name} running (--kewpie-keep-failed)")
                return
            if not continues:
                self.manager.teardown()  # quiet datadirs before they are copied
            self._save(run.name, message, run.servers, self.setup.log_dir)
            self.unit_failed = self.unit_failed or continues
        if continues:
            return
        passed = not failed and not run.xfailed and not self.unit_failed
        self.unit_failed = False
        reasons = self.manager.after_test(passed)
        self.log.info(f"{run.name}: {'passed' if passed else 'failed'}; servers "
                      f"{'reset: ' + '; '.join(reasons) if reasons else 'kept'}")

    def _save(self, name: str, message: str, servers: list[Server], tool_logdir: str | None) -> None:
        assert self.evidence is not None
        saved = self.evidence.save(name, message, servers, tool_logdir)
        self.saved.append(Saved(name, saved.path))

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
