"""The run's environment: config, run id, server user, workdir, code tree, and the one
factory of server managers; ``close()`` stops everything they started."""
from __future__ import annotations

import os
import pwd
import shutil
import threading
import time
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable, Iterator, Mapping


from ..errors import CleanupError, UsageError
from ..platform import netns, safedirs
from ..platform.logsetup import get_logger
from ..platform.ports import PortLeaser, default_lock_dir, ensure_lock_dir
from ..platform.process import TAG_BOT, TAG_RUN, TAG_WORKDIR, stop_tagged
from ..platform.trustedpath import Trust
from ..platform.workdir import DESCRIPTION, MIN_SHM_FREE, Workdir
from ..config import RunConfig
from .setup import check_reachable, log_header, resolve_server_user
from ..servers.bootstrap import BootstrapCache
from ..servers.codetree import CodeTree
from ..servers.describe import write_description
from ..servers.manager import (ServerKind, ServerManager, finish_replicating_set,
                               launch_replicating_set, start_replicating_set,
                               wait_replicas_applied)
from ..servers.server import Server, ServerSettings
from ..servers.state import StateFile, stop_recorded
from ..servers.options import parse_options
from ..servers.requirements import Requirements
from ..servers.wrappers import make_wrapper, valgrind_suppressions
from ..servers.trees import TreeSet

if TYPE_CHECKING:
    from .evidence import EvidenceKeeper

LEFTOVER_GRACE = 2.0   # seconds a process the servers left gets between SIGTERM and SIGKILL


def _mysql_kind() -> ServerKind:
    return ServerKind(Server, start_replicating_set, wait_replicas_applied, spare_datadirs=True,
                      launch_set=launch_replicating_set, finish_set=finish_replicating_set)


def _galera_kind() -> ServerKind:
    from ..servers.galera import GaleraServer
    from ..servers.galera_cluster import form_galera_set, wait_galera_applied
    return ServerKind(GaleraServer, form_galera_set, wait_galera_applied)


def _mtr_kind() -> ServerKind:
    from ..mtr.galera import start_mtr_set
    from ..mtr.server import mtr_server   # a Galera node when its options switch wsrep on
    return ServerKind(mtr_server, start_mtr_set, wait_replicas_applied)


class ServerKinds(Mapping[str, ServerKind]):
    """The server kinds by type name; a kind's modules are imported when it is asked for
    (a run of plain servers never loads the Galera and mysql-test ones)."""

    def __init__(self, makers: Mapping[str, Callable[[], ServerKind]]) -> None:
        """makers: type name -> a function building its kind."""
        self._makers = MappingProxyType(dict(makers))

    def __getitem__(self, name: str) -> ServerKind:
        return self._makers[name]()

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


SERVER_KINDS: Mapping[str, ServerKind] = ServerKinds(
    {"mysql": _mysql_kind, "galera": _galera_kind, "mtr": _mtr_kind})


class RunEnvironment:
    """What every mode runs over.

    Built from the config alone (nothing is created yet): the server user is
    resolved and the workdir chosen, falling back to disk vardirs when
    /dev/shm is short of space.  Managers made by :meth:`make_manager` are
    remembered, and :meth:`close` stops their servers unless
    ``keep_servers`` was set (--start-and-exit).
    """

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.log = get_logger()
        self.run_id = os.urandom(6).hex()  # 12 hex digits (uuid imports ~4 ms of modules)
        self.evidence_run = self.run_id  # workdir/failed/<this>/ (a pytest-xdist session's id)
        self.server_user = resolve_server_user(config.servers.server_user)
        self.workdir = Workdir(config.workdir, config.servers.use_shm, self.server_user)
        if self.workdir.use_shm and not self.workdir.shm_has_room():
            self.workdir.reclaim(strict=False)  # trees of deleted workdirs may be what fills it
        if self.workdir.use_shm and not self.workdir.shm_has_room():
            self.log.warning(f"/dev/shm has less than {MIN_SHM_FREE >> 30} GiB free: keeping "
                             f"vardirs on disk this run (as with --no-shm)")
            self.workdir.use_shm = False
        self.managers: list[ServerManager] = []
        # managers made early by launch(), each handed to the next make_manager of its bot
        self.early_managers: dict[str, ServerManager] = {}
        self._state_lock = threading.Lock()
        self.tree: CodeTree | None = None
        servers = config.servers
        self.trust = Trust.of(config.trusted)  # what the user trusts on purpose
        self.trees = TreeSet([servers.basedir, *servers.extra_basedirs], servers.trees_dir,
                             self.trust)
        self.keep_servers = False
        self._locked = False
        self.valgrind_supp_files: list[str] = []  # suites' valgrind.supp (set by selection)

    # ------------------------------------------------------------------ workdir
    def open_workdir(self, fresh: bool = True) -> None:
        """Create and lock the workdir; with fresh, stop the servers an earlier run left
        in it.  Earlier runs' evidence stays (``failed/<run>/``, lib/run/evidence.py)."""
        self.workdir.create()
        self.lock()
        if fresh:
            stop_recorded(self.state_files(), self.workdir.path)
            self.sweep_network()

    def join_workdir(self, session: str) -> None:
        """Open the workdir together with the other processes of one session (pytest-xdist
        workers, one bot each): the first stops the servers an earlier run left, the
        others wait for that and share the workdir.  Their evidence goes to one folder
        named for the session."""
        self.workdir.create()
        first = self.workdir.join(session)
        self._locked = True
        self.evidence_run = session
        if first:
            stop_recorded(self.state_files(), self.workdir.path)
            self.sweep_network()
            self.workdir.share()

    def evidence_keeper(self, harness_log: str | None) -> EvidenceKeeper:
        """A bot's keeper of failed tests' evidence, in this run's own folder
        ``workdir/failed/<run>/`` (never emptied by a later run; the newest runs' kept)."""
        from .evidence import EvidenceKeeper  # a bot's, built after the first launch
        return EvidenceKeeper(self.workdir.failed_dir, self.config.reporting.max_save_datadir,
                              harness_log, run=self.evidence_run)

    def sweep_network(self) -> list[str]:
        """Remove the network namespaces earlier runs of this workdir left (after their
        servers are stopped)."""
        return netns.sweep(self.workdir.path, self.network_record)

    @property
    def network_record(self) -> str:
        """``workdir/netns.json``: the namespaces made and not yet removed."""
        return os.path.join(self.workdir.path, "netns.json")

    def lock(self) -> None:
        """Take the workdir's lock (released by :meth:`close`)."""
        self.workdir.lock()
        self._locked = True

    def state_files(self) -> list[StateFile]:
        """Every bot's record of running servers in this workdir."""
        return [StateFile(path) for path in self.workdir.state_files()]

    def discover_tree(self) -> CodeTree:
        """Find the code tree's binaries and log kewpie's header."""
        self.tree = self.trees.first
        for extra in self.config.servers.extra_basedirs:  # a bad second tree: one line, before anything
            self.trees.tree(extra)
        log_header(self.log, self.config, self.workdir, self.tree, self.server_user)
        if self.config.servers.extra_basedirs:
            self.log.info(f"code trees: {self.trees.describe()}")
        return self.tree

    # ------------------------------------------------------------------ managers
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

    def server_env(self, bot: str) -> dict[str, str]:
        """The environment servers of bot start with: kewpie's, plus the tags that let
        cleanup find them (workdir, run, bot)."""
        env = dict(os.environ)
        env[TAG_WORKDIR] = self.workdir.path
        env[TAG_RUN] = self.run_id
        env[TAG_BOT] = f"{self.run_id}/{bot}"
        return env

    def make_manager(self, bot: str, tree: CodeTree | None = None,
                     bootstrap: Callable[[str, CodeTree, str | None], BootstrapCache] | None = None,
                     lane: str = "") -> ServerManager:
        """The one factory of server managers: bot's directories, port leaser, socket
        directory, settings and bootstrap cache (on the run's code tree unless another
        is given; bootstrap builds another kind of cache, e.g. mysql-test's, from the
        cache directory, the tree and the server user).  lane names a bot's second
        server set (its manager, directory and state file are ``bot + lane``; its
        servers carry the bot's tag).  The manager is stopped by :meth:`close`.
        A manager :meth:`launch` made for bot is returned as it is."""
        if tree is None and bootstrap is None and not lane and bot in self.early_managers:
            return self.early_managers.pop(bot)
        tree = tree or self.tree
        assert tree is not None
        name = bot + lane
        bot_dir = os.path.realpath(self.workdir.prepare_bot(name))
        if self.server_user:
            check_reachable(bot_dir, self.server_user)
            shutil.chown(bot_dir, self.server_user, self.server_user)
        lock_dir = self.config.servers.lock_dir or default_lock_dir()
        disk_dir, disk_problem = self._disk_dir(name, lock_dir)
        leaser = PortLeaser(lock_dir, self.config.servers.base_port)
        server_uid = pwd.getpwnam(self.server_user).pw_uid if self.server_user else os.geteuid()
        # servers make their sockets here; servers run as root (--server-user=root) get
        # their own, as the usual one belongs to mysql
        sock_dir = os.path.join(leaser.lock_dir, "sock-root" if server_uid == 0 else "sock")
        safedirs.make_dir(sock_dir, 0o755, owners=[server_uid],
                          remedy=f"remove it (rm -rf {sock_dir}) or choose another --lock-dir")
        if self.server_user and os.lstat(sock_dir).st_uid != server_uid:
            shutil.chown(sock_dir, self.server_user, self.server_user)
        config = self.config
        wrapper = make_wrapper(config.debugging, valgrind_suppressions(tree.server, self.valgrind_supp_files))
        factor = wrapper.timeout_factor if wrapper else 1.0
        settings = ServerSettings(user=self.server_user, env=self.server_env(bot),
                                  die_with_parent=not (config.start_and_exit or config.debugging.keep_failed),
                                  start_timeout=(wrapper and wrapper.start_timeout)
                                  or config.servers.start_timeout * factor,
                                  shutdown_timeout=config.servers.shutdown_timeout * factor,
                                  wrapper=wrapper, final_options=parse_options(config.servers.mysqld_options),
                                  socket_fallback_dir=sock_dir,
                                  wsrep_provider=config.servers.wsrep_provider_path,
                                  wsrep_sst_method=config.servers.wsrep_sst_method,
                                  cluster_snapshots=config.servers.cluster_snapshots,
                                  trees=self.trees)
        cache = (bootstrap or BootstrapCache)(os.path.realpath(self.workdir.prepare_cache()), tree,
                                              self.server_user)
        manager = ServerManager(name, bot_dir, tree, leaser, cache, settings, SERVER_KINDS,
                                on_change=self.write_state, disk_dir=disk_dir,
                                disk_problem=disk_problem,
                                network_prefix=netns.prefix_for(self.workdir.path),
                                network_record=self.network_record,
                                keep_dir=self.workdir.kept_spares_dir(name)
                                if not lane and bootstrap is None and tree is self.tree
                                else None)
        self.managers.append(manager)
        return manager

    def launch(self, bot: str, reqs: Requirements) -> bool:
        """Make bot's manager now and launch a set for reqs on it (spawned, not waited
        for: :meth:`ServerManager.launch`); the next :meth:`make_manager` of bot returns
        that manager, whose ``get_servers(reqs)`` then finishes the set.  False when
        nothing was launched (a server wrapper, a kind that starts in one go...)."""
        manager = self.make_manager(bot)
        self.early_managers[bot] = manager
        if manager.settings.wrapper is not None:  # valgrind, rr, gdb: started as usual
            return False
        return manager.launch(reqs)

    def write_state(self) -> None:
        """Record each bot's live servers in the workdir (for --mode=cleanup)."""
        run = {"pid": os.getpid(), "run_id": self.run_id, "workdir": self.workdir.path,
               "start_and_exit": self.config.start_and_exit,
               "basedir": self.tree.basedir if self.tree else self.config.servers.basedir}
        with self._state_lock:  # a bot's two server sets may change from two threads
            for manager in self.managers:
                StateFile(self.workdir.state_file_for(manager.bot_name)).write(
                    run, [*(s.describe() for s in manager.servers),
                          *(a.describe() for a in manager.arbitrators)])

    def describe(self, servers: list[Server], run: dict[str, object],
                 arbitrators: list[dict[str, object]] | None = None) -> str:
        """Write ``workdir/cluster.json`` and the servers' scripts (recorded in the marker
        first, so --mode=cleanup knows kewpie made it); arbitrators: the descriptions of
        the set's garbd processes.  Returns its path."""
        self.workdir.record_made(add=(DESCRIPTION,))
        return write_description(self.workdir.description_file, servers, run, self.server_user,
                                 arbitrators or [])

    # ------------------------------------------------------------------ end
    def close(self, fast: bool = False, bot: str | None = None) -> None:
        """Stop every server this run started (unless --start-and-exit kept them).

        A parallel bot passes its name: it then sweeps only what it started,
        never the other bots' servers.  Every step is tried even when an
        earlier one fails; the first failure is then raised as CleanupError.
        """
        problems: list[str] = []

        def attempt(what: str, step: Callable[[], object]) -> None:
            """Run one cleanup step, remembering (not raising) its failure."""
            started = time.monotonic()
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - the other steps must still run
                self.log.debug(f"cleanup step failed: {what}", exc_info=True)
                problems.append(f"{what}: {type(exc).__name__}: {exc}")
            took = time.monotonic() - started
            if took > 0.1:
                self.log.debug("cleanup: %s took %.0f ms", what, took * 1000)

        try:
            if self.keep_servers:
                for manager in self.managers:
                    attempt(f"release leases of {manager.bot_name}", manager.release)
            else:
                if any(m.servers for m in self.managers):
                    self.log.info("Stopping all running servers...")
                for manager in self.managers:
                    # The vardirs are emptied next: a clean stop only where a server
                    # wrapper (valgrind, rr, gdb...) needs its server to exit to report.
                    discard = manager.settings.wrapper is None
                    attempt(f"stop servers of {manager.bot_name}",
                            partial(manager.shutdown, fast=fast, discard=discard))
                for manager in self.managers:
                    # Vardirs live in RAM (/dev/shm): free them; evidence of failures is
                    # in workdir/failed.  Disk vardirs (storage = 'disk') go as well.
                    attempt(f"empty {manager.bot_dir}", partial(self.workdir.empty_dir, manager.bot_dir))
                    attempt(f"empty {manager.disk_dir}", partial(self.workdir.empty_dir, manager.disk_dir))
                attempt("kill leftover processes", lambda: self._kill_leftovers(bot))
                for manager in self.managers:
                    if bot is None or manager.bot_name == bot:
                        attempt(f"remove the network namespaces of {manager.bot_name}",
                                manager.host_network.destroy)
                for manager in self.managers:
                    attempt(f"clear the state file of {manager.bot_name}",
                            StateFile(self.workdir.state_file_for(manager.bot_name)).clear)
        finally:
            if self._locked:
                self.workdir.unlock()
                self._locked = False
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise CleanupError(problems[0] + more)

    def _kill_leftovers(self, bot: str | None) -> None:
        """Stop anything the servers left behind (SST helpers, tools), found by tag, by
        the one stop policy (SIGTERM, LEFTOVER_GRACE seconds, SIGKILL)."""
        tag, value = (TAG_BOT, f"{self.run_id}/{bot}") if bot else (TAG_RUN, self.run_id)
        for pid, name in stop_tagged(tag, value, LEFTOVER_GRACE):
            self.log.warning(f"stopped leftover process {pid} ({name})")
