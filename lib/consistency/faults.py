"""Faults to inject into running servers, and schedules that compose them.

A :class:`Fault` has ``inject()`` and ``heal()``; both return a line saying
what they did.  ``group`` is every server of the set (a cluster, or a primary
with its replicas): healing waits until the whole group is healthy again (a
Galera cluster Synced at full size, restarted servers answering).

* :class:`Kill`: kill -9 one node, several in quick succession, or all; heal
  restarts them (a Galera node recovers its position and rejoins by IST; a
  cluster left without a majority is restarted from its most advanced node,
  see :func:`lib.servers.galera_cluster.restart_cluster`).
* :class:`Pause`: SIGSTOP, healed by SIGCONT.
* :class:`Restart`: a clean shutdown, healed by a start.
* :class:`Rejoin`: kill a Galera node and (``sst=True``) wipe its datadir;
  heal starts it, so it rejoins by IST or a full SST.
* :class:`Isolate`: cut a Galera node off the group communication
  (``gmcast.isolate``): a network partition {node} | {the rest}.
* :class:`Lag`: a node stops applying but keeps answering reads (behind).
* :class:`Tamper`: change rows behind replication's back (for detection tests).

A :class:`Schedule` runs steps in a background thread, each ``after``
seconds after the previous one healed, holding the fault for ``hold``
seconds, and records every injection and heal in the workloads' histories.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import pymysql

from .oplog import History
from .reads import is_galera
from ..errors import KewpieError, QueryError
from ..platform.logsetup import get_logger
from ..servers.faultwindows import PEER, TARGET, FaultWindow, FaultWindows
from ..servers.server import Server

if TYPE_CHECKING:
    from ..servers.galera import GaleraServer

HEAL_TIMEOUT = 180.0
PARTITION_TIMEOUT = 30.0  # Galera notices a silent peer after evs.suspect_timeout (5 s)


class FaultError(KewpieError):
    """A fault could not be injected or healed (the servers are not as the test expects)."""


def _names(nodes: Sequence[Server]) -> str:
    return ", ".join(n.name for n in nodes)


def _galera(nodes: list[Server]) -> list[GaleraServer]:
    return [n for n in nodes if is_galera(n)]


def wait_group_healthy(group: list[Server], timeout: float = HEAL_TIMEOUT) -> None:
    """Every server of group running and answering; a Galera group Synced at full size."""
    from ..servers.galera_cluster import GaleraJoinError, wait_cluster
    down = [s for s in group if not s.is_alive()]
    if down:
        raise FaultError(f"{_names(down)} not running after healing")
    nodes = _galera(group)
    if nodes:
        try:
            wait_cluster(nodes, timeout)
        except GaleraJoinError as exc:
            raise FaultError(f"the cluster did not heal: {exc}") from None
    for server in group:
        if not server.sql.ping():
            raise FaultError(f"{server.name} does not answer SQL after healing")


def start_nodes(nodes: list[Server], group: list[Server], crashed: bool = True,
                timeout: float = HEAL_TIMEOUT) -> None:
    """Start stopped or killed nodes of group and wait until group is healthy.

    When nodes crashed and the Galera nodes still running are no majority of group, the
    cluster has lost its quorum: it is restarted from its most advanced node
    (:func:`lib.servers.galera_cluster.restart_cluster`).
    """
    from ..servers.galera_cluster import has_quorum, restart_cluster
    down = [n for n in nodes if not n.is_alive()]
    galera = _galera(group)
    if crashed and galera and not has_quorum(sum(n.is_alive() for n in galera), len(galera)):
        restart_cluster(galera, timeout)
    else:
        for node in down:
            node.start(timeout=timeout)
    wait_group_healthy(group, timeout)


def _component(node: Server) -> str:
    """wsrep_cluster_status of node ('' when it does not answer)."""
    try:
        return node.status_var("wsrep_cluster_status") or ""
    except QueryError:
        return ""


class Fault:
    """Something that goes wrong on purpose; ``heal`` undoes it.

    While it acts, it has a window on each server of its group (role ``target`` on
    ``nodes``, ``peer`` on the rest; lib/servers/faultwindows.py): :meth:`open_windows`
    when it is injected, :meth:`close_windows` once its heal made the group healthy.
    A :class:`Schedule` does both; code that calls inject and heal itself calls them
    too.  The warnings check excuses, inside a window, the lines of the fault's
    class (lib/checks/errorlog.py, ``FAULT_CLASSES``, by ``name``).
    """

    name = "fault"

    def __init__(self, nodes: list[Server], group: list[Server] | None = None) -> None:
        self.nodes = list(nodes)
        self.group = list(group) if group else list(nodes)
        self.active = False
        self.recorded: list[tuple[FaultWindows, FaultWindow]] = []  # open fault windows

    def open_windows(self) -> None:
        """Open this fault's window on every server it touches (its nodes: targets;
        the rest of its group: peers), now."""
        at = time.time()
        touched: list[Server] = []
        for server in [*self.nodes, *self.group]:
            if any(server is seen for seen in touched):
                continue
            touched.append(server)
            record: FaultWindows | None = getattr(server, "fault_windows", None)
            if record is not None:
                role = TARGET if any(server is n for n in self.nodes) else PEER
                self.recorded.append((record, record.open(server.name, self.name, role,
                                                         str(self), at)))

    def close_windows(self) -> None:
        """Close the windows :meth:`open_windows` opened (the group is healthy), now."""
        at = time.time()
        for record, window in self.recorded:
            record.close(window, at)
        self.recorded = []

    def inject(self) -> str:
        """Break something; returns what was done."""
        raise NotImplementedError

    def heal(self) -> str:
        """Undo inject and wait until the group is healthy; returns what was done."""
        raise NotImplementedError

    def __str__(self) -> str:
        return f"{self.name} {_names(self.nodes)}"


class Kill(Fault):
    """kill -9 the nodes, ``spacing`` seconds apart; heal restarts them."""

    name = "kill"

    def __init__(self, nodes: list[Server], group: list[Server] | None = None,
                 spacing: float = 0.0) -> None:
        super().__init__(nodes, group)
        self.spacing = spacing

    def inject(self) -> str:
        """kill -9 each node in turn."""
        self.active = True
        for i, node in enumerate(self.nodes):
            if i and self.spacing:
                time.sleep(self.spacing)
            node.kill()
        gap = f" {self.spacing:g}s apart" if self.spacing and len(self.nodes) > 1 else ""
        return f"killed {_names(self.nodes)}{gap}"

    def heal(self) -> str:
        """Start the killed nodes again; wait for the group."""
        start = time.monotonic()
        start_nodes(self.nodes, self.group)
        self.active = False
        return f"restarted {_names(self.nodes)} in {time.monotonic() - start:.1f}s"


class Pause(Fault):
    """SIGSTOP the nodes; heal sends SIGCONT and waits for the group."""

    name = "pause"

    def inject(self) -> str:
        """Freeze the nodes."""
        self.active = True
        for node in self.nodes:
            node.pause()
        return f"paused {_names(self.nodes)}"

    def heal(self) -> str:
        """Let the nodes go on."""
        for node in self.nodes:
            node.resume()
        self.active = False
        wait_group_healthy(self.group)
        return f"resumed {_names(self.nodes)}"


class Restart(Fault):
    """A clean shutdown of the nodes; heal starts them."""

    name = "restart"

    def inject(self) -> str:
        """Shut the nodes down cleanly."""
        self.active = True
        hows = [f"{n.name} ({n.stop()})" for n in self.nodes]
        return f"stopped {', '.join(hows)}"

    def heal(self) -> str:
        """Start them again."""
        start = time.monotonic()
        start_nodes(self.nodes, self.group, crashed=False)
        self.active = False
        return f"started {_names(self.nodes)} in {time.monotonic() - start:.1f}s"


class Rejoin(Fault):
    """Take a Galera node out (kill -9, or a clean stop) and bring it back by IST or SST."""

    name = "rejoin"

    def __init__(self, nodes: list[Server], group: list[Server] | None = None,
                 sst: bool = False, clean: bool = False) -> None:
        super().__init__(nodes, group)
        self.sst = sst
        self.clean = clean

    def inject(self) -> str:
        """Stop or kill the nodes; with sst, wipe their datadirs."""
        self.active = True
        for node in self.nodes:
            node.stop() if self.clean else node.kill()
            if self.sst:
                if not is_galera(node):
                    raise FaultError(f"rejoin with sst: {node.name} is not a Galera node")
                node.wipe_datadir()
        how = "stopped" if self.clean else "killed"
        return f"{how} {_names(self.nodes)}" + (" and wiped the datadir" if self.sst else "")

    def heal(self) -> str:
        """Start them: they rejoin by state transfer."""
        start = time.monotonic()
        start_nodes(self.nodes, self.group, crashed=not self.clean)
        self.active = False
        return (f"{_names(self.nodes)} rejoined by {'SST' if self.sst else 'IST'} in "
                f"{time.monotonic() - start:.1f}s")


class Isolate(Fault):
    """Partition Galera nodes from the rest with ``gmcast.isolate=1``."""

    name = "isolate"

    def inject(self) -> str:
        """Cut the nodes off the group communication."""
        start = time.monotonic()
        self.active = True
        for node in self.nodes:
            node.execute("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'")
        rest = [g for g in _galera(self.group) if g not in self.nodes]
        deadline = start + PARTITION_TIMEOUT
        while not (all(_component(n) == "non-Primary" for n in self.nodes)
                   and all(_component(n) == "Primary" and n.is_synced(len(rest)) for n in rest)):
            if time.monotonic() > deadline:
                raise FaultError(f"isolating {_names(self.nodes)} did not split the cluster within "
                                 f"{PARTITION_TIMEOUT:.0f}s")
            time.sleep(0.1)
        return (f"partition in {time.monotonic() - start:.1f}s: isolated {_names(self.nodes)} "
                f"from {_names(rest)}")

    def heal(self) -> str:
        """Reconnect them and wait for the cluster."""
        start = time.monotonic()
        for node in self.nodes:
            node.execute("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'")
        wait_group_healthy(self.group)
        self.active = False
        return f"reconnected {_names(self.nodes)} in {time.monotonic() - start:.1f}s"


class Lag(Fault):
    """Make nodes fall behind while they keep answering reads.

    A Galera node holds ``FLUSH TABLES WITH READ LOCK`` (it desyncs and stops
    applying the cluster's writes; its own clients' writes block); a replica
    stops its SQL thread.  Heal releases the lock or restarts the thread and
    waits until the group is healthy (a Galera node Synced again; a replica's
    catching up is left to the run's settle step).
    """

    name = "lag"

    def __init__(self, nodes: list[Server], group: list[Server] | None = None) -> None:
        super().__init__(nodes, group)
        self._locks: list[pymysql.Connection] = []

    def inject(self) -> str:
        """Stop the nodes applying."""
        self.active = True
        for node in self.nodes:
            if is_galera(node):
                conn = node.connect()
                with conn.cursor() as cur:
                    cur.execute("FLUSH TABLES WITH READ LOCK")
                self._locks.append(conn)
            else:
                node.execute("STOP SLAVE SQL_THREAD")
        return f"{_names(self.nodes)} stopped applying (reads still answered)"

    def heal(self) -> str:
        """Let them apply again."""
        for conn in self._locks:
            with conn.cursor() as cur:
                cur.execute("UNLOCK TABLES")
            conn.close()
        self._locks = []
        for node in self.nodes:
            if not is_galera(node):
                node.execute("START SLAVE SQL_THREAD")
        self.active = False
        wait_group_healthy(self.group)
        return f"{_names(self.nodes)} applying again"


class Tamper(Fault):
    """Change data on purpose: run statements on nodes, by default behind
    replication's back (``sql_log_bin=0``; ``wsrep_on=OFF`` on a Galera node).

    It is the fault the detection tests use to prove the checkers see
    divergence and lost writes; heal does nothing.
    """

    name = "tamper"

    def __init__(self, nodes: list[Server], statements: list[str],
                 group: list[Server] | None = None, replicated: bool = False) -> None:
        super().__init__(nodes, group)
        self.statements = list(statements)
        self.replicated = replicated
        self.changed = 0

    def inject(self) -> str:
        """Run the statements on each node."""
        for node in self.nodes:
            conn = node.connect()
            try:
                with conn.cursor() as cur:
                    if not self.replicated:
                        cur.execute("SET SESSION sql_log_bin = 0")
                        if is_galera(node):
                            cur.execute("SET SESSION wsrep_on = OFF")
                    for sql in self.statements:
                        self.changed += cur.execute(sql)
            finally:
                conn.close()
        how = "replicated" if self.replicated else "unreplicated"
        return (f"tampered with {_names(self.nodes)} ({how}, {self.changed} rows): "
                f"{'; '.join(self.statements)}")

    def heal(self) -> str:
        """Nothing to undo."""
        return "nothing to heal after tampering"


@dataclass
class Step:
    """One fault of a schedule: inject ``after`` seconds in, heal ``hold`` seconds later."""

    fault: Fault
    after: float = 1.0
    hold: float = 1.0


class Schedule:
    """Faults in order, run in a background thread while workloads run."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._histories: list[History] = []

    @classmethod
    def cycle(cls, faults: list[Fault], every: float = 1.0, hold: float = 1.0,
              rounds: int = 1) -> "Schedule":
        """Each fault in turn, ``rounds`` times: wait ``every`` s, inject, hold, heal."""
        return cls([Step(f, every, hold) for _ in range(rounds) for f in faults])

    def start(self, histories: list[History]) -> None:
        """Run the steps in a thread, noting them in histories."""
        self._histories = histories
        self._thread = threading.Thread(target=self._run, name="fault-schedule", daemon=True)
        self._thread.start()

    def _note(self, f: str, value: Any, node: str = "-") -> None:
        if not f.endswith("-start"):
            get_logger().info(f"fault schedule: {value}")
        for history in self._histories:
            history.note(f, value, node)

    def _run(self) -> None:
        for step in self.steps:
            if self._stop.wait(step.after):
                return
            fault = step.fault
            fault.open_windows()
            try:
                self._note(f"{fault.name}-start", str(fault), _names(fault.nodes))
                self._note(fault.name, fault.inject(), _names(fault.nodes))
            except Exception as exc:  # noqa: BLE001 - reported by the run
                self.errors.append(f"injecting {fault}: {type(exc).__name__}: {exc}")
                self._note(f"{fault.name}-error", str(exc), _names(fault.nodes))
                return
            self._stop.wait(step.hold)
            if not self._heal(fault):
                return

    def _heal(self, fault: Fault) -> bool:
        try:
            self._note(f"heal-{fault.name}", fault.heal(), _names(fault.nodes))
            fault.close_windows()
            return True
        except Exception as exc:  # noqa: BLE001 - reported by the run
            first = (str(exc).splitlines() or [""])[0]
            self.errors.append(f"healing {fault}: {type(exc).__name__}: {first}")
            self._note(f"heal-{fault.name}-error", str(exc), _names(fault.nodes))
            return False

    def running(self) -> bool:
        """True while the schedule's thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def finish(self, timeout: float = HEAL_TIMEOUT + 30) -> None:
        """Stop injecting, wait for the thread, and heal whatever is still broken."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self.errors.append(f"the fault schedule did not finish within {timeout:.0f}s")
                return
        for step in self.steps:
            if step.fault.active:
                self._heal(step.fault)

    @property
    def span(self) -> float:
        """Seconds of waiting and holding in the schedule (healing time not included)."""
        return sum(s.after + s.hold for s in self.steps)
