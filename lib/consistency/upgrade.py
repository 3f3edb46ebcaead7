"""A rolling-upgrade step as a fault: a node leaves cleanly and comes back on another
code tree (``Upgrade([n2], nodes, new_tree)``), keeping its datadir.

A Galera node stopped cleanly keeps its position (``grastate.dat``), so on the
new tree it catches up by IST from a donor's gcache; heal waits until the whole
group is healthy again (Synced at full size) and says which state transfer the
node took, read from its error log (``transfers`` keeps it per node).
A plain server (a primary or replica) simply starts again on the new tree.
"""
from __future__ import annotations

import re
import time

from .faults import Fault, start_nodes
from ..servers.codetree import CodeTree
from ..servers.server import Server
from ..servers.trees import switch_tree

IST_RE = re.compile(r"IST received|Receiving IST|IST .*complete")
SST_RE = re.compile(r"Proceeding with SST|SST completed on joiner|SST request")


def state_transfer(log_text: str) -> str:
    """'SST', 'IST' or 'none' (rejoined at its own position) from a joiner's log lines."""
    if SST_RE.search(log_text):
        return "SST"
    if IST_RE.search(log_text):
        return "IST"
    return "none"


class Upgrade(Fault):
    """Stop the nodes cleanly; heal starts them on ``tree`` (an upgrade or downgrade)."""

    name = "upgrade"

    def __init__(self, nodes: list[Server], group: list[Server] | None, tree: CodeTree) -> None:
        super().__init__(nodes, group)
        self.tree = tree
        self.marks: dict[str, int] = {}
        self.transfers: dict[str, str] = {}
        self.before: dict[str, str] = {}

    def inject(self) -> str:
        """Shut the nodes down cleanly (their position is saved)."""
        self.active = True
        hows = []
        for node in self.nodes:
            self.before[node.name] = node.tree.label
            self.marks[node.name] = node.errlog.size()
            hows.append(f"{node.name} ({node.stop()})")
        return f"stopped {', '.join(hows)} for the upgrade to {self.tree.label}"

    def heal(self) -> str:
        """Start the nodes on the new tree; wait for the group; say how they caught up."""
        start = time.monotonic()
        for node in self.nodes:
            switch_tree(node, self.tree)
        start_nodes(self.nodes, self.group, crashed=False)
        self.active = False
        parts = []
        for node in self.nodes:
            self.transfers[node.name] = state_transfer(node.errlog.since(self.marks[node.name]))
            parts.append(f"{node.name} {self.before[node.name]} -> {node.variable('version')} "
                         f"(state transfer: {self.transfers[node.name]})")
        return f"upgraded {', '.join(parts)} in {time.monotonic() - start:.1f}s"
