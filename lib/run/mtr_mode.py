"""--mode=mtr: the server's own mysql-test suites (.test/.result) run by mariadb-test on
servers kewpie starts and owns.

Tests are found as mysql-test-run finds them (:mod:`lib.mtr.cases`); each bot
gets an :class:`MtrRunner` whose servers come from the run's one manager
factory with mysql-test's bootstrap (:mod:`lib.mtr.bootstrap`), whose bot
directory is the tests' ``MYSQLTEST_VARDIR`` (:mod:`lib.mtr.vardir`) and whose
cases run through :mod:`lib.mtr.execute`.  Outcomes go through the native
run's reporting (:func:`lib.run.native.run_tests`), so --parallel, --shard,
--junit-xml, --retry, --repeat, --test-timeout, --force, evidence and the
progress line work as for kewpie's own tests.  Servers are kept between tests
with the same options (and config file and time zone) while mtr's
check-testcase finds them unchanged; otherwise they are discarded.
"""
from __future__ import annotations

import os
import shutil
import time
from functools import partial

from lib.errors import EXIT_OK, KewpieError, QueryError, ServerError, SuiteError, UsageError
from lib.mtr.bootstrap import MtrBootstrapCache, server_features
from lib.mtr.cases import Collector, MtrCase, skip_rules
from lib.mtr.cnf import MtrConfig
from lib.mtr.config import base_environment, build_config, command_line_args, server_option_args
from lib.mtr.execute import MtrExecutor, MtrSettings
from lib.mtr.options import beyond_loopback, loopback_only, to_options
from lib.mtr.server import MARK_ENV
from lib.mtr.vardir import MtrVardir, ServerSlot
from lib.mtr.warnings import WarningScanner
from lib.run.config import RunConfig
from lib.run.environment import RunEnvironment
from lib.run.evidence import EvidenceKeeper
from lib.run.native import bot_log_path, run_tests
from lib.run.postchecks import debugger_problems
from lib.run.report import Outcome
from lib.run.runner import Runner
from lib.platform.tools import run_tool
from lib.run.filters import matches
from lib.run.selection import apply_shard, mysqld_requirements
from lib.servers.option_safety import check_requirements
from lib.servers.codetree import CodeTree, discover
from lib.servers.options import Option
from lib.servers.requirements import Requirements
from lib.servers.manager import stop_all
from lib.servers.server import Server
from lib.suites.context import BotSetup
from lib.suites.status import TestStatus

SERVER_ENV = ("LC_ALL", "LC_CTYPE", "LC_COLLATE", "UMASK", "UMASK_DIR",
              "GNUTLS_SYSTEM_PRIORITY_FILE", "OPENSSL_CONF", "MYSQL_TEST_DIR", "MYSQLTEST_VARDIR")
MTR_DIR_CANDIDATES = ("mysql-test", "share/mysql/mysql-test", "share/mariadb/mysql-test",
                      "share/mysql-test", "mariadb-test")


def mtr_root(config_root: str, tree: CodeTree) -> str:
    """--mtr-root, else the code tree's mysql-test directory (UsageError if none)."""
    if config_root:
        if not os.path.isfile(os.path.join(config_root, "include", "default_my.cnf")):
            raise UsageError(f"--mtr-root {config_root} is not a mysql-test directory (no "
                             f"include/default_my.cnf)")
        return config_root
    for sub in MTR_DIR_CANDIDATES:
        path = os.path.join(tree.basedir, sub)
        if os.path.isfile(os.path.join(path, "include", "default_my.cnf")):
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

    def __init__(self, env: RunEnvironment, tree: CodeTree) -> None:
        config = env.config
        self.tree = tree
        self.root = mtr_root(config.mtr_root, tree)
        self.mysqltest = find_mysqltest(tree)
        self.features, self.optional_plugins = server_features(tree.server)
        probe_env = base_environment(tree, self.root, MtrVardir("/nonexistent", self.root, None))
        # as mtr: tests named on the command line run even when big
        self.collector = Collector(self.root, skip_rules(self.root, self.features, probe_env,
                                                         self.optional_plugins),
                                   big_test=config.big_test or bool(config.tests),
                                   enable_disabled=config.enable_disabled)
        self.scanner = WarningScanner.for_tree(self.root)

    def cases(self, suites: list[str], names: list[str], extra: list[str]) -> list[MtrCase]:
        """The selected cases (with --mysqld options added to every server)."""
        cases = self.collector.collect(suites, names)
        for case in cases:
            case.master_opt += extra
            case.slave_opt += extra
        return cases


class MtrRunner(Runner):
    """One bot's runner for mysql-test cases (the native Runner's retries and evidence)."""

    def __init__(self, env: RunEnvironment, bot: str, plan: MtrPlan) -> None:
        config = env.config
        factory = partial(MtrBootstrapCache, mtr_root=plan.root,
                          optional_plugins=plan.optional_plugins)
        manager = env.make_manager(bot, bootstrap=factory)
        manager.reuse_expected = False
        logdir = os.path.join(manager.bot_dir, "log")
        os.makedirs(logdir, exist_ok=True)
        setup = BotSetup.from_config(bot, logdir, env.workdir.path, config, env.tree)
        evidence = EvidenceKeeper(env.workdir.failed_dir, config.max_save_datadir,
                                  bot_log_path(env, bot))
        super().__init__(manager, setup, config.test_timeout, evidence)
        self.plan = plan
        self.env = env
        self.vardir = MtrVardir(manager.bot_dir, plan.root, env.server_user)
        self.vardir.prepare()
        self.base_env = dict(env.server_env(bot))
        self.base_env.pop("TZ", None)
        self.base_env.update(base_environment(plan.tree, plan.root, self.vardir))
        self.base_env["STAGING_RUN"] = "0"
        if config.big_test or config.tests:
            self.base_env["BIG_TEST"] = "1"
        ssl = plan.features.get("version-ssl-library", "")
        self.base_env["OPENSSL_CONF"] = (os.path.join(plan.root, "lib", "openssl.cnf")
                                         if ssl > "OpenSSL 1.1.1" else "/dev/null")
        for name in SERVER_ENV:  # the servers see what mtr's servers inherit from mtr
            if name in self.base_env:
                manager.settings.env[name] = self.base_env[name]
        self.base_env.update(self._tool_commands(manager.cache))
        self.executor = MtrExecutor(MtrSettings(plan.mysqltest, plan.root, self.vardir,
                                                env.server_user, plan.scanner, config.record,
                                                config.test_timeout, config.verbose,
                                                config.mysqltest_protocols,
                                                manager.settings.timeout_factor),
                                    self._restart_server)
        self.templates: dict[str, int] = {}
        self.key: object = None
        self.timezone = "DEFAULT"
        self.template = ""
        self.config_env: dict[str, str] = {}
        self.originals: dict[str, list[Option]] = {}

    def _tool_commands(self, cache: object) -> dict[str, str]:
        """MYSQL_TEST (mariadb-test as run here), MYSQLD_BOOTSTRAP_CMD and the bootstrap
        script it is fed (written to log/bootstrap.sql)."""
        vardir = self.vardir
        out = {"MYSQL_TEST": " ".join([
            self.plan.mysqltest, f"--defaults-file={vardir.cnf}", "--silent",
            f"--tmpdir={vardir.tmp}",
            f"--character-sets-dir={self.base_env.get('MYSQL_CHARSETSDIR', '')}",
            f"--logdir={vardir.log}", "--database=test", f"--timer-file={vardir.log}/timer"])}
        if isinstance(cache, MtrBootstrapCache):
            argv = cache.bootstrap_argv(os.path.join(vardir.root, "install.db"), vardir.tmp + "/",
                                        [], user=False)
            out["MYSQLD_BOOTSTRAP_CMD"] = " ".join(argv)
            sql_file = os.path.join(vardir.log, "bootstrap.sql")
            with open(sql_file, "w") as fh:
                fh.write(cache.sql)
            out["MYSQL_BOOTSTRAP_SQL_FILE"] = sql_file
        return out

    def current_key(self) -> object:
        """The scheduling key of the case the bot's servers were started for."""
        return self.key if self.manager.servers else None

    # ------------------------------------------------------------------ servers
    def _server_count(self, template: str) -> int:
        if template not in self.templates:
            config = MtrConfig.read(template, search_dirs=(self.plan.root,))
            self.templates[template] = max(1, len(config.servers()))
        return self.templates[template]

    def _slots(self, count: int) -> list[ServerSlot]:
        """Where each server of a set lives; client ports consecutive from the first
        lease's block, as mtr numbers them (tests compute a server's number as
        1 + @@port - MASTER_MYPORT); the other leased ports are the spares."""
        plans = [self.manager.plan(index) for index in range(count)]
        block = plans[0][1].ports
        consecutive = count <= len(block)
        ports = list(block[:count]) if consecutive else [lease.port(0) for _, lease, _ in plans]
        spare = [p for _, lease, _ in plans for p in lease.ports if p not in ports]
        slots = []
        for index, (vardir, lease, socket) in enumerate(plans):
            mine = tuple(spare[index * 3:index * 3 + 3])  # e.g. Galera's three
            slots.append(ServerSlot(index + 1, vardir, ports[index], socket,
                                    os.path.join(vardir, "log", "error.log"),
                                    os.path.join(vardir, "tmp"), mine))
        return slots

    def _restart_server(self, server: Server, extra: list[str] | None) -> None:
        """The restart protocol's restart: the same options, or those plus extra."""
        original = self.originals.setdefault(server.name, list(server.user_options))
        server.user_options = [*original, *to_options(extra, defaults=False)] if extra \
            else list(original)
        server.start()

    def _requirements(self, case: MtrCase, env: dict[str, str]) -> tuple[Requirements, MtrConfig]:
        slots = self._slots(self._server_count(case.template))
        config = build_config(case.template, self.plan.root, self.vardir, slots, self.plan.tree,
                              env, self.plan.optional_plugins)
        servers = config.servers()
        option_lists = []
        for group in servers:
            use_slave = group.has("#!use-slave-opt")
            extra = case.slave_opt if use_slave else case.master_opt
            option_lists.append(loopback_only(
                to_options(server_option_args(config, group.name, extra, env))))
        for slot in slots:
            self.vardir.link(slot)
        if servers:  # mtr's MYSQLD_LAST_CMD: the last server it started, as started
            last = servers[-1]
            extra = case.slave_opt if last.has("#!use-slave-opt") else case.master_opt
            env["MYSQLD_LAST_CMD"] = " ".join([
                self.plan.tree.server, f"--defaults-group-suffix={last.name[len('mysqld'):]}",
                f"--defaults-file={self.vardir.cnf}",
                *command_line_args(config, last.name, extra, env)])
        return Requirements.declared("mtr", option_lists), config

    def _case_env(self, case: MtrCase) -> dict[str, str]:
        env = dict(self.base_env)
        env["MTR_TEST_NAME"] = f"{case.suite}.{case.name}"
        env["MTR_SUITE_DIR"] = case.suite_dir
        for comb in case.combinations:
            env[f"MTR_COMBINATION_{comb.upper()}"] = "1"
        if case.combinations:
            env["MTR_COMBINATIONS"] = ",".join(case.combinations)
        if case.timezone != "DEFAULT":
            from lib.mtr.config import expand_env
            env["TZ"] = expand_env(case.timezone, env)
        return env

    # ------------------------------------------------------------------ one case
    def run_one(self, spec: MtrCase) -> Outcome:  # type: ignore[override]
        """Servers for the case (kept when they fit), the case, its checks, evidence."""
        case = spec
        start = time.monotonic()
        if case.skip:
            return Outcome(case.full_name, TestStatus.SKIPPED, 0, self.manager.bot_name, case.skip)
        manager = self.manager
        manager.reuse_expected = False
        env = self._case_env(case)
        try:
            reqs, config = self._requirements(case, env)
        except (SuiteError, KewpieError) as exc:
            return Outcome(case.full_name, TestStatus.FAIL, 0, manager.bot_name,
                           f"cannot build the config of {case.full_name}: {exc}")
        for options in reqs.servers:
            unsafe = beyond_loopback(list(options))
            if unsafe:  # kewpie's servers listen on 127.0.0.1 (and ::1) only
                return Outcome(case.full_name, TestStatus.SKIPPED, 0, manager.bot_name,
                               f"not run by kewpie: {unsafe} would listen beyond the "
                               f"loopback (kewpie's servers listen on 127.0.0.1 only)")
        if case.timezone != self.timezone or case.scripts or case.template != self.template:
            manager.request_reset()  # mtr restarts for another config file or time zone
        if manager.servers and (manager.current != reqs or manager.force_reset):
            manager.teardown(discard=True)
        fresh = not manager.servers
        if fresh:
            self.vardir.clean_tmp()  # as mtr cleans var/tmp whenever servers start afresh
            self.executor.forget()
            self.originals.clear()
            if "TZ" in env:
                manager.settings.env["TZ"] = env["TZ"]
            else:
                manager.settings.env.pop("TZ", None)
            self.timezone = case.timezone
            self.template = case.template
            for name in self.config_env:  # the previous config's [ENV]
                manager.settings.env.pop(name, None)
            self.config_env = {k: v for k, v in config.env().items()
                               if k not in self.base_env or self.base_env[k] != v}
            manager.settings.env.update(self.config_env)  # as mtr exports [ENV] to servers
        env.update({k: v for k, v in config.env().items() if v is not None})
        first = config.servers()[0] if config.servers() else None
        if first is not None and first.value("datadir"):
            env["MARIADB_TOPDIR"] = env["MARIADB_DATADIR"] = str(first.value("datadir"))
        with open(self.vardir.cnf, "w", errors="surrogateescape") as fh:
            fh.write(config.render())
        if self.env.server_user:
            shutil.chown(self.vardir.cnf, self.env.server_user, self.env.server_user)
        try:
            starting = manager.force_reset or not manager.servers or manager.current != reqs
            if starting:
                self._run_scripts(case, env)
                manager.settings.env[MARK_ENV] = f"{case.suite}.{case.name}"
            try:
                servers = manager.get_servers(reqs)
            finally:
                manager.settings.env.pop(MARK_ENV, None)
        except (ServerError, QueryError, UsageError) as exc:
            ms = int((time.monotonic() - start) * 1000)
            message = f"servers for {case.full_name} could not be started: {exc}"
            detail = getattr(exc, "log_tail", "") or ""
            if detail:
                message += f"\n{detail}"
            evidence = ""
            if self.evidence is not None:
                evidence = self.evidence.save(case.full_name, message, manager.last_servers,
                                              None).path
            manager.teardown(fast=True)
            self.key = None
            return Outcome(case.full_name, TestStatus.FAIL, ms, manager.bot_name, message,
                           evidence=evidence, resets=1)
        self.key = case.requirements
        verdict = self.executor.run(case, servers, env, fresh=starting)
        status, message = TestStatus(str(verdict.status)), verdict.message
        wrapper = manager.settings.wrapper
        if wrapper is not None and wrapper.stop_after_test and not verdict.failed:
            stop_all(servers)  # valgrind reports (leaks) when the server exits
            manager.request_reset()
        problems = debugger_problems(wrapper, servers, self.valgrind_seen, verdict.failed)
        if problems:
            if not status.failed:
                status, message = TestStatus.FAIL, ""
            message = "\n".join(p for p in [message, *problems] if p)
        ms = int((time.monotonic() - start) * 1000)
        evidence = ""
        resets, why = 0, "the test failed or restarted its servers"
        if status.failed:
            manager.teardown()
            if self.evidence is not None:
                logs = self._evidence_logs(case)
                saved = self.evidence.save(case.full_name, message, servers, logs)
                evidence = saved.path
                if saved.backtrace:
                    message += f"\n--- backtrace (top frames) ---\n{saved.backtrace}"
                shutil.rmtree(logs, ignore_errors=True)
            self.vardir.clean_tmp()
            resets = 1
        elif verdict.needs_restart:
            manager.teardown(discard=True)
            resets, why = 1, verdict.restart_reason or why
        if verdict.reject:
            message += f"\nreject file: {verdict.reject}"
        return Outcome(case.full_name, status, ms, manager.bot_name, message,
                       evidence=evidence, resets=resets,
                       reset_reason=why if resets else "")

    def _run_scripts(self, case: MtrCase, env: dict[str, str]) -> None:
        """A test's -master.sh/-slave.sh, before its servers start (as mtr runs them)."""
        for script in case.scripts:
            ran = run_tool(["/bin/sh", script], user=self.env.server_user, env=env,
                           tmpdir=self.vardir.tmp, cwd=self.plan.root, timeout=120)
            if not ran.ok:
                raise ServerError(f"{script} failed (exit {ran.returncode}): "
                                  f"{(ran.stdout + ran.stderr).strip()[-2000:]}")

    def _evidence_logs(self, case: MtrCase) -> str:
        """A directory with the case's own files (output, .reject, checks) for the evidence."""
        target = os.path.join(self.manager.bot_dir, "evidence-logs")
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        for directory in (self.vardir.log, self.vardir.tmp):
            for name in os.listdir(directory):
                path = os.path.join(directory, name)
                if os.path.isfile(path) and not os.path.islink(path) and (
                        name.startswith(case.name + ".") or name.startswith("check-")
                        or name.startswith("warnings-") or name.endswith(".warnings")):
                    shutil.copy2(path, os.path.join(target, name))
        with open(self.vardir.cnf) as src, open(os.path.join(target, "my.cnf"), "w") as dst:
            dst.write(src.read())
        return target


def run_mtr(env: RunEnvironment) -> int:
    """--mode=mtr: run the selected mysql-test cases; the exit status."""
    config = env.config
    assert env.tree is not None
    if config.mysqld_options:  # --mysqld goes to every server: the unsafe-option check first
        check_requirements([("--mysqld", mysqld_requirements(config))], env.tree.server,
                           env.workdir.path)
    plan = MtrPlan(env, env.tree)
    cases = narrow_cases(config, plan.cases(config.suites, config.tests, config.mysqld_options))
    if not cases:
        raise UsageError("no mysql-test case selected")
    env.log.info(f"mysql-test: {plan.root}, {plan.mysqltest}; {len(cases)} case(s)")
    cases = start_from(config, in_run_order(config, cases))
    return run_tests(env, cases, lambda e, bot: MtrRunner(e, bot, plan))  # type: ignore[arg-type]


def list_mtr(env: RunEnvironment) -> int:
    """--mode=mtr --list: the selected cases of this shard (skipped ones say why)."""
    config = env.config
    tree = discover(config.basedir)
    plan = MtrPlan(env, tree)
    cases = narrow_cases(config, plan.cases(config.suites, config.tests, config.mysqld_options))
    for case in apply_shard(config, in_run_order(config, cases)):  # type: ignore[arg-type]
        print(case.full_name + (f"  # skipped: {case.skip}" if case.skip else ""))
    return EXIT_OK


def in_run_order(config: RunConfig, cases: list[MtrCase]) -> list[MtrCase]:
    """cases as mtr orders them (named ones too): skipped first, then grouped by the
    servers they need, by name within a group; as given with --no-reorder."""
    if not config.reorder:
        return cases
    return sorted(cases, key=lambda c: (bool(c.skip) is False, repr(c.requirements), c.full_name))


def narrow_cases(config: RunConfig, cases: list[MtrCase]) -> list[MtrCase]:
    """cases after --do-test and --skip-test (mysql-test-run's prefix-or-regex rule)."""
    if config.do_test:
        cases = [c for c in cases if any(matches(p, c.full_name, c.name) for p in config.do_test)]
    if config.skip_test:
        cases = [c for c in cases
                 if not any(matches(p, c.full_name, c.name) for p in config.skip_test)]
    return cases


def start_from(config: RunConfig, cases: list[MtrCase]) -> list[MtrCase]:
    """cases from the first one --start-from names (``suite.test`` or ``test``), in run
    order; UsageError when it names none."""
    if not config.start_from:
        return cases
    for index, case in enumerate(cases):
        if config.start_from in (case.full_name, case.name, f"{case.suite}.{case.name}"):
            return cases[index:]
    raise UsageError(f"--start-from {config.start_from!r}: no such test among the "
                     f"{len(cases)} selected; use --list to see them")
