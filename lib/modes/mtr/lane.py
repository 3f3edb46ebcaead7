"""One server set of an mtr-mode bot: its servers, its ``MYSQLTEST_VARDIR``, its config.

A bot of ``--mode=mtr`` has up to two lanes.  Its tests run on one; on the
other, the servers of the test it will run next are started, and their
check-testcase 'before' state recorded, in the background while the current
test runs, when that test needs other servers (see
:class:`lib.modes.mtr.run.MtrRunner`).  Each lane is what mysql-test-run gives
one worker: a vardir laid out as mtr's ``var/`` (:mod:`lib.mtr.vardir`), the
test's ``my.cnf`` written there, the servers of the test's config on the
lane's own leased ports, and the check state of those servers
(:class:`lib.mtr.execute.MtrExecutor`).  A case runs on a lane as an
:class:`MtrBody` of the bot's attempt pipeline (:mod:`lib.run.attempt`).
"""
from __future__ import annotations

import os
import shutil
import threading
from functools import partial
from typing import TYPE_CHECKING, Callable

from ...mtr.bootstrap import MtrBootstrapCache
from ...mtr.cases import MtrCase
from ...mtr.cnf import MtrConfig
from ...mtr.config import (base_environment, build_config, command_line_args, expand_env,
                           plugin_dir, server_option_args, share_dir)
from ...mtr.option_check import CaseBounds, case_problem, server_problem
from ...mtr.execute import MtrExecutor, MtrSettings, stop_tagged
from ...mtr.galera import formation_sensitive
from ...mtr.garbd import garbd_wrapper
from ...mtr.options import loopback_only, to_options
from ...mtr.server import MARK_ENV
from ...mtr.vardir import MtrVardir, ServerSlot
from ...platform.ports import PortLease
from ...platform.tools import run_tool
from .options import MtrOptions
from ...run.attempt import RawResult, TestBody
from ...run.environment import RunEnvironment
from ...errors import ServerError, UnsafeOptionError
from ...servers.manager import ServerManager
from ...servers.layout import SOCKET_PATH_MAX
from ...servers.options import Option
from ...servers.requirements import Requirements
from ...servers.server import Server
from ...suites.status import TestStatus

if TYPE_CHECKING:
    from .run import MtrPlan

SERVER_ENV = ("LC_ALL", "LC_CTYPE", "LC_COLLATE", "UMASK", "UMASK_DIR",
              "GNUTLS_SYSTEM_PRIORITY_FILE", "OPENSSL_CONF", "MYSQL_TEST_DIR", "MYSQLTEST_VARDIR")


class MtrLane:
    """One server set of a bot with the vardir, environment and check state it runs with.

    lane "" is the bot's first set (``workdir/botN``), "b" its second
    (``workdir/botNb``); server_counts is the bot's cache of how many servers
    each config template has.
    """

    def __init__(self, env: RunEnvironment, bot: str, plan: "MtrPlan", lane: str,
                 server_counts: dict[str, int]) -> None:
        config = env.config
        mtr = config.section(MtrOptions)
        factory = partial(MtrBootstrapCache, mtr_root=plan.root,
                          optional_plugins=plan.optional_plugins)
        self.manager: ServerManager = env.make_manager(bot, bootstrap=factory, lane=lane)
        self.manager.more_tests(False)   # mtr checks its own reuse (lib/mtr/execute.py)
        self.plan = plan
        self.server_user = env.server_user
        self.server_counts = server_counts
        manager = self.manager
        self.vardir = MtrVardir(manager.bot_dir, plan.root, env.server_user)
        self.vardir.prepare()
        self.base_env = dict(env.server_env(bot))
        self.base_env.pop("TZ", None)
        self.base_env.update(base_environment(plan.tree, plan.root, self.vardir))
        self.base_env["STAGING_RUN"] = "0"
        if env.server_user:   # who mariadb-test runs as (plugins.unix_socket reads $USER)
            self.base_env["USER"] = self.base_env["LOGNAME"] = env.server_user
        if mtr.big_test or config.selection.tests:
            self.base_env["BIG_TEST"] = "1"
        ssl = plan.features.get("version-ssl-library", "")
        self.base_env["OPENSSL_CONF"] = (os.path.join(plan.root, "lib", "openssl.cnf")
                                         if ssl > "OpenSSL 1.1.1" else "/dev/null")
        for name in SERVER_ENV:  # the servers see what mtr's servers inherit from mtr
            if name in self.base_env:
                manager.settings.env[name] = self.base_env[name]
        self.base_env.update(self._tool_commands(manager.cache))
        garbd = garbd_wrapper(self.vardir.root, self.vardir.tmp,
                              self.base_env.get("WSREP_PROVIDER", ""), env.server_user)
        if garbd:  # as suite/wsrep/common.pm sets it (garbd on the loopback: lib.mtr.garbd)
            self.base_env["MTR_GARBD_EXE"] = garbd
        self.executor = MtrExecutor(MtrSettings(plan.mysqltest, plan.root, self.vardir,
                                                env.server_user, plan.scanner, mtr.record,
                                                config.reporting.test_timeout, config.reporting.verbose,
                                                mtr.protocols,
                                                manager.settings.timeout_factor),
                                    self._restart_server)
        self.key: object = None           # the scheduling key of the case its servers serve
        self.timezone = "DEFAULT"
        self.template = ""
        self.config_env: dict[str, str] = {}
        self.originals: dict[str, list[Option]] = {}
        self.discarding: threading.Thread | None = None
        self.case_bounds: CaseBounds | None = None  # of the case last checked (its restarts)

    # ------------------------------------------------------------------ environment
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

    def case_env(self, case: MtrCase) -> dict[str, str]:
        """The environment mariadb-test runs case with on this lane."""
        env = dict(self.base_env)
        env["MTR_TEST_NAME"] = f"{case.suite}.{case.name}"
        env["MTR_SUITE_DIR"] = case.suite_dir
        for comb in case.combinations:
            env[f"MTR_COMBINATION_{comb.upper()}"] = "1"
        if case.combinations:
            env["MTR_COMBINATIONS"] = ",".join(case.combinations)
        if case.timezone != "DEFAULT":
            env["TZ"] = expand_env(case.timezone, env)
        return env

    # ------------------------------------------------------------------ config
    def _server_count(self, template: str) -> int:
        if template not in self.server_counts:
            config = MtrConfig.read(template, search_dirs=(self.plan.root,))
            self.server_counts[template] = max(1, len(config.servers()))
        return self.server_counts[template]

    def _slots(self, count: int) -> list[ServerSlot]:
        """Where each server of a set lives; client ports consecutive from the first
        lease's block, as mtr numbers them (tests compute a server's number as
        1 + @@port - MASTER_MYPORT); the other leased ports are the spares; sockets
        where mtr puts them, ``$MYSQL_TMP_DIR/mysqld.N.sock`` (kewpie's own place when
        that path would be too long)."""
        plans = [self.manager.plan(index) for index in range(count)]
        block = plans[0][1].ports
        consecutive = count <= len(block)
        ports = list(block[:count]) if consecutive else [lease.port(0) for _, lease, _ in plans]
        spare = [p for run in self._spare_runs(count, ports)[0] for p in run]  # in threes
        slots = []
        for index, (vardir, lease, socket) in enumerate(plans):
            mine = tuple(spare[index * 3:index * 3 + 3])  # e.g. Galera's three
            mtr_socket = os.path.join(self.vardir.tmp, f"mysqld.{index + 1}.sock")
            if len(mtr_socket) <= SOCKET_PATH_MAX:   # mtr's name (sys_vars.socket_basic)
                socket = mtr_socket
            slots.append(ServerSlot(index + 1, vardir, ports[index], socket,
                                    os.path.join(vardir, "log", "error.log"),
                                    os.path.join(vardir, "tmp"), mine))
        return slots

    def _spare_runs(self, count: int, clients: list[int]
                    ) -> tuple[list[tuple[int, int, int]], list[PortLease]]:
        """count runs of three consecutive leased ports besides the client ports, one per
        server (a Galera node's ``#galera_port``, ``#ist_port``, ``#sst_port``, which mtr
        hands out in turn, consecutive: Galera listens for IST on its base port + 1), from
        the servers' leases and, when they hold too few runs, more leases of the bot; and
        every lease the set uses."""
        leases = [self.manager.plan(index)[1] for index in range(count)]
        runs = spare_runs(leases, clients)
        while len(runs) < count:
            leases.append(self.manager.lease_extra(len(leases)))
            runs += spare_runs(leases[-1:], clients)
        return runs[:count], leases

    def _leases(self, count: int) -> list[PortLease]:
        """Every lease a set of count servers uses (theirs and those of its spare runs)."""
        clients = [slot.port for slot in self._slots(count)]
        return self._spare_runs(count, clients)[1]

    def lease(self, case: MtrCase) -> None:
        """Lease the ports case's servers need (from the calling thread: leases are taken
        before a background start)."""
        self._slots(self._server_count(case.template))

    def requirements(self, case: MtrCase, env: dict[str, str]) -> tuple[Requirements, MtrConfig]:
        """case's config on this lane's slots, and the servers it asks for (env gains
        MYSQLD_LAST_CMD); raises SuiteError or KewpieError for a config that cannot be built."""
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
        return Requirements.declared("mtr", option_lists,
                                     snapshot_formation=not formation_sensitive(case.path)), config

    def bounds(self, case: MtrCase) -> CaseBounds:
        """What case's servers may reach on this lane: its vardir, the ports leased for
        them, their sockets, the plugin directories (the server's, and the case's suite's
        own ``plugin/`` folder: libraries shipped with the suite, as a reduced case's
        planted UDF) and the read-only inputs."""
        count = self._server_count(case.template)
        leases = self._leases(count)
        tree = self.plan.tree
        provider = self.base_env.get("WSREP_PROVIDER", "")
        return CaseBounds(
            vardir=self.vardir.root,
            ports=frozenset(p for lease in leases for p in lease.ports),
            sockets=frozenset(slot.socket for slot in self._slots(count)),
            plugin_dirs=tuple(d for d in (plugin_dir(tree), os.path.join(case.suite_dir, "plugin"))
                              if d),
            inputs=(self.plan.root, case.suite_dir, share_dir(tree)),
            providers=(provider,) if provider else (), basedir=tree.basedir)

    def unsafe(self, case: MtrCase, reqs: Requirements) -> str:
        """Why case's servers may not start here ('' when their options are safe):
        :mod:`lib.mtr.option_check` over the options as the servers read them.  The
        bounds are kept for the options of the case's restarts."""
        bounds = self.bounds(case)
        problem = case_problem(reqs.servers, self.plan.catalog, bounds)
        self.case_bounds = None if problem else bounds
        return problem

    # ------------------------------------------------------------------ servers
    def servers_for(self, case: MtrCase, reqs: Requirements, config: MtrConfig,
                    env: dict[str, str]) -> tuple[list[Server], bool]:
        """The servers case runs on: the running ones when they fit, else fresh ones (the
        test's -master.sh first); writes the test's my.cnf; env gains the config's [ENV].
        Returns (servers, started for this case).  Raises ServerError, QueryError or
        UsageError when they cannot be started."""
        manager = self.manager
        if case.timezone != self.timezone or case.scripts or case.template != self.template:
            manager.request_reset()  # mtr restarts for another config file or time zone
        if manager.servers and not manager.fits(reqs):  # (a case reading how its cluster
            manager.teardown(discard=True)             # formed: one formed as mtr forms it)
        if not manager.servers:
            self._fresh_set(case, config, env)
        env.update({k: v for k, v in config.env().items() if v is not None})
        first = config.servers()[0] if config.servers() else None
        if first is not None and first.value("datadir"):
            env["MARIADB_TOPDIR"] = env["MARIADB_DATADIR"] = str(first.value("datadir"))
        with open(self.vardir.cnf, "w", errors="surrogateescape") as fh:
            fh.write(config.render())
        if self.server_user:
            shutil.chown(self.vardir.cnf, self.server_user, self.server_user)
        starting = not manager.fits(reqs)
        if starting:
            self._run_scripts(case, env)
            manager.settings.env[MARK_ENV] = f"{case.suite}.{case.name}"
        try:
            servers = manager.get_servers(reqs)
        finally:
            manager.settings.env.pop(MARK_ENV, None)
        self.key = case.requirements
        return servers, starting

    def _fresh_set(self, case: MtrCase, config: MtrConfig, env: dict[str, str]) -> None:
        """What changes when servers start afresh: tmp/ emptied (as mtr cleans var/tmp),
        no check state, the case's time zone and its config's [ENV] for the servers."""
        settings_env = self.manager.settings.env
        self.vardir.clean_tmp()
        self.executor.forget()
        self.originals.clear()
        if "TZ" in env:
            settings_env["TZ"] = env["TZ"]
        else:
            settings_env.pop("TZ", None)
        self.timezone = case.timezone
        self.template = case.template
        for name in self.config_env:  # the previous config's [ENV]
            settings_env.pop(name, None)
        self.config_env = {k: v for k, v in config.env().items()
                           if k not in self.base_env or self.base_env[k] != v}
        settings_env.update(self.config_env)  # as mtr exports [ENV] to servers

    def _run_scripts(self, case: MtrCase, env: dict[str, str]) -> None:
        """A test's -master.sh/-slave.sh, before its servers start (as mtr runs them)."""
        for script in case.scripts:
            ran = run_tool(["/bin/sh", script], user=self.server_user, env=env,
                           tmpdir=self.vardir.tmp, cwd=self.plan.root, timeout=120)
            if not ran.ok:
                raise ServerError(f"{script} failed (exit {ran.returncode}): "
                                  f"{(ran.stdout + ran.stderr).strip()[-2000:]}")

    def _restart_server(self, server: Server, extra: list[str] | None) -> None:
        """The restart protocol's restart: the same options, or those plus extra (a test's
        ``restart: --opt ...``), which go through the case's option check first
        (UnsafeOptionError: the server stays down and the case is skipped saying why)."""
        original = self.originals.setdefault(server.name, list(server.user_options))
        options = loopback_only([*original, *to_options(extra, defaults=False)]) if extra \
            else list(original)
        if extra and self.case_bounds is not None:
            problem = server_problem(options, self.plan.catalog, self.case_bounds)
            if problem:
                raise UnsafeOptionError(f"restart: {problem}")
        server.user_options = options
        server.start()

    def discard(self) -> None:
        """Kill the lane's servers (their datadirs are thrown away)."""
        self.settle()
        self._kill()

    def discard_later(self) -> None:
        """discard() in the background (the lane is not used until :meth:`settle`)."""
        self.settle()
        self.discarding = threading.Thread(target=self._kill, name="mtr-lane-discard",
                                           daemon=True)
        self.discarding.start()

    def settle(self) -> None:
        """Wait for a background discard to end."""
        thread, self.discarding = self.discarding, None
        if thread is not None:
            thread.join()

    def _kill(self) -> None:
        self.manager.teardown(discard=True)
        self.key = None

    # ------------------------------------------------------------------ evidence
    def evidence_logs(self, case: MtrCase) -> str:
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

    def drop_evidence_logs(self) -> None:
        """Remove the copy :meth:`evidence_logs` made (once the evidence has it)."""
        shutil.rmtree(os.path.join(self.manager.bot_dir, "evidence-logs"), ignore_errors=True)


class MtrBody(TestBody):
    """One mysql-test case as the attempt pipeline runs it: mariadb-test on the lane's
    servers with mtr's check-testcase, check-warnings and restart protocol
    (:meth:`lib.mtr.execute.MtrExecutor.run`), which also say which servers crashed
    and whether the servers need a restart."""

    def __init__(self, lane: MtrLane, case: MtrCase, env: dict[str, str], fresh: bool,
                 other_pids: Callable[[], list[int]]) -> None:
        """fresh: the servers were started for this case; other_pids: the pids of the
        servers of the bot's other lane when asked (never the case's leftovers)."""
        self.lane = lane
        self.case = case
        self.env = env
        self.fresh = fresh
        self.other_pids = other_pids

    def run(self, servers: list[Server], tags: dict[str, str]) -> RawResult:
        """The case; what it starts (``--exec ... &``) carries tags."""
        self.env = dict(self.env, **tags)
        verdict = self.lane.executor.run(self.case, servers, self.env, fresh=self.fresh)
        message = verdict.message + (f"\nreject file: {verdict.reject}" if verdict.reject else "")
        return RawResult(TestStatus(str(verdict.status)), message, crashed=verdict.crashed,
                         needs_restart=verdict.needs_restart,
                         restart_reason=verdict.restart_reason, refused=verdict.refused)

    def interrupt(self) -> None:
        """--test-timeout: mariadb-test and what it started are stopped (by pid)."""
        stop_tagged(self.env)

    def evidence_logs(self) -> str | None:
        """The case's own files (output, .reject, checks) and its my.cnf."""
        return self.lane.evidence_logs(self.case)

    def server_pids(self) -> list[int]:
        """The other lane's servers (it may have started the next case's meanwhile)."""
        return self.other_pids()


def spare_runs(leases: list[PortLease], clients: list[int]) -> list[tuple[int, int, int]]:
    """The runs of three consecutive ports the leases hold besides the client ports."""
    runs = []
    for lease in leases:
        free = [p for p in lease.ports if p not in clients]
        index = 0
        while index + 2 < len(free):
            if free[index + 2] - free[index] == 2:
                runs.append((free[index], free[index + 1], free[index + 2]))
                index += 3
            else:
                index += 1
    return runs
