"""--mode=mtr: the server's own mysql-test suites (.test/.result) run by mariadb-test on
servers kewpie starts and owns.

Tests are found as mysql-test-run finds them (:mod:`lib.mtr.cases`); each bot
gets an :class:`MtrRunner` whose servers come from the run's one manager
factory with mysql-test's bootstrap (:mod:`lib.mtr.bootstrap`), whose bot
directory is the tests' ``MYSQLTEST_VARDIR`` (:mod:`lib.mtr.vardir`) and whose
cases run through :mod:`lib.mtr.execute`, each as a body of the bot's attempt
pipeline (:mod:`lib.run.attempt`: the watchdog, dead servers with the known-bugs
lookup, leftovers, valgrind, evidence).  Outcomes go through the native
run's reporting (:func:`lib.run.native.run_tests`), so --parallel, --shard,
--junit-xml, --retry, --repeat, --test-timeout, --force, evidence and the
progress line work as for kewpie's own tests.  Servers are kept between tests
with the same options (and config file and time zone) while mtr's
check-testcase finds them unchanged; otherwise they are discarded.  When the
next case needs other servers, they are started on the bot's second lane
(:mod:`lib.modes.mtr.lane`) while the current case runs.
"""
from __future__ import annotations

import os
import shutil
import threading
import time
from dataclasses import dataclass, field

from ...errors import EXIT_OK, KewpieError, QueryError, ServerError, SuiteError, UsageError
from ...mtr.bootstrap import server_features
from ...mtr.cases import Collector, MtrCase
from ...mtr.cnf import MtrConfig
from ...mtr.config import base_environment, find_binary
from ...mtr.suite_rules import BuildFacts, skip_rules
from ...mtr.vardir import MtrVardir
from ...mtr.warnings import WarningScanner
from ...mtr.galera import galera_skip_rules
from ...config import RunConfig
from .options import MtrOptions
from ...run.environment import RunEnvironment
from ...run.attempt import Rules
from .lane import MtrBody, MtrLane
from ...run.native import bot_log_path, run_tests
from ...run.report import Outcome
from ...run.runner import Runner
from ...run.filters import matches
from ...run.selection import apply_shard, mysqld_requirements
from ...servers.option_catalog import OptionCatalog, load_catalog
from ...servers.option_safety import check_requirements
from ...platform.trustedpath import Trust, check_input
from ...servers.codetree import CodeTree, discover
from ...servers.requirements import Requirements
from ...servers.server import Server
from ...suites.context import BotSetup
from ...suites.loader import TestSpec
from ...suites.status import TestStatus

MTR_DIR_CANDIDATES = ("mysql-test", "share/mysql/mysql-test", "share/mariadb/mysql-test",
                      "share/mysql-test", "mariadb-test")


def mtr_root(config_root: str, tree: CodeTree, trust: Trust | None = None) -> str:
    """--mtr-root, else the code tree's mysql-test directory (UsageError if none).  The
    code tree's passes the trust rule as a tree (its cases run shell commands and its
    include files are code); --mtr-root did with the other options (lib/cli.py)."""
    if config_root:
        if not os.path.isfile(os.path.join(config_root, "include", "default_my.cnf")):
            raise UsageError(f"--mtr-root {config_root} is not a mysql-test directory (no "
                             f"include/default_my.cnf)")
        return config_root
    for sub in MTR_DIR_CANDIDATES:
        path = os.path.join(tree.basedir, sub)
        if os.path.isfile(os.path.join(path, "include", "default_my.cnf")):
            check_input(path, "the code tree's mysql-test", trust, tree=True)
            return path
    raise UsageError(f"no mysql-test directory under --basedir {tree.basedir} (looked for "
                     f"{', '.join(MTR_DIR_CANDIDATES)}); install mariadb-test "
                     f"(scripts/setup.sh) or give --mtr-root")


def find_mysqltest(tree: CodeTree) -> str:
    """The code tree's mariadb-test/mysqltest (UsageError if none)."""
    for name in ("mariadb-test", "mysqltest"):
        for sub in ("bin", "client"):
            path = os.path.join(tree.basedir, sub, name)
            if os.access(path, os.X_OK):
                return path
        found = shutil.which(name)
        if found:
            return found
    raise UsageError(f"no mariadb-test or mysqltest under --basedir {tree.basedir} or on PATH; "
                     f"install mariadb-test (scripts/setup.sh)")


class MtrPlan:
    """What every bot shares: the mtr tree, the server's features, the selected cases."""

    def __init__(self, env: RunEnvironment, tree: CodeTree, scratch: str | None = None) -> None:
        """scratch: where the server's help probe may make its throwaway datadir (the
        opened workdir; None: the system's temporary directory)."""
        config = env.config
        mtr = config.section(MtrOptions)
        self.tree = tree
        self.root = mtr_root(mtr.root, tree, env.trust)
        self.mysqltest = find_mysqltest(tree)
        self.features, self.optional_plugins = server_features(tree.server, scratch)
        probe_env = base_environment(tree, self.root, MtrVardir("/nonexistent", self.root, None))
        # mtr's user is whoever runs it; kewpie's servers and mariadb-test run as this one
        user = env.server_user or None
        self.facts = BuildFacts(self.features, probe_env, user, probe_env.get("PLUGIN_DIR", ""),
                                tree.basedir,
                                {"$sst_dump": find_binary(tree, "sst_dump") or None})
        # as mtr: tests named on the command line run even when big
        self.collector = Collector(self.root, skip_rules(self.root, self.features, probe_env,
                                                         self.optional_plugins, user),
                                   big_test=mtr.big_test or bool(config.selection.tests),
                                   enable_disabled=config.selection.enable_disabled,
                                   suitepaths=tuple(config.selection.suitepaths), facts=self.facts)
        self.scanner = WarningScanner.for_tree(self.root)
        # the Galera suites' suite.pm skip lists (lib.mtr.galera)
        self.collector.skips.update(galera_skip_rules(self.root, self.features))
        self._catalog: OptionCatalog | None = None
        self._scratch = scratch

    @property
    def catalog(self) -> OptionCatalog:
        """The server's option names (asked once, cached in the workdir)."""
        if self._catalog is None:
            self._catalog = load_catalog(self.tree.server, self._scratch)
        return self._catalog

    def cases(self, suites: list[str], names: list[str], extra: list[str]) -> list[MtrCase]:
        """The selected cases (with --mysqld options added to every server)."""
        cases = self.collector.collect(suites, names)
        for case in cases:
            case.master_opt += extra
            case.slave_opt += extra
        return cases


@dataclass
class Preparation:
    """Servers being started on the other lane, in the background, for the case the
    scheduler said comes next."""

    case: MtrCase
    lane: MtrLane
    thread: threading.Thread
    problem: str = ""   # why they could not be started ('' = ready, checks recorded)
    env: dict[str, str] = field(default_factory=dict)   # the case's, on that lane
    reqs: Requirements | None = None
    config: MtrConfig | None = None


class MtrRunner(Runner):
    """One bot's runner for mysql-test cases (the native Runner's retries and evidence).

    Its tests run on one lane (:class:`lib.modes.mtr.lane.MtrLane`); when the next
    case the scheduler announces needs other servers, they start on the other
    lane while the current test runs, and that lane takes over when the case
    comes (the old set is killed).  Not under a server wrapper (valgrind, gdb,
    rr...), and not for cases with -master.sh scripts.
    """

    def __init__(self, env: RunEnvironment, bot: str, plan: MtrPlan) -> None:
        config = env.config
        self.server_counts: dict[str, int] = {}
        self.lane = MtrLane(env, bot, plan, "", self.server_counts)
        self.other: MtrLane | None = None   # made when first needed
        manager = self.lane.manager
        setup = BotSetup.from_config(bot, os.path.join(manager.bot_dir, "log"),
                                     env.workdir.path, config, env.tree)
        evidence = env.evidence_keeper(bot_log_path(env, bot))
        super().__init__(manager, setup, config.reporting.test_timeout * manager.settings.timeout_factor,
                         evidence)
        self.bot = bot
        self.plan = plan
        self.env = env
        self.upcoming: MtrCase | None = None
        self.later: MtrCase | None = None   # after upcoming (Runner.expect_later)
        self.preparation: Preparation | None = None

    def current_key(self) -> object:
        """The scheduling key of the case the bot's servers were started for."""
        return self.lane.key if self.lane.manager.servers else None

    def expect_next(self, spec: TestSpec | None) -> None:
        """The case this bot gets after the one it is about to run (its servers may
        start meanwhile)."""
        self.upcoming = spec  # type: ignore[assignment]  # bots pass the mode's own specs

    def expect_later(self, spec: TestSpec | None) -> None:
        """The case after the next one, announced when the next one runs on the current
        servers and this one needs others: they start on the other lane now."""
        self.later = spec  # type: ignore[assignment]  # bots pass the mode's own specs

    # ------------------------------------------------------------------ the other lane
    def _take_prepared(self, case: MtrCase) -> Preparation | None:
        """Before case runs: switch to the lane prepared for it (its preparation),
        dropping a preparation no case will use; a retry of the current case leaves the
        one for the next case alone."""
        prep = self.preparation
        if prep is None or (prep.case is not case
                            and (prep.case is self.upcoming or prep.case is self.later)):
            return None
        prep.thread.join()
        self.preparation = None
        usable = prep.case is case and not prep.problem and not (
            self.lane.manager.servers and self.lane.key == case.requirements)
        if not usable:
            if prep.problem:
                self.log.debug("%s: servers prepared for %s not used: %s", self.bot,
                               prep.case.full_name, prep.problem)
            prep.lane.discard()
            return None
        self.lane.discard_later()  # killed while the case runs; settled before its next use
        self.other, self.lane = self.lane, prep.lane
        self.manager = self.lane.manager
        return prep

    def _prepare_next(self, case: MtrCase) -> None:
        """Start the announced next case's servers on the other lane, in the background,
        when it needs other servers than case."""
        upcoming = self.upcoming
        if (upcoming is not None and upcoming.requirements == case.requirements
                and self.later is not None):
            upcoming = self.later   # the next case runs on these servers: the one after
        if (upcoming is None or upcoming is case or self.preparation is not None
                or upcoming.skip or upcoming.scripts or self.lane.manager.settings.wrapper
                or upcoming.requirements == case.requirements):
            return
        if self.other is None:
            self.other = MtrLane(self.env, self.bot, self.plan, "b", self.server_counts)
        lane = self.other
        self.log.debug("%s: starting the servers of %s in the background, while %s runs",
                       self.bot, upcoming.full_name, case.full_name)
        lane.lease(upcoming)  # port leases from this thread, before the background start
        prep = Preparation(upcoming, lane, threading.Thread(
            target=lambda: self._prepare(prep), name=f"{self.bot}-prepare", daemon=True))
        self.preparation = prep
        prep.thread.start()

    def _prepare(self, prep: Preparation) -> None:
        """Background thread: prep.case's servers on prep.lane, checks recorded."""
        lane, case = prep.lane, prep.case
        started = time.monotonic()
        try:
            lane.discard()  # what it ran before (waits for a discard still under way)
            prep.env = lane.case_env(case)
            prep.reqs, prep.config = lane.requirements(case, prep.env)
            if lane.unsafe(case, prep.reqs):
                prep.problem = "unsafe server options"
                return
            servers, _ = lane.servers_for(case, prep.reqs, prep.config, prep.env)
            prep.problem = lane.executor.record_before(len(servers), prep.env)
        except Exception as exc:  # noqa: BLE001 - the case then starts its own servers
            prep.problem = f"{type(exc).__name__}: {exc}"
        finally:
            if prep.problem:
                try:
                    lane.manager.teardown(fast=True)
                except Exception:  # noqa: BLE001 - discarded before the lane is used again
                    pass
            self.log.debug("%s: servers for %s prepared in the background in %.0f ms%s",
                           self.bot, case.full_name, (time.monotonic() - started) * 1000,
                           f" (failed: {prep.problem})" if prep.problem else "")

    def _other_pids(self) -> list[int]:
        """The pids of the servers of the lane the case does not run on."""
        other = self.other if self.other is not self.lane else None
        return [pid for pid in (s.pid for s in other.manager.servers) if pid] if other else []

    # ------------------------------------------------------------------ one case
    def run_one(self, spec: MtrCase) -> Outcome:  # type: ignore[override]  # as expect_next
        """Servers for the case (kept when they fit), the case, its checks, evidence: the
        bot's attempt pipeline over an :class:`~lib.modes.mtr.lane.MtrBody`."""
        case = spec
        if case.skip:
            return Outcome(case.full_name, TestStatus.SKIPPED, 0, self.bot, case.skip)
        prepared = self._take_prepared(case)
        lane = self.lane
        if prepared is not None and prepared.reqs is not None and prepared.config is not None:
            env, reqs, config = prepared.env, prepared.reqs, prepared.config
        else:
            env = lane.case_env(case)
            try:
                reqs, config = lane.requirements(case, env)
            except (SuiteError, KewpieError) as exc:
                return Outcome(case.full_name, TestStatus.FAIL, 0, self.bot,
                               f"cannot build the config of {case.full_name}: {exc}")
        unsafe = lane.unsafe(case, reqs)
        if unsafe:  # as mtr skips what it cannot run here; nothing has started
            return Outcome(case.full_name, TestStatus.SKIPPED, 0, self.bot,
                           f"not run by kewpie: {unsafe}", refused=unsafe)
        attempt = self.pipeline.attempt(case.full_name, lane.manager,
                                        Rules.self_checked(case.suite_dir))
        started: list[bool] = []
        failed = attempt.start(lambda: self._servers(lane, case, reqs, config, env, started),
                               (ServerError, QueryError, UsageError))
        if failed is not None:
            lane.key = None
            return failed
        self._prepare_next(case)
        # a prepared set was started for this case: its error log has the case's marker
        outcome = attempt.run(MtrBody(lane, case, env, started[0] or prepared is not None,
                                      self._other_pids))
        if outcome.failed:
            lane.drop_evidence_logs()
            lane.vardir.clean_tmp()
        return outcome

    @staticmethod
    def _servers(lane: MtrLane, case: MtrCase, reqs: Requirements, config: MtrConfig,
                 env: dict[str, str], started: list[bool]) -> list[Server]:
        """The case's servers on lane; started gets whether they were started for it."""
        servers, starting = lane.servers_for(case, reqs, config, env)
        started.append(starting)
        return servers


def run_mtr(env: RunEnvironment) -> int:
    """--mode=mtr: run the selected mysql-test cases; the exit status."""
    config = env.config
    assert env.tree is not None
    if config.servers.mysqld_options:  # --mysqld goes to every server: the unsafe-option check first
        check_requirements([("--mysqld", mysqld_requirements(config))], env.tree.server,
                           env.workdir.path)
    plan = MtrPlan(env, env.tree, env.workdir.path)
    cases = narrow_cases(config, plan.cases(config.selection.suites, config.selection.tests,
                                            config.servers.mysqld_options))
    if not cases:
        raise UsageError("no mysql-test case selected")
    env.log.info(f"mysql-test: {plan.root}, {plan.mysqltest}; {len(cases)} case(s)")
    cases = start_from(config, in_run_order(config, cases))
    # run_tests and its bots hand each runner the specs given here, MtrCases
    return run_tests(env, cases, lambda e, bot: MtrRunner(e, bot, plan),  # type: ignore[arg-type]
                     xml_report=config.section(MtrOptions).xml_report)


def list_mtr(env: RunEnvironment) -> int:
    """--mode=mtr --list: the selected cases of this shard (skipped ones say why)."""
    config = env.config
    tree = discover(config.servers.basedir, trust=env.trust)
    plan = MtrPlan(env, tree)
    cases = narrow_cases(config, plan.cases(config.selection.suites, config.selection.tests,
                                            config.servers.mysqld_options))
    for case in apply_shard(config, in_run_order(config, cases)):
        print(case.full_name + (f"  # skipped: {case.skip}" if case.skip else ""))
    return EXIT_OK


def in_run_order(config: RunConfig, cases: list[MtrCase]) -> list[MtrCase]:
    """cases as mtr orders them (named ones too): skipped first, then grouped by the
    servers they need, by name within a group; as given with --no-reorder."""
    if not config.section(MtrOptions).reorder:
        return cases
    return sorted(cases, key=lambda c: (bool(c.skip) is False, repr(c.requirements), c.full_name))


def narrow_cases(config: RunConfig, cases: list[MtrCase]) -> list[MtrCase]:
    """cases after --do-test and --skip-test (mysql-test-run's prefix-or-regex rule)."""
    if config.selection.do_test:
        cases = [c for c in cases if any(matches(p, c.full_name, c.name) for p in config.selection.do_test)]
    if config.selection.skip_test:
        cases = [c for c in cases
                 if not any(matches(p, c.full_name, c.name) for p in config.selection.skip_test)]
    return cases


def start_from(config: RunConfig, cases: list[MtrCase]) -> list[MtrCase]:
    """cases from the first one --start-from names (``suite.test`` or ``test``), in run
    order; UsageError when it names none."""
    if not config.selection.start_from:
        return cases
    for index, case in enumerate(cases):
        if config.selection.start_from in (case.full_name, case.name, f"{case.suite}.{case.name}"):
            return cases[index:]
    raise UsageError(f"--start-from {config.selection.start_from!r}: no such test among the "
                     f"{len(cases)} selected; use --list to see them")
