"""The list-append workload: transactions of appends and reads, for the isolation checker.

Each client runs transactions of 1..``max_ops`` micro-operations over a few
keys: ``append`` adds a unique value to the key's list (one row per key in
``<schema>.lists``, the list a comma-separated text: ``INSERT ... ON
DUPLICATE KEY UPDATE v = CONCAT(v, ',', ...)``), ``r`` reads it whole.  A few
keys are active at a time; the window moves on as values are appended, so
lists stay short and the checker's reads cheap.  The history is judged by
:func:`lib.consistency.elle.check_list_append` (G0, G1a, G1b, G1c,
G-single, G2-item) and, after the run, every node's lists: every acknowledged
append present, the nodes equal.
"""
from __future__ import annotations

import threading
from typing import Any

import pymysql.cursors

from .elle import check_list_append
from .oplog import OK, Counts, Op
from .reads import is_galera, live
from .verdict import Verdict, VerdictStatus, combine
from .workload import Call, Client, Workload
from ..servers.server import Server


def parse_list(text: str | None) -> list[int]:
    """``'3,7,12'`` -> [3, 7, 12]; NULL or no row -> []."""
    return [int(x) for x in text.split(",") if x] if text else []


class ListAppend(Workload):
    """Transactions of appends and reads over a moving window of ``keys`` keys.

    ``sync_wait``: ``wsrep_sync_wait`` for every client session on Galera
    (None leaves the server's default); ``isolation``: a ``SET SESSION
    TRANSACTION ISOLATION LEVEL`` value (None: the default, REPEATABLE READ).
    """

    name = "list-append"

    def __init__(self, nodes: list[Server], clients: int = 4, keys: int = 5, max_ops: int = 4,
                 appends_per_key: int = 30, sync_wait: int | None = None,
                 isolation: str | None = None, schema: str = "listappend",
                 **kwargs: Any) -> None:
        super().__init__(nodes, clients, **kwargs)
        self.keys = keys
        self.max_ops = max_ops
        self.appends_per_key = appends_per_key
        self.schema = schema
        self.table = f"`{schema}`.`lists`"
        sql = []
        if sync_wait is not None and all(is_galera(n) for n in self.nodes):
            sql.append(f"SET SESSION wsrep_sync_wait = {int(sync_wait)}")
        if isolation:
            sql.append(f"SET SESSION TRANSACTION ISOLATION LEVEL {isolation}")
        self.session_sql = tuple(sql)
        self.sync_wait = sync_wait
        self.isolation = isolation or "REPEATABLE READ"
        self._lock = threading.Lock()
        self._appended = 0

    def setup(self) -> None:
        """Create the (empty) table."""
        self.create_table(self.schema, "lists", "k BIGINT NOT NULL PRIMARY KEY, "
                          "v TEXT NOT NULL")

    def _next_value(self) -> tuple[int, int]:
        with self._lock:
            self._appended += 1
            return self._appended, self._appended // self.appends_per_key

    def step(self, client: Client) -> None:
        """One transaction of random appends and reads."""
        rng = client.rng
        mops: list[list[Any]] = []
        for _ in range(rng.randint(1, self.max_ops)):
            if rng.random() < 0.5:
                value, base = self._next_value()
                mops.append(["append", base + rng.randrange(self.keys), value])
            else:
                with self._lock:
                    base = self._appended // self.appends_per_key
                mops.append(["r", base + rng.randrange(self.keys), None])
        client.invoke("txn", mops, lambda cur, call: self._transaction(cur, call, mops))

    def _transaction(self, cur: pymysql.cursors.Cursor, call: Call, mops: list[list[Any]]) -> list[list[Any]]:
        done = []
        cur.execute("START TRANSACTION")
        for f, k, v in mops:
            if f == "append":
                cur.execute(f"INSERT INTO {self.table} (k, v) VALUES (%s, %s) "
                            f"ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', %s)", (k, str(v), str(v)))
                done.append([f, k, v])
            else:
                cur.execute(f"SELECT v FROM {self.table} WHERE k = %s", (k,))
                row = cur.fetchone()
                done.append([f, k, parse_list(row[0] if row else None)])
        call.committing = True
        cur.execute("COMMIT")
        return done

    def final_state(self) -> dict[str, dict[int, list[int]]]:
        """Every running node's lists."""
        return {n.name: {int(k): parse_list(v)
                         for k, v in self.final_rows(n, f"SELECT k, v FROM {self.table}")}
                for n in live(self.all_servers)}

    def check(self, final: dict[str, dict[int, list[int]]]) -> Verdict:
        """Isolation anomalies in the history; lost appends and diverged nodes after it."""
        ops = self.history.client_ops("txn")
        counts = self.history.counts()
        isolation = check_list_append(ops, counts)
        lists = check_final_lists(ops, final, counts)
        verdict = combine("list-append", [isolation, lists])
        verdict.summary = f"{isolation.summary}; final lists: {lists.summary}"
        return verdict


def check_final_lists(ops: list[Op], final: dict[str, dict[int, list[int]]],
                      counts: Counts | None = None) -> Verdict:
    """Every acknowledged append is in every node's list of its key, and all nodes
    hold the same lists."""
    if not final:
        return Verdict("final lists", VerdictStatus.UNKNOWN, "no server could be read", [], counts)
    acked = [(op, m[1], m[2]) for op in ops if op.outcome == OK and isinstance(op.value, list)
             for m in op.value if isinstance(m, list) and m and m[0] == "append"]
    evidence = []
    for node, lists in sorted(final.items()):
        present = {k: set(v) for k, v in lists.items()}
        for op, k, v in acked:
            if v not in present.get(k, set()):
                evidence.append(f"lost on {node}: acknowledged append {v} to key {k} is missing: "
                                f"{op.describe()}")
    nodes = sorted(final)
    for other in nodes[1:]:
        for k in sorted(set(final[nodes[0]]) | set(final[other])):
            a, b = final[nodes[0]].get(k, []), final[other].get(k, [])
            if a != b:
                evidence.append(f"diverged: key {k} is {a} on {nodes[0]} but {b} on {other}")
    summary = f"{len(acked)} acknowledged appends in {len(final)} node(s)' final lists"
    if evidence:
        return Verdict("final lists", VerdictStatus.INVALID,
                       f"{len(evidence)} problem(s); {summary}", evidence, counts)
    return Verdict("final lists", VerdictStatus.VALID, summary, [], counts)
