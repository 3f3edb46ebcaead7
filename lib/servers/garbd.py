"""The Galera arbitrator (``garbd``, Debian's galera-arbitrator-4): a cluster member
that keeps no data but votes, so two data nodes and an arbitrator keep a primary
component when one data node dies.

An :class:`Arbitrator` is started and stopped as kewpie's servers are: through
the one process layer (its own session, the run's tags in its environment plus
its own name tag, the parent-death signal unless the servers are kept), one
leased port for its group communication, listening on 127.0.0.1 only
(``gmcast.listen_addr``; garbd has no other listener), its output and state
(``gvwstate.dat``, through ``base_dir``) in its own vardir.  The manager keeps
it beside the servers of its set: it is recorded in the bot's state file,
stopped with the set (SIGTERM, then SIGKILL), and found by ``--mode=cleanup``'s
sweep of tagged processes after a SIGKILLed run.
"""
from __future__ import annotations

import os
import shutil
from typing import Any

from ..errors import ServerStartError
from ..platform.logtail import tail_file
from ..platform.ports import PortLease
from ..platform.process import TAG_NAME, ProcessExecutor
from .galera import PROVIDER_DEFAULTS
from .layout import HOST
from .server import ServerSettings

GARBD_CANDIDATES = ("/usr/bin/garbd", "/usr/sbin/garbd")
CLUSTER_NAME = "kewpie"   # GaleraServer's wsrep-cluster-name
STOP_TIMEOUT = 10.0


def find_garbd(provider: str = "") -> str:
    """garbd as mysql-test-run looks for it (next to the provider's directory, in the
    build tree's ``garb/``, ``/usr/bin/garbd``), then on PATH; '' when not installed."""
    candidates = list(GARBD_CANDIDATES)
    if provider:
        base = os.path.dirname(provider)
        candidates = [os.path.join(base, "garb", "garbd"),
                      os.path.join(base, "..", "..", "bin", "garb", "garbd"), *candidates]
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.normpath(path)
    return shutil.which("garbd") or ""


class Arbitrator:
    """One garbd process joining a Galera cluster (a member without data)."""

    server_type = "garbd"

    def __init__(self, name: str, vardir: str, lease: PortLease, settings: ServerSettings,
                 peers: list[str], group: str = CLUSTER_NAME, garbd: str = "") -> None:
        """peers: the data nodes' ``host:port`` group communication addresses."""
        self.name = name
        self.vardir = vardir
        self.lease = lease
        self.settings = settings
        self.peers = list(peers)
        self.group = group
        self.garbd = garbd or find_garbd(settings.wsrep_provider)
        self.host = HOST
        self.executor: ProcessExecutor | None = None

    # ------------------------------------------------------------ places
    @property
    def port(self) -> int:
        """Its group communication port (the lease's first)."""
        return self.lease.port(0)

    @property
    def log_file(self) -> str:
        """garbd's output."""
        return os.path.join(self.vardir, "garbd.log")

    @property
    def pid(self) -> int | None:
        """Its pid while running, else None."""
        return self.executor.pid if self.executor is not None and self.executor.running() else None

    def provider_options(self) -> str:
        """Its group communication options: on 127.0.0.1 only, state kept in its vardir,
        the membership timings of kewpie's nodes (lib.servers.galera)."""
        return ";".join([f"base_port={self.port}",
                         f"gmcast.listen_addr=tcp://{self.host}:{self.port}",
                         f"base_dir={self.vardir}",
                         *(o for o in PROVIDER_DEFAULTS if not o.startswith("gcache."))])

    def argv(self) -> list[str]:
        """The command line."""
        return [self.garbd, "--address", f"gcomm://{','.join(self.peers)}",
                "--group", self.group, "--name", self.name,
                "--options", self.provider_options()]

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Launch garbd (as the server user, tagged); ServerStartError when it cannot be."""
        if self.is_alive():
            return
        if not self.garbd:
            raise ServerStartError("garbd (the Galera arbitrator) is not installed: install "
                                   "Debian's galera-arbitrator-4 (scripts/setup.sh)")
        os.makedirs(self.vardir, mode=0o750, exist_ok=True)
        if self.settings.user:
            shutil.chown(self.vardir, self.settings.user, self.settings.user)
        env = dict(self.settings.env)
        env[TAG_NAME] = self.vardir
        env["TMPDIR"] = self.vardir
        self.executor = ProcessExecutor(
            self.argv(), env, self.log_file, user=self.settings.user,
            pass_fds=(self.lease.fd,) if self.lease.fd >= 0 else (),
            die_with_parent=self.settings.die_with_parent, cwd=self.vardir,
            launcher=self.settings.launcher)
        try:
            self.executor.start()
        except OSError as exc:
            raise ServerStartError(f"{self.name}: cannot start {self.garbd}: {exc}") from exc

    def is_alive(self) -> bool:
        """Whether garbd still runs."""
        return self.executor is not None and self.executor.running()

    def assert_running(self) -> None:
        """ServerStartError with its output when garbd has exited."""
        if self.executor is not None and not self.executor.running():
            raise ServerStartError(f"{self.name} exited with status "
                                   f"{self.executor.returncode()} (log: {self.log_file})",
                                   self.log_tail())

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM (garbd leaves the cluster), SIGKILL after timeout."""
        if self.executor is not None:
            self.executor.stop(term_timeout=timeout)

    def kill(self) -> None:
        """kill -9 and reap."""
        if self.executor is not None:
            self.executor.kill()

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of garbd's output."""
        return tail_file(self.log_file, lines)

    # ------------------------------------------------------------ reporting
    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description (the state file's and cluster.json's entry)."""
        create_time = self.executor.create_time if self.pid is not None and self.executor else None
        return {"name": self.name, "type": self.server_type, "pid": self.pid,
                "create_time": create_time, "host": self.host, "port": self.port,
                "ports": self.lease.ports, "vardir": self.vardir, "log": self.log_file,
                "lease": self.lease.lock_path, "garbd": self.garbd,
                "cluster_address": f"gcomm://{','.join(self.peers)}", "group": self.group,
                "status": int(self.is_alive())}

    def info_block(self) -> list[str]:
        """kewpie's block for --start-and-exit."""
        return [f"NAME: {self.name} (Galera arbitrator)", f"GALERA_LISTEN_PORT: {self.port}",
                f"LOG: {self.log_file}", f"VARDIR: {self.vardir}",
                f"STATUS: {'running (pid %s)' % self.pid if self.is_alive() else 'not running'}"]

    def __repr__(self) -> str:
        return f"Arbitrator({self.name}, port={self.port}, pid={self.pid})"
