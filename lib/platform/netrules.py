"""Network faults between kewpie's server namespaces: dropped links, loss, delay.

Each server namespace gets one nftables table, ``inet kewpie``, rewritten
whole on every change (``nft -f``: atomic), with

* an ``input`` chain dropping packets from the addresses the node must not
  hear (a partition, or one direction of it), and
* an ``output`` chain dropping a share of the packets leaving ``eth0``
  (``numgen random mod 100 < N``: loss without netem).

Delay uses ``tc qdisc ... netem`` on ``eth0`` where the kernel has netem.
Nothing is ever added to the machine's own namespace.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Iterable

from .netns import NODE_IF, NetHost, in_ns

TABLE = "kewpie"


@dataclass
class LinkState:
    """What is wrong with one node's link right now."""

    deaf_to: set[str] = field(default_factory=set)   # source addresses dropped on input
    loss: int = 0                                     # percent of outgoing packets dropped
    delay_ms: int = 0
    jitter_ms: int = 0

    @property
    def clean(self) -> bool:
        """Nothing injected."""
        return not self.deaf_to and not self.loss and not self.delay_ms


def render_nft(state: LinkState) -> str:
    """The nft script that makes a namespace's ``inet kewpie`` table match state."""
    lines = [f"table inet {TABLE}", f"delete table inet {TABLE}", f"table inet {TABLE} {{",
             "  chain input {", "    type filter hook input priority 0; policy accept;"]
    if state.deaf_to:
        lines.append(f"    ip saddr {{ {', '.join(sorted(state.deaf_to))} }} drop")
    lines += ["  }", "  chain output {", "    type filter hook output priority 0; policy accept;"]
    if state.loss:
        lines.append(f'    oifname "{NODE_IF}" numgen random mod 100 < {int(state.loss)} drop')
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def blocked_pairs(groups: Iterable[Iterable[int]], count: int) -> set[tuple[int, int]]:
    """(sender, receiver) pairs a partition into groups cuts: every pair of nodes in
    different groups, both ways; a node in no group is alone."""
    group_of: dict[int, int] = {}
    for g, members in enumerate(groups):
        for m in members:
            group_of[m] = g
    lone = len(group_of) + 1000
    label = {i: group_of.get(i, lone + i) for i in range(count)}
    return {(a, b) for a in range(count) for b in range(count)
            if a != b and label[a] != label[b]}


class NetworkControl:
    """The fault state of a set's namespaces, applied to them on every change."""

    def __init__(self, hosts: list[NetHost]) -> None:
        self.hosts = list(hosts)
        self.states = {h.index: LinkState() for h in hosts}
        self._lock = threading.Lock()

    def _apply(self, index: int, delay_changed: bool = False) -> None:
        host = self.hosts[index]
        state = self.states[index]
        in_ns(host.namespace, ["nft", "-f", "-"], input=render_nft(state))
        if delay_changed:
            in_ns(host.namespace, ["tc", "qdisc", "del", "dev", NODE_IF, "root"], check=False)
            if state.delay_ms:
                in_ns(host.namespace, ["tc", "qdisc", "add", "dev", NODE_IF, "root", "netem",
                                       "delay", f"{state.delay_ms}ms", f"{state.jitter_ms}ms"])

    def cut(self, pairs: Iterable[tuple[int, int]]) -> None:
        """Drop every packet from sender to receiver for each (sender, receiver)."""
        with self._lock:
            touched = set()
            for sender, receiver in pairs:
                self.states[receiver].deaf_to.add(self.hosts[sender].address)
                touched.add(receiver)
            for index in sorted(touched):
                self._apply(index)

    def connect_all(self) -> None:
        """Undo every cut."""
        with self._lock:
            for index, state in self.states.items():
                if state.deaf_to:
                    state.deaf_to = set()
                    self._apply(index)

    def set_loss(self, indexes: Iterable[int], percent: int) -> None:
        """Drop percent of the packets each node sends (0 heals)."""
        with self._lock:
            for index in indexes:
                self.states[index].loss = max(0, min(100, int(percent)))
                self._apply(index)

    def set_delay(self, indexes: Iterable[int], ms: int, jitter_ms: int = 0) -> None:
        """Delay every packet each node sends by ms (+- jitter); 0 heals (needs netem)."""
        with self._lock:
            for index in indexes:
                self.states[index].delay_ms = int(ms)
                self.states[index].jitter_ms = int(jitter_ms)
                self._apply(index, delay_changed=True)

    def heal(self) -> None:
        """Every link clean again."""
        with self._lock:
            for index, state in self.states.items():
                if not state.clean:
                    had_delay = bool(state.delay_ms)
                    self.states[index] = LinkState()
                    self._apply(index, delay_changed=had_delay)

    def describe(self) -> str:
        """One line: what is broken now."""
        parts = []
        for index, state in sorted(self.states.items()):
            if state.clean:
                continue
            bits = []
            if state.deaf_to:
                bits.append(f"deaf to {', '.join(sorted(state.deaf_to))}")
            if state.loss:
                bits.append(f"{state.loss}% loss")
            if state.delay_ms:
                bits.append(f"+{state.delay_ms}ms")
            parts.append(f"s{index}: {'; '.join(bits)}")
        return "; ".join(parts) or "all links clean"
