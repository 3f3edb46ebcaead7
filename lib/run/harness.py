"""One kewpie run: workdir, code tree, servers, tests, and always cleanup."""
from __future__ import annotations

import os
import pwd
import shutil
import stat
import time
import uuid

import psutil
from types import MappingProxyType
from typing import Callable, Mapping

from lib.servers.bootstrap import BootstrapCache
from lib.servers.codetree import CodeTree, discover
from lib.run.config import RunConfig
from lib.errors import EXIT_OK, EXIT_TEST_FAILED, CleanupError, CodeTreeError, UsageError
from lib.platform.logsetup import get_logger
from lib.platform.ports import PortLeaser, default_lock_dir, ensure_lock_dir
from lib.platform import safedirs
from lib.platform.process import TAG_BOT, TAG_RUN, TAG_WORKDIR, tagged_processes
from lib.run.bots import BotPool
from lib.run.evidence import EvidenceKeeper
from lib.run.junit import write as write_junit
from lib.platform.logsetup import configure
from lib.run.progress import Progress, wanted as progress_wanted
from lib.run.report import Outcome, Reporter
from lib.run.scheduling import parse_shard, shard
from lib.run.timings import Timings
from lib.run.runner import Runner, SystemManager, TestExecutor
from lib.servers.server import Server, ServerSettings
from lib.servers.describe import write_description
from lib.servers.galera import GaleraServer
from lib.servers.galera_cluster import form_galera_set, wait_galera_applied
from lib.servers.manager import ServerKind, ServerManager, start_replicating_set, wait_replicas_applied
from lib.servers.state import StateFile, stop_recorded
from lib.servers.option_safety import check_requirements
from lib.suites.loader import TestSpec, declared_in, find_suite, select_tests, suite_requirements
from lib.platform.workdir import MIN_SHM_FREE, Workdir

SERVER_KINDS: Mapping[str, ServerKind] = MappingProxyType({
    "mysql": ServerKind(Server, start_replicating_set, wait_replicas_applied),
    "galera": ServerKind(GaleraServer, form_galera_set, wait_galera_applied),
})


def resolve_server_user(requested: str | None) -> str | None:
    """Servers run as 'mysql' when kewpie runs as root, else as the invoking user."""
    if requested:
        try:
            pwd.getpwnam(requested)
        except KeyError:
            raise UsageError(f"--server-user {requested}: no such user") from None
        return None if requested == pwd.getpwuid(os.geteuid()).pw_name else requested
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("mysql")
        return "mysql"
    except KeyError:
        raise UsageError("kewpie runs as root but there is no 'mysql' user to run servers as; "
                         "create it or pass --server-user") from None


def check_reachable(path: str, user: str) -> None:
    """UsageError unless every directory above path lets user pass through."""
    entry = pwd.getpwnam(user)
    current = os.path.dirname(os.path.abspath(path))
    while True:
        st = os.stat(current)
        if st.st_uid == entry.pw_uid:
            ok = bool(st.st_mode & stat.S_IXUSR)
        elif st.st_gid == entry.pw_gid:
            ok = bool(st.st_mode & stat.S_IXGRP)
        else:
            ok = bool(st.st_mode & stat.S_IXOTH)
        if not ok:
            raise UsageError(f"servers run as '{user}', who cannot enter {current} "
                             f"(mode {stat.S_IMODE(st.st_mode):04o}); choose a --workdir "
                             f"{user} can reach, or drop --no-shm")
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


class Harness:
    """Drives a run; ``close()`` stops everything it started (unless start-and-exit)."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.log = get_logger()
        self.run_id = uuid.uuid4().hex[:12]
        self.server_user = resolve_server_user(config.server_user)
        self.workdir = Workdir(config.workdir, config.use_shm, self.server_user)
        if self.workdir.use_shm and not self.workdir.shm_has_room():
            self.workdir.reclaim(strict=False)  # trees of deleted workdirs may be what fills it
        if self.workdir.use_shm and not self.workdir.shm_has_room():
            self.log.warning(f"/dev/shm has less than {MIN_SHM_FREE >> 30} GiB free: keeping "
                             f"vardirs on disk this run (as with --no-shm)")
            self.workdir.use_shm = False
        self.managers: list[ServerManager] = []
        self.tree: CodeTree | None = None
        self.keep_servers = False
        self._locked = False

    # ------------------------------------------------------------------ setup
    def open_workdir(self) -> None:
        """Create and lock the workdir; stop servers an earlier run left in it."""
        self.workdir.create()
        self.workdir.lock()
        self._locked = True
        if self.config.mode == "native":
            stop_recorded(self.state_files(), self.workdir.path)
            shutil.rmtree(self.workdir.failed_dir, ignore_errors=True)

    def state_files(self) -> list[StateFile]:
        """Every bot's record of running servers in this workdir."""
        return [StateFile(path) for path in self.workdir.state_files()]

    def discover_tree(self) -> CodeTree:
        """Find the code tree's binaries and log kewpie's header."""
        self.tree = discover(self.config.basedir)
        version = self.tree.version
        assert version is not None
        log = self.log
        if self.config.use_shm and self.workdir.use_shm:
            log.info(f"Linking workdir {self.workdir.path} to {self.workdir.shm_path}")
        else:
            log.info("Using --no-shm, will not link workdir to shm")
        log.info(f"Using {version.flavor} source tree:")
        log.info(f"basedir: {self.tree.basedir}")
        log.info(f"clientbindir: {self.tree.clientbindir}")
        log.info(f"testdir: {self.config.root}")
        log.info(f"server_version: {version.version}{version.suffix}")
        log.info(f"server_compile_os: {version.compile_os}")
        log.info(f"server_platform: {version.platform}")
        log.info(f"server_comment: ({version.comment})")
        log.info(f"server_flavor: {version.flavor}")
        log.info(f"server_user: {self.server_user or pwd.getpwuid(os.geteuid()).pw_name}")
        log.info("Using default-storage-engine: innodb")
        log.info(f"Using testing mode: {self.config.mode}")
        return self.tree

    def select(self) -> list[TestSpec]:
        """Load suites and pick tests (UsageError/SuiteError on bad input)."""
        self.log.info("Processing test suites...")
        specs = select_tests(self.config.suites, self.config.tests, self.config.suitepaths,
                             self.config.default_server_type)
        for spec in specs:
            if spec.requirements.server_type not in SERVER_KINDS:
                raise UsageError(f"{spec.full_name} needs server type "
                                 f"{spec.requirements.server_type!r}, which kewpie does not "
                                 f"know (known: {', '.join(SERVER_KINDS)})")
        if any(spec.requirements.server_type == "galera" for spec in specs):
            self.check_galera()
        declared = [(declared_in(spec), spec.requirements) for spec in specs]
        if not specs and self.config.start_and_exit:  # the first suite's servers would start
            suite = (self.config.suites or ["main"])[0]
            declared.append((os.path.join(find_suite(suite, self.config.suitepaths),
                                          "suite_config.py"),
                             suite_requirements(suite, self.config.suitepaths,
                                                self.config.default_server_type)))
        assert self.tree is not None
        check_requirements(declared, self.tree.server, self.workdir.path)  # before any start
        self.log.info(f"Found {len(specs)} test(s) for execution")
        return specs

    def check_galera(self) -> None:
        """Galera tests need the provider library and the SST tools; say so up front."""
        provider = self.config.wsrep_provider_path
        if not os.path.isfile(provider):
            raise CodeTreeError(f"--wsrep-provider-path {provider}: no such file (the Galera "
                                f"provider, libgalera_smm.so; Debian package galera-4)")
        if self.config.wsrep_sst_method == "rsync" and not shutil.which("rsync"):
            raise CodeTreeError("--wsrep-sst-method=rsync needs rsync on PATH")
        if self.config.wsrep_sst_method == "mariabackup" and "mariabackup" not in self.tree.tools:
            raise CodeTreeError("--wsrep-sst-method=mariabackup needs mariadb-backup in the code tree")
        self.log.info(f"wsrep_provider: {provider}")
        self.log.info(f"wsrep_sst_method: {self.config.wsrep_sst_method}")

    def _disk_dir(self, bot: str, lock_dir: str) -> tuple[str | None, str]:
        """Where the bot's ``storage = 'disk'`` vardirs go, and why there is no such place.

        In the workdir when the server user can enter it, else in the lock
        directory (which everyone may traverse); only suites that ask for disk
        storage fail when neither works.
        """
        problem = ""
        for root in (None, os.path.join(ensure_lock_dir(lock_dir), "disk")):
            path = self.workdir.prepare_disk_bot(bot, root)
            if not path or not self.server_user:
                return path, ""
            try:
                check_reachable(path, self.server_user)
            except UsageError as exc:
                problem = str(exc).replace(", or drop --no-shm", "")
                safedirs.remove_tree(path, ignore_errors=True)
                continue
            shutil.chown(path, self.server_user, self.server_user)
            return path, ""
        return None, problem

    def make_manager(self, bot: str, tree: CodeTree | None = None) -> ServerManager:
        """A server manager for one bot (on the run's code tree unless another is given)."""
        tree = tree or self.tree
        assert tree is not None
        bot_dir = os.path.realpath(self.workdir.prepare_bot(bot))
        if self.server_user:
            check_reachable(bot_dir, self.server_user)
            shutil.chown(bot_dir, self.server_user, self.server_user)
        lock_dir = self.config.lock_dir or default_lock_dir()
        disk_dir, disk_problem = self._disk_dir(bot, lock_dir)
        leaser = PortLeaser(lock_dir, self.config.base_port)
        sock_dir = os.path.join(leaser.lock_dir, "sock")  # servers make their sockets here
        server_uid = pwd.getpwnam(self.server_user).pw_uid if self.server_user else os.geteuid()
        safedirs.make_dir(sock_dir, 0o755, owners=[server_uid],
                          remedy=f"remove it (rm -rf {sock_dir}) or choose another --lock-dir")
        if self.server_user and os.lstat(sock_dir).st_uid != server_uid:
            shutil.chown(sock_dir, self.server_user, self.server_user)
        env = dict(os.environ)
        env[TAG_WORKDIR] = self.workdir.path
        env[TAG_RUN] = self.run_id
        env[TAG_BOT] = f"{self.run_id}/{bot}"
        settings = ServerSettings(user=self.server_user, env=env,
                                  die_with_parent=not self.config.start_and_exit,
                                  start_timeout=self.config.start_timeout,
                                  shutdown_timeout=self.config.shutdown_timeout,
                                  socket_fallback_dir=sock_dir,
                                  wsrep_provider=self.config.wsrep_provider_path,
                                  wsrep_sst_method=self.config.wsrep_sst_method,
                                  cluster_snapshots=self.config.cluster_snapshots)
        cache = BootstrapCache(os.path.realpath(self.workdir.prepare_cache()), tree, self.server_user)
        manager = ServerManager(bot, bot_dir, tree, leaser, cache, settings, SERVER_KINDS,
                                on_change=self.write_state, disk_dir=disk_dir,
                                disk_problem=disk_problem)
        self.managers.append(manager)
        return manager

    def write_state(self) -> None:
        """Record each bot's live servers in the workdir (for --mode=cleanup)."""
        run = {"pid": os.getpid(), "run_id": self.run_id, "workdir": self.workdir.path,
               "start_and_exit": self.config.start_and_exit,
               "basedir": self.tree.basedir if self.tree else self.config.basedir}
        for manager in self.managers:
            StateFile(self.workdir.state_file_for(manager.bot_name)).write(
                run, [s.describe() for s in manager.servers])

    # ------------------------------------------------------------------ modes
    def apply_shard(self, specs: list[TestSpec], quiet: bool = False) -> list[TestSpec]:
        """This run's slice of specs under --shard K/N (all of them without it)."""
        if not self.config.shard:
            return specs
        k, n = parse_shard(self.config.shard)
        weights = Timings(self.config.timings_file) if self.config.timings_file else None
        chosen = shard(specs, k, n, lambda s: s.full_name,
                       (lambda s: weights.weight(s.full_name)) if weights else (lambda s: 1.0))
        if not quiet:
            self.log.info(f"Shard {k}/{n}: {len(chosen)} of {len(specs)} test(s)")
        return chosen

    def make_runner(self, bot: str) -> Runner:
        """A bot's runner: its server manager, test executor and evidence keeper."""
        manager = self.make_manager(bot)
        system = SystemManager(self.workdir.path, self.config.root, self.tree, self.config)
        logdir = os.path.join(manager.bot_dir, "log")
        os.makedirs(logdir, exist_ok=True)
        executor = TestExecutor(bot, system, manager, logdir, self.config.verbose)
        log_file = (self.workdir.log_file if bot == "bot0" and self.config.parallel <= 1
                    else self.workdir.bot_log_file(bot))
        evidence = EvidenceKeeper(self.workdir.failed_dir, self.config.max_save_datadir, log_file)
        return Runner(manager, executor, self.config.test_timeout, evidence)

    def run_tests(self, specs: list[TestSpec]) -> int:
        """Run the tests (sharded, on N bots, with retries); return the exit status."""
        config = self.config
        timings = Timings(self.workdir.timings_file)
        specs = self.apply_shard(specs)
        queue = [spec for spec in specs for _ in range(max(1, config.repeat))]
        bots = max(1, min(config.parallel, len(queue) or 1))
        self.log.info(f"Creating {bots} bot(s)")
        reporter = Reporter(self.log, config.verbose, show_bot=bots > 1)
        live = progress_wanted()
        if live:
            configure(config.verbose, logfile=self.workdir.log_file, progress_safe=True)
        progress = Progress(len(queue), live)
        outcomes: list[Outcome] = []

        def finished(outcome: Outcome) -> None:
            """Record, report and count one finished test."""
            outcomes.append(outcome)
            timings.record(outcome.name, outcome.time_ms / max(1, outcome.attempts))
            reporter.row(outcome)
            progress.advance(outcome.status in ("fail", "timeout"))

        started = time.monotonic()
        reporter.table_header()
        try:
            if bots == 1:
                stopped_early = self._run_in_process(queue, finished)
            else:
                pool = BotPool(self, bots)
                stopped_early = pool.run(queue, lambda s: timings.weight(s.full_name), finished,
                                         stop_on_failure=not config.force, retries=config.retry,
                                         retry_max=config.retry_failures_max)
        finally:
            progress.close()
            timings.save()
            if config.junit_xml and outcomes:
                write_junit(outcomes, config.junit_xml)
                self.log.info(f"JUnit report: {config.junit_xml}")
        reporter.summary(outcomes, len(queue), time.monotonic() - started, stopped_early)
        failed = any(o.status in ("fail", "timeout") for o in outcomes)
        return EXIT_TEST_FAILED if failed or stopped_early else EXIT_OK

    def _run_in_process(self, queue: list[TestSpec], finished: "Callable[[Outcome], None]") -> bool:
        """One bot in this process; True if stopped early after a failure."""
        runner = self.make_runner("bot0")
        failed = 0
        for done, spec in enumerate(queue, start=1):
            outcome = runner.run_with_retries(spec, self.config.retry,
                                              lambda: failed < self.config.retry_failures_max)
            finished(outcome)
            if outcome.status in ("fail", "timeout"):
                failed += 1
                if not self.config.force:
                    return done < len(queue)
        return False

    def start_and_exit(self, specs: list[TestSpec]) -> int:
        """Start the first test's servers, describe them, and leave them running."""
        if specs:
            reqs = specs[0].requirements
        else:
            suite = (self.config.suites or ["main"])[0]
            reqs = suite_requirements(suite, self.config.suitepaths, self.config.default_server_type)
        self.log.info("Creating 1 bot(s)")
        manager = self.make_manager("bot0")
        servers = manager.get_servers(reqs)
        for server in servers:
            self.log.info("bot0 server:")
            for line in server.info_block():
                self.log.info(line)
        self.write_state()
        run = {"workdir": self.workdir.path, "basedir": self.tree.basedir if self.tree else "",
               "pid_of_kewpie": os.getpid()}
        described = write_description(self.workdir.description_file, servers, run, self.server_user)
        self.log.info(f"Servers are described in {described}; each vardir has use, start "
                      f"and stop scripts")
        self.log.info("User specified --start-and-exit.  kewpie.py exiting and leaving servers "
                      "running...")
        self.keep_servers = True
        return EXIT_OK

    def cleanup(self) -> int:
        """--mode=cleanup: stop every server recorded in (or tagged with) the workdir."""
        if not os.path.isdir(self.workdir.path):
            self.log.info(f"No workdir at {self.workdir.path}; nothing to clean up")
            return EXIT_OK
        self.workdir.lock()
        self._locked = True
        stopped = stop_recorded(self.state_files(), self.workdir.path)
        self.log.info("Stopping all running servers...")
        self.workdir.wipe_bots()
        self.log.info(f"Stopped {stopped} server process(es) of {self.workdir.path}")
        return EXIT_OK

    # ------------------------------------------------------------------ end
    def close(self, fast: bool = False, bot: str | None = None) -> None:
        """Stop every server this run started (unless --start-and-exit kept them).

        A parallel bot passes its name: it then sweeps only what it started,
        never the other bots' servers.  Every step is tried even when an
        earlier one fails; the first failure is then raised as CleanupError.
        """
        problems: list[str] = []

        def attempt(what: str, step: Callable[[], None]) -> None:
            """Run one cleanup step, remembering (not raising) its failure."""
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - the other steps must still run
                self.log.debug(f"cleanup step failed: {what}", exc_info=True)
                problems.append(f"{what}: {type(exc).__name__}: {exc}")

        try:
            if self.keep_servers:
                for manager in self.managers:
                    attempt(f"release leases of {manager.bot_name}", manager.release)
            else:
                if any(m.servers for m in self.managers):
                    self.log.info("Stopping all running servers...")
                for manager in self.managers:
                    attempt(f"stop servers of {manager.bot_name}",
                            lambda m=manager: m.shutdown(fast=fast))  # type: ignore[misc]
                for manager in self.managers:
                    # Vardirs live in RAM (/dev/shm): free them; evidence of failures is
                    # in workdir/failed.  Disk vardirs (storage = 'disk') go as well.
                    attempt(f"empty {manager.bot_dir}",
                            lambda m=manager: self.workdir.empty_dir(m.bot_dir))  # type: ignore[misc]
                    attempt(f"empty {manager.disk_dir}",
                            lambda m=manager: self.workdir.empty_dir(m.disk_dir))  # type: ignore[misc]
                attempt("kill leftover processes", lambda: self._kill_leftovers(bot))
                for manager in self.managers:
                    attempt(f"clear the state file of {manager.bot_name}",
                            lambda m=manager: StateFile(  # type: ignore[misc]
                                self.workdir.state_file_for(m.bot_name)).clear())
        finally:
            if self._locked:
                self.workdir.unlock()
                self._locked = False
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise CleanupError(problems[0] + more)

    def _kill_leftovers(self, bot: str | None) -> None:
        """SIGKILL anything the servers left behind (SST helpers, tools), by tag."""
        leftovers = (tagged_processes(TAG_BOT, f"{self.run_id}/{bot}") if bot
                     else tagged_processes(TAG_RUN, self.run_id))
        for proc in leftovers:
            try:
                self.log.warning(f"killing leftover process {proc.pid} ({proc.name()})")
                proc.kill()
            except psutil.Error:
                pass
