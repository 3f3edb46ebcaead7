"""An Elle-style isolation checker for list-append histories.

Each transaction is a list of micro-operations on keys: ``["append", k, v]``
adds the unique value v to the end of key k's list; ``["r", k, [v1, v2...]]``
reads the whole list.  Because every value is appended once, a read names
the transactions that wrote what it saw and their order, so the dependency
graph can be built from the history alone (Kingsbury and Alvaro, "Elle:
Inferring Isolation Anomalies from Experimental Observations", 2020; the
anomalies are Adya's):

* the **version order** of a key is its longest read (every other read of it
  must be a prefix: otherwise ``incompatible-order``);
* **ww**: the writer of a key's i-th element precedes the writer of the next;
* **wr**: the writer of the last element a read saw precedes the reader;
* **rw** (anti-dependency): a reader that saw i elements precedes the writer
  of element i+1 (the version it did not see).

Anomalies reported:

* ``G1a`` aborted read: a committed transaction saw a value whose
  transaction failed;
* ``G1b`` intermediate read: it saw one transaction's append to a key but
  not that transaction's last append to it;
* ``G0`` a cycle of ww edges; ``G1c`` a cycle of ww and wr edges with a wr
  edge; ``G-single`` a cycle with exactly one rw edge; ``G2-item`` a cycle
  with two or more rw edges;
* ``duplicate-elements``, ``garbage-read`` (a value nobody appended) and
  ``incompatible-order``: reads no serial order of appends explains.

Building the graph is linear in the history; cycles are searched only
inside strongly connected components (Tarjan), one example per component
and anomaly, by breadth-first search for a shortest cycle through an edge
of the kind that defines the anomaly.  Transactions of outcome ``unknown``
take part when something they appended was read (they committed).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from .oplog import FAIL, OK, UNKNOWN, Counts, Op
from .verdict import Verdict, VerdictStatus

WW, WR, RW = "ww", "wr", "rw"
MAX_EXAMPLES = 8     # cycles described per anomaly kind
MAX_COUNTED = 1000   # components searched per anomaly kind (the count says "at least")


@dataclass(frozen=True)
class Write:
    """Where a value came from: the transaction (op index), its position, and whether
    it was that transaction's last append to the key."""

    txn: int
    final: bool


@dataclass
class Graph:
    """Transactions (op indexes) and labelled dependency edges between them."""

    edges: dict[int, dict[int, dict[str, str]]] = field(default_factory=dict)

    def add(self, a: int, b: int, kind: str, why: str) -> None:
        """Edge a -> b of kind (ww/wr/rw), with why (``key 3 after value 7``)."""
        if a == b:
            return
        self.edges.setdefault(a, {}).setdefault(b, {}).setdefault(kind, why)
        self.edges.setdefault(b, {})

    def successors(self, a: int, kinds: frozenset[str]) -> Iterable[int]:
        """Nodes reachable from a by one edge of one of kinds."""
        for b, labels in self.edges.get(a, {}).items():
            if kinds.intersection(labels):
                yield b


@dataclass
class Anomaly:
    """One anomaly: its kind and the lines that show it."""

    kind: str
    lines: list[str]


def micro_ops(op: Op) -> list[tuple[str, Any, Any]]:
    """The transaction's micro-operations as (f, key, value) tuples."""
    value = op.value if isinstance(op.value, list) else []
    return [(m[0], m[1], m[2]) for m in value if isinstance(m, (list, tuple)) and len(m) == 3]


def _writers(txns: list[Op]) -> dict[tuple[Any, Any], Write]:
    writers: dict[tuple[Any, Any], Write] = {}
    for op in txns:
        appends = [(k, v) for f, k, v in micro_ops(op) if f == "append"]
        last = {k: v for k, v in appends}
        for k, v in appends:
            writers[(k, v)] = Write(op.index, last[k] == v)
    return writers


def _reads(txns: list[Op]) -> list[tuple[Op, Any, list[Any]]]:
    """Every ok read: (transaction, key, the list it saw; values made hashable)."""
    return [(op, k, [tuple(x) if isinstance(x, list) else x for x in v]) for op in txns
            if op.outcome == OK for f, k, v in micro_ops(op) if f == "r" and isinstance(v, list)]


def _is_prefix(short: list[Any], long: list[Any]) -> bool:
    return len(short) <= len(long) and long[:len(short)] == short


def check_reads(txns: list[Op], writers: dict[tuple[Any, Any], Write],
                by_index: dict[int, Op]) -> tuple[list[Anomaly], dict[Any, list[Any]]]:
    """G1a, G1b, garbage and duplicate reads, incompatible orders; the version order
    of every key (its longest read)."""
    anomalies: list[Anomaly] = []
    longest: dict[Any, tuple[list[Any], Op]] = {}
    final_of: dict[tuple[int, Any], Any] = {}
    for (k, v), w in writers.items():
        if w.final:
            final_of[(w.txn, k)] = v
    for op, k, seen in _reads(txns):
        seen_set = set(seen)
        if len(seen_set) != len(seen):
            anomalies.append(Anomaly("duplicate-elements",
                                     [f"key {k} read as {seen}: {op.describe()}"]))
        for v in seen:
            write = writers.get((k, v))
            if write is None:
                anomalies.append(Anomaly("garbage-read", [
                    f"key {k}: value {v} was never appended: {op.describe()}"]))
                continue
            writer = by_index[write.txn]
            if writer.outcome == FAIL:
                anomalies.append(Anomaly("G1a", [
                    f"key {k}: {op.process} read {v}, appended by a failed transaction",
                    f"  reader: {op.describe()}", f"  writer: {writer.describe()}"]))
            elif write.txn != op.index and final_of.get((write.txn, k)) not in seen_set:
                anomalies.append(Anomaly("G1b", [
                    f"key {k}: {op.process} read {v}, an intermediate append (the same "
                    f"transaction's last append to key {k} was {final_of.get((write.txn, k))})",
                    f"  reader: {op.describe()}", f"  writer: {writer.describe()}"]))
        best = longest.get(k)
        if best is None or len(seen) > len(best[0]):
            longest[k] = (seen, op)
    for op, k, seen in _reads(txns):
        order, where = longest[k]
        if not _is_prefix(seen, order):
            anomalies.append(Anomaly("incompatible-order", [
                f"key {k}: read {seen} is not a prefix of read {order}",
                f"  {op.describe()}", f"  {where.describe()}"]))
    return anomalies, {k: v[0] for k, v in longest.items()}


def build_graph(txns: list[Op], writers: dict[tuple[Any, Any], Write],
                orders: dict[Any, list[Any]], by_index: dict[int, Op]) -> Graph:
    """ww, wr and rw edges between committed (or observed) transactions."""
    graph = Graph()
    counted = {op.index for op in txns if op.outcome == OK}
    for k, order in orders.items():
        prev, prev_v = None, None
        for v in order:
            w = writers.get((k, v))
            if w is None or by_index[w.txn].outcome == FAIL:
                prev = None
                continue
            counted.add(w.txn)
            if prev is not None:
                graph.add(prev, w.txn, WW, f"key {k}: {v} appended after {prev_v}")
            prev, prev_v = w.txn, v
    for op, k, seen in _reads(txns):
        order = orders.get(k, [])
        if seen:
            w = writers.get((k, seen[-1]))
            if w is not None and w.txn in counted:
                graph.add(w.txn, op.index, WR, f"key {k}: read {seen[-1]} as last element")
        if len(seen) < len(order) and _is_prefix(seen, order):
            nxt = writers.get((k, order[len(seen)]))
            if nxt is not None and nxt.txn in counted:
                graph.add(op.index, nxt.txn, RW,
                          f"key {k}: read {len(seen)} element(s), missed {order[len(seen)]}")
    return graph


def strongly_connected(graph: Graph) -> list[list[int]]:
    """Components of more than one node (Tarjan, iterative)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in graph.edges:
        if root in index:
            continue
        work = [(root, iter(graph.edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.edges[child])))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def _path(graph: Graph, start: int, goal: int, kinds: frozenset[str],
          inside: set[int]) -> list[int] | None:
    """A shortest path start ... goal over edges of kinds within inside."""
    parent: dict[int, int] = {start: start}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = [goal]
            while path[-1] != start:
                path.append(parent[path[-1]])
            return path[::-1]
        for nxt in graph.successors(node, kinds):
            if nxt in inside and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return None


def _step_kind(labels: dict[str, str]) -> str:
    """The weakest dependency a step needs: ww if it has one, else wr, else rw."""
    return next(k for k in (WW, WR, RW) if k in labels)


def _cycle_kinds(graph: Graph, cycle: list[int]) -> list[str]:
    """The edge kind each step of a cycle needs."""
    return [_step_kind(graph.edges[a][b]) for a, b in zip(cycle, cycle[1:] + cycle[:1])]


def classify(kinds: list[str]) -> str:
    """The anomaly a cycle with these edge kinds shows (Adya, as Elle names them)."""
    rw = kinds.count(RW)
    if rw == 1:
        return "G-single"
    if rw > 1:
        return "G2-item"
    return "G1c" if WR in kinds else "G0"


def describe_cycle(graph: Graph, cycle: list[int], by_index: dict[int, Op]) -> list[str]:
    """``T#12 -ww-> T#15 -rw-> T#12 (on s0, s1)`` and each edge's reason and transaction."""
    kinds = _cycle_kinds(graph, cycle)
    names = [f"T#{i}" for i in cycle]
    head = " ".join(f"{n} -{k}->" for n, k in zip(names, kinds)) + f" {names[0]}"
    nodes = sorted({by_index[i].node for i in cycle})
    lines = [head + f" (on {', '.join(nodes)})"]
    for (a, b), k in zip(zip(cycle, cycle[1:] + cycle[:1]), kinds):
        lines.append(f"  T#{a} -{k}-> T#{b} ({graph.edges[a][b][k]}): {by_index[a].describe()}")
    return lines


# anomaly: (the kind the first edge needs, the kinds the way back may use)
PLANS = (("G0", WW, frozenset({WW})), ("G1c", WR, frozenset({WW, WR})),
         ("G-single", RW, frozenset({WW, WR})), ("G2-item", RW, frozenset({WW, WR, RW})))


def find_cycles(graph: Graph, by_index: dict[int, Op]) -> list[Anomaly]:
    """One shortest example cycle per component for each anomaly kind found in it."""
    found: list[Anomaly] = []
    per_kind: dict[str, int] = {}
    for comp in strongly_connected(graph):
        inside = set(comp)
        for kind, first, rest in PLANS:
            seen = per_kind.get(kind, 0)
            if seen >= MAX_COUNTED:
                continue
            example = _first_cycle(graph, inside, first, rest, kind)
            if example is not None:
                per_kind[kind] = seen + 1
                lines = describe_cycle(graph, example, by_index) if seen < MAX_EXAMPLES else []
                found.append(Anomaly(kind, lines))
    return found


def _first_cycle(graph: Graph, inside: set[int], first: str, rest: frozenset[str],
                 kind: str) -> list[int] | None:
    """A cycle starting with an edge that needs kind first, closed over edges of kinds
    rest, that classifies as kind."""
    for a in sorted(inside):
        for b, labels in graph.edges.get(a, {}).items():
            if b not in inside or _step_kind(labels) != first:
                continue
            back = _path(graph, b, a, rest, inside)
            if back is None:
                continue
            cycle = [a] + back[:-1]
            if classify(_cycle_kinds(graph, cycle)) == kind:
                return cycle
    return None


def check_list_append(txns: list[Op], counts: Counts | None = None) -> Verdict:
    """The isolation verdict of a list-append history (see the module docstring)."""
    txns = [op for op in txns if op.outcome in (OK, FAIL, UNKNOWN)]
    by_index = {op.index: op for op in txns}
    writers = _writers(txns)
    anomalies, orders = check_reads(txns, writers, by_index)
    graph = build_graph(txns, writers, orders, by_index)
    anomalies += find_cycles(graph, by_index)
    ok = sum(op.outcome == OK for op in txns)
    edges = sum(len(labels) for targets in graph.edges.values() for labels in targets.values())
    summary = (f"{ok} committed transactions over {len(orders)} keys, "
               f"{edges} dependency edges")
    if not any(op.outcome == OK for op in txns):
        return Verdict("list-append", VerdictStatus.UNKNOWN,
                       f"no transaction committed; {summary}", [], counts)
    if not anomalies:
        return Verdict("list-append", VerdictStatus.VALID,
                       f"no anomaly: {summary}", [], counts)
    tally: dict[str, int] = {}
    for a in anomalies:
        tally[a.kind] = tally.get(a.kind, 0) + 1
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(tally.items()))
    evidence = [f"{a.kind}: {line}" if i == 0 else line
                for a in anomalies for i, line in enumerate(a.lines)]
    hidden = {k: n - sum(1 for a in anomalies if a.kind == k and a.lines)
              for k, n in tally.items()}
    evidence += [f"{k}: {n} more cycle(s) in other components, not shown"
                 for k, n in sorted(hidden.items()) if n]
    return Verdict("list-append", VerdictStatus.INVALID, f"{kinds}; {summary}", evidence, counts)


def anomaly_kinds(verdict: Verdict) -> set[str]:
    """The anomaly kinds a verdict's evidence names (``G-single``, ``G1a``...)."""
    return {line.split(":", 1)[0] for line in verdict.evidence
            if not line.startswith(" ") and not line.startswith(("lost on", "diverged:"))}
