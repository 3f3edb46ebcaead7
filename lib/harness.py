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
from typing import Mapping

from lib.bootstrap import BootstrapCache
from lib.codetree import CodeTree, discover
from lib.config import RunConfig
from lib.errors import EXIT_OK, EXIT_TEST_FAILED, CodeTreeError, UsageError
from lib.logsetup import get_logger
from lib.ports import PortLeaser, default_lock_dir
from lib.process import TAG_RUN, TAG_WORKDIR, tagged_processes
from lib.report import Outcome, Reporter
from lib.runner import Runner, SystemManager, TestExecutor
from lib.server import Server, ServerSettings
from lib.describe import write_description
from lib.galera import GaleraServer
from lib.galera_cluster import form_galera_set, wait_galera_applied
from lib.server_manager import ServerKind, ServerManager, start_replicating_set, wait_replicas_applied
from lib.state import StateFile, stop_recorded
from lib.suites import TestSpec, select_tests, suite_requirements
from lib.workdir import Workdir

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
        self.state = StateFile(self.workdir.state_file)
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
            stop_recorded(self.state, self.workdir.path)

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

    def make_manager(self, bot: str) -> ServerManager:
        """A server manager for one bot."""
        assert self.tree is not None
        bot_dir = os.path.realpath(self.workdir.prepare_bot(bot))
        if self.server_user:
            check_reachable(bot_dir, self.server_user)
            shutil.chown(bot_dir, self.server_user, self.server_user)
        lock_dir = self.config.lock_dir or default_lock_dir()
        leaser = PortLeaser(lock_dir, self.config.base_port)
        sock_dir = os.path.join(lock_dir, "sock")
        os.makedirs(sock_dir, mode=0o755, exist_ok=True)
        if self.server_user:
            shutil.chown(sock_dir, self.server_user, self.server_user)
        env = dict(os.environ)
        env[TAG_WORKDIR] = self.workdir.path
        env[TAG_RUN] = self.run_id
        settings = ServerSettings(user=self.server_user, env=env,
                                  die_with_parent=not self.config.start_and_exit,
                                  start_timeout=self.config.start_timeout,
                                  shutdown_timeout=self.config.shutdown_timeout,
                                  socket_fallback_dir=sock_dir,
                                  wsrep_provider=self.config.wsrep_provider_path,
                                  wsrep_sst_method=self.config.wsrep_sst_method,
                                  cluster_snapshots=self.config.cluster_snapshots)
        cache = BootstrapCache(os.path.realpath(self.workdir.prepare_cache()), self.tree, self.server_user)
        manager = ServerManager(bot, bot_dir, self.tree, leaser, cache, settings, SERVER_KINDS,
                                on_change=self.write_state)
        self.managers.append(manager)
        return manager

    def write_state(self) -> None:
        """Record live servers in the workdir (for --mode=cleanup)."""
        run = {"pid": os.getpid(), "run_id": self.run_id, "workdir": self.workdir.path,
               "start_and_exit": self.config.start_and_exit,
               "basedir": self.tree.basedir if self.tree else self.config.basedir}
        servers = [s.describe() for m in self.managers for s in m.servers]
        self.state.write(run, servers)

    # ------------------------------------------------------------------ modes
    def run_tests(self, specs: list[TestSpec]) -> int:
        """Run the tests on bot0; return the exit status."""
        self.log.info("Creating 1 bot(s)")
        manager = self.make_manager("bot0")
        system = SystemManager(self.workdir.path, self.config.root, self.tree, self.config)
        logdir = os.path.join(manager.bot_dir, "log")
        os.makedirs(logdir, exist_ok=True)
        executor = TestExecutor("bot0", system, manager, logdir, self.config.verbose)
        reporter = Reporter(self.log, self.config.verbose)
        runner = Runner(manager, executor, reporter, self.config.test_timeout)
        queue = [spec for spec in specs for _ in range(max(1, self.config.repeat))]
        outcomes: list[Outcome] = []
        started = time.monotonic()
        reporter.table_header()
        stopped_early = False
        for spec in queue:
            outcome = runner.run_one(spec)
            outcomes.append(outcome)
            reporter.row(outcome)
            if outcome.status in ("fail", "timeout") and not self.config.force:
                stopped_early = len(outcomes) < len(queue)
                break
        reporter.summary(outcomes, len(queue), time.monotonic() - started, stopped_early)
        failed = any(o.status in ("fail", "timeout") for o in outcomes)
        return EXIT_TEST_FAILED if failed else EXIT_OK

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
        stopped = stop_recorded(self.state, self.workdir.path)
        self.log.info("Stopping all running servers...")
        self.workdir.wipe_bots()
        self.log.info(f"Stopped {stopped} server process(es) of {self.workdir.path}")
        return EXIT_OK

    # ------------------------------------------------------------------ end
    def close(self, fast: bool = False) -> None:
        """Stop every server this run started (unless --start-and-exit kept them)."""
        try:
            if self.keep_servers:
                for manager in self.managers:
                    manager.release()
            else:
                if any(m.servers for m in self.managers):
                    self.log.info("Stopping all running servers...")
                for manager in self.managers:
                    manager.shutdown(fast=fast)
                for proc in tagged_processes(TAG_RUN, self.run_id):  # anything they left
                    try:
                        self.log.warning(f"killing leftover process {proc.pid} ({proc.name()})")
                        proc.kill()
                    except psutil.Error:
                        pass
                if self._locked:
                    self.state.clear()
        finally:
            if self._locked:
                self.workdir.unlock()
                self._locked = False
