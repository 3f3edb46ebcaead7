"""Network faults between servers that live in network namespaces.

They need a set started with ``network = 'namespaces'`` (each server a
"host" on a bridge kewpie owns, see :mod:`lib.platform.netns`); the packets
are dropped or delayed by :class:`lib.platform.netrules.NetworkControl` in
the servers' own namespaces.

* :class:`Partition`: cut the links between groups (any grouping), or only
  some directions.  Constructors: :meth:`Partition.between` (groups),
  :meth:`Partition.halves`, :meth:`Partition.isolate_one`,
  :meth:`Partition.majority_ring`, :meth:`Partition.bridge`,
  :meth:`Partition.one_way`.  On Galera, a grouping is waited for until the
  majority group is a Primary component of its size and every other node is
  non-Primary (about ``evs.suspect_timeout``, 5 s).
* :class:`Loss`: drop a percentage of the packets the nodes send.
* :class:`Latency`: delay them (tc netem; a kernel without netem says so).
* :class:`Flaky`: a partition switched on and off every ``period`` seconds
  while it is held.

Every heal reconnects, then waits until the group is healthy (Synced at full
size; replicas running).
"""
from __future__ import annotations

import threading
import time
from typing import Iterable

from .faults import (PARTITION_TIMEOUT, Fault, FaultError, _component, _galera,
                     _names, wait_group_healthy)
from .oplog import OK, History
from .verdict import Verdict, VerdictStatus
from ..platform.netns import netem_reason
from ..platform.netrules import NetworkControl, blocked_pairs
from ..servers.server import Server


def control_of(group: list[Server]) -> NetworkControl:
    """The network control of a namespaced set (FaultError for a loopback set)."""
    control = group[0].network if group else None
    if control is None or any(s.net is None for s in group):
        raise FaultError("network faults need servers in network namespaces: set "
                         "network = 'namespaces' in the suite's suite_config.py")
    return control


def _index(server: Server) -> int:
    assert server.net is not None
    return server.net.index


class Partition(Fault):
    """Drop every packet for the given (sender, receiver) pairs of servers."""

    name = "partition"

    def __init__(self, cuts: Iterable[tuple[Server, Server]], group: list[Server],
                 groups: list[list[Server]] | None = None, label: str = "") -> None:
        self.cuts = list(cuts)
        nodes = sorted({s for pair in self.cuts for s in pair}, key=lambda s: s.index)
        super().__init__(nodes or list(group), group)
        self.groups = groups
        self.label = label or self._describe_cuts()
        # (formed, heal began) in time.monotonic(), one per injection: when the cut held
        self.windows: list[tuple[float, float]] = []
        self._formed = 0.0

    # ------------------------------------------------------------ shapes
    @classmethod
    def between(cls, groups: list[list[Server]], group: list[Server]) -> "Partition":
        """Each group hears only its own members; a server in no group is alone."""
        index = {s.index: s for s in group}
        pairs = blocked_pairs([[s.index for s in g] for g in groups], len(group))
        listed = {s for g in groups for s in g}
        full = [list(g) for g in groups] + [[s] for s in group if s not in listed]
        return cls([(index[a], index[b]) for a, b in sorted(pairs)], group, full,
                   " | ".join(_names(g) for g in full))

    @classmethod
    def halves(cls, group: list[Server]) -> "Partition":
        """The first len//2 servers against the rest (a minority and a majority)."""
        half = len(group) // 2
        return cls.between([group[:half], group[half:]], group)

    @classmethod
    def isolate_one(cls, node: Server, group: list[Server]) -> "Partition":
        """node against everyone else."""
        return cls.between([[node], [s for s in group if s is not node]], group)

    @classmethod
    def bridge(cls, group: list[Server]) -> "Partition":
        """Two halves that cannot hear each other, joined by the middle server, which
        hears both (Jepsen's bridge): with 3 nodes, s0 and s2 are cut, s1 sees all."""
        mid = len(group) // 2
        left, right = group[:mid], group[mid + 1:]
        cuts = [(a, b) for a in left for b in right] + [(b, a) for a in left for b in right]
        return cls(cuts, group, None, f"bridge: {_names(left)} | {_names(right)} "
                                      f"through {group[mid].name}")

    @classmethod
    def majority_ring(cls, group: list[Server]) -> "Partition":
        """Every server hears a majority, no two the same one: each hears its ring
        neighbours within a distance; with 3 nodes this is the bridge."""
        n = len(group)
        if n <= 3:
            return cls.bridge(group)
        reach = n // 2 // 2 + (1 if (n // 2) % 2 else 0)
        cuts = [(group[a], group[b]) for a in range(n) for b in range(n)
                if a != b and min((a - b) % n, (b - a) % n) > reach]
        return cls(cuts, group, None, f"majority ring of {n} (each hears {2 * reach + 1})")

    @classmethod
    def one_way(cls, senders: list[Server], receivers: list[Server],
                group: list[Server]) -> "Partition":
        """receivers stop hearing senders; the other direction still works."""
        return cls([(s, r) for s in senders for r in receivers if s is not r], group, None,
                   f"one-way: {_names(receivers)} deaf to {_names(senders)}")

    # ------------------------------------------------------------ fault
    def _describe_cuts(self) -> str:
        return ", ".join(f"{a.name}->{b.name}" for a, b in self.cuts)

    def __str__(self) -> str:
        return f"{self.name} {self.label}"

    def inject(self) -> str:
        """Cut the links; for a grouping of Galera nodes, wait until the components form."""
        start = time.monotonic()
        self.active = True
        control_of(self.group).cut((_index(a), _index(b)) for a, b in self.cuts)
        formed = self._wait_components()
        self._formed = time.monotonic()
        took = f" in {time.monotonic() - start:.1f}s" if formed else ""
        return f"partition{took}: {self.label}" + (f" ({formed})" if formed else "")

    def _wait_components(self) -> str:
        nodes = _galera(self.group)
        if not nodes or not self.groups:
            return ""
        total = len(nodes)
        deadline = time.monotonic() + PARTITION_TIMEOUT
        while True:
            seen = {n.name: _component(n) for n in nodes}
            if all(self._expected(n, total) == seen[n.name] for n in nodes):
                primary = [g for g in self.groups if len(g) * 2 > total]
                return (f"primary {_names(primary[0])}" if primary else "no primary") + \
                    ", others non-Primary"
            if time.monotonic() > deadline:
                raise FaultError(f"partition {self.label} did not form within "
                                 f"{PARTITION_TIMEOUT:.0f}s: " +
                                 ", ".join(f"{k}={v or '?'}" for k, v in seen.items()))
            time.sleep(0.1)

    def minority(self) -> list[Server]:
        """The Galera nodes of the groups without a majority (they must refuse)."""
        total = len(_galera(self.group))
        return [n for g in self.groups or [] if len(g) * 2 <= total for n in g if n in self.group]

    def _expected(self, node: Server, total: int) -> str:
        for g in self.groups or []:
            if node in g:
                return "Primary" if len(g) * 2 > total else "non-Primary"
        return "non-Primary"

    def heal(self) -> str:
        """Reconnect everything and wait for the group."""
        start = time.monotonic()
        if self._formed:
            self.windows.append((self._formed, start))
            self._formed = 0.0
        control_of(self.group).connect_all()
        wait_group_healthy(self.group)
        self.active = False
        return f"healed partition {self.label} in {time.monotonic() - start:.1f}s"


class Loss(Fault):
    """Drop ``percent`` % of the packets the nodes send."""

    name = "loss"

    def __init__(self, nodes: list[Server], group: list[Server] | None = None,
                 percent: int = 20) -> None:
        super().__init__(nodes, group)
        self.percent = percent

    def inject(self) -> str:
        """Start dropping."""
        self.active = True
        control_of(self.group).set_loss([_index(n) for n in self.nodes], self.percent)
        return f"{self.percent}% packet loss on {_names(self.nodes)}"

    def heal(self) -> str:
        """Stop dropping; wait for the group."""
        start = time.monotonic()
        control_of(self.group).set_loss([_index(n) for n in self.nodes], 0)
        wait_group_healthy(self.group)
        self.active = False
        return f"no more loss on {_names(self.nodes)} ({time.monotonic() - start:.1f}s to heal)"


class Latency(Fault):
    """Delay every packet the nodes send by ``ms`` (+- ``jitter``) with tc netem."""

    name = "latency"

    def __init__(self, nodes: list[Server], group: list[Server] | None = None,
                 ms: int = 50, jitter: int = 0) -> None:
        super().__init__(nodes, group)
        self.ms = ms
        self.jitter = jitter

    @staticmethod
    def unsupported() -> str:
        """Why latency cannot be injected on this machine ('' when it can)."""
        return netem_reason()

    def inject(self) -> str:
        """Add the delay."""
        why = self.unsupported()
        if why:
            raise FaultError(f"cannot add latency: {why}")
        self.active = True
        control_of(self.group).set_delay([_index(n) for n in self.nodes], self.ms, self.jitter)
        return f"+{self.ms}ms (jitter {self.jitter}ms) on {_names(self.nodes)}"

    def heal(self) -> str:
        """Remove the delay; wait for the group."""
        control_of(self.group).set_delay([_index(n) for n in self.nodes], 0)
        wait_group_healthy(self.group)
        self.active = False
        return f"no more latency on {_names(self.nodes)}"


class Flaky(Fault):
    """A partition switched on and off every ``period`` seconds while held."""

    name = "flaky"

    def __init__(self, partition: Partition, period: float = 0.5) -> None:
        super().__init__(partition.nodes, partition.group)
        self.partition = partition
        self.period = period
        self.flips = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._errors: list[str] = []

    def __str__(self) -> str:
        return f"{self.name} {self.partition.label} every {self.period:g}s"

    def _flap(self) -> None:
        control = control_of(self.group)
        cuts = [(_index(a), _index(b)) for a, b in self.partition.cuts]
        down = False
        try:
            while not self._stop.wait(self.period):
                if down:
                    control.connect_all()
                else:
                    control.cut(cuts)
                down = not down
                self.flips += 1
        except Exception as exc:  # noqa: BLE001 - reported by heal
            self._errors.append(f"{type(exc).__name__}: {exc}")

    def inject(self) -> str:
        """Start flapping (the links go down first)."""
        self.active = True
        control_of(self.group).cut((_index(a), _index(b)) for a, b in self.partition.cuts)
        self.flips = 1
        self._stop.clear()
        self._thread = threading.Thread(target=self._flap, name="flaky-links", daemon=True)
        self._thread.start()
        return f"links flapping every {self.period:g}s: {self.partition.label}"

    def heal(self) -> str:
        """Stop flapping, reconnect, wait for the group."""
        start = time.monotonic()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        control_of(self.group).connect_all()
        if self._errors:
            raise FaultError(f"flapping the links failed: {self._errors[0]}")
        wait_group_healthy(self.group)
        self.active = False
        return (f"links steady after {self.flips} flips: {self.partition.label} "
                f"({time.monotonic() - start:.1f}s to heal)")


def check_minority_refused(history: History, partition: Partition) -> Verdict:
    """No operation on a minority node was acknowledged while the partition held.

    A Galera node without a Primary component must refuse reads and writes
    (``WSREP has not yet prepared node for application use``); an ``ok``
    operation that started after the partition formed and ended before the heal
    began is evidence against that."""
    minority = {n.name for n in partition.minority()}
    windows = [(a - history.t0, b - history.t0) for a, b in partition.windows]
    ops = history.client_ops()
    inside = [op for op in ops if op.node in minority
              and any(a <= op.start and op.end <= b for a, b in windows)]
    acked = [op for op in inside if op.outcome == OK]
    counts = history.counts()
    spans = ", ".join(f"+{a:.1f}s..+{b:.1f}s" for a, b in windows) or "none"
    if not windows or not minority:
        return Verdict("minority", VerdictStatus.UNKNOWN,
                       f"no partition with a minority held (windows: {spans})", [], counts)
    if acked:
        return Verdict("minority", VerdictStatus.INVALID,
                       f"{len(acked)} of {len(inside)} operations on the minority "
                       f"({', '.join(sorted(minority))}) were acknowledged while cut off ({spans})",
                       [f"acknowledged on the minority: {op.describe()}" for op in acked], counts)
    if not inside:
        return Verdict("minority", VerdictStatus.UNKNOWN,
                       f"no client tried the minority ({', '.join(sorted(minority))}) while it "
                       f"was cut off ({spans})", [], counts)
    return Verdict("minority", VerdictStatus.VALID,
                   f"all {len(inside)} operations on the minority ({', '.join(sorted(minority))}) "
                   f"were refused while it was cut off ({spans})", [], counts)
