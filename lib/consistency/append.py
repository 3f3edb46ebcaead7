"""The insert-only (append) workload: no acknowledged insert may disappear.

Each client inserts rows with unique keys (autocommit ``INSERT``).  After
the run and the faults are healed, on every node: every ``ok`` insert is
present, no ``fail`` insert is present, ``unknown`` ones may be either; and
all nodes hold the same keys.
"""
from __future__ import annotations

from typing import Any

import pymysql.cursors

from .oplog import FAIL, OK, UNKNOWN, Counts, Op
from .reads import live
from .verdict import Verdict, VerdictStatus
from .workload import Call, Client, Workload
from ..servers.server import Server

KEY_SPACE = 10_000_000


class Append(Workload):
    """Rows ``append.rows(id, process, node)``; ids are unique per client."""

    name = "append"

    def __init__(self, nodes: list[Server], clients: int = 4, schema: str = "append",
                 **kwargs: Any) -> None:
        super().__init__(nodes, clients, **kwargs)
        self.schema = schema
        self.table = f"`{schema}`.`rows`"
        self._next: dict[str, int] = {}

    def setup(self) -> None:
        """Create the (empty) table."""
        self.create_table(self.schema, "rows", "id BIGINT NOT NULL PRIMARY KEY, "
                          "process VARCHAR(16) NOT NULL, node VARCHAR(64) NOT NULL")

    def step(self, client: Client) -> None:
        """Insert the client's next key."""
        seq = self._next.get(client.name, 0) + 1
        self._next[client.name] = seq
        key = (int(client.name[1:]) + 1) * KEY_SPACE + seq
        client.invoke("insert", key, lambda cur, call: self._insert(cur, call, key, client))

    def _insert(self, cur: pymysql.cursors.Cursor, call: Call, key: int, client: Client) -> None:
        call.committing = True
        cur.execute(f"INSERT INTO {self.table} VALUES (%s, %s, %s)",
                    (key, client.name, client.node.name))

    def final_state(self) -> dict[str, set[int]]:
        """The keys present on each running node."""
        sql = f"SELECT id FROM {self.table}"
        return {n.name: {int(r[0]) for r in self.final_rows(n, sql)}
                for n in live(self.all_servers)}

    def check(self, final: dict[str, set[int]]) -> Verdict:
        """Lost acknowledged inserts, resurrected failed ones, nodes that disagree."""
        return check_append(self.history.client_ops("insert"), final, self.history.counts())


def check_append(inserts: list[Op], final: dict[str, set[int]],
                 counts: Counts | None = None) -> Verdict:
    """The append checker (see the module docstring)."""
    by_key = {op.value: op for op in inserts}
    ok = {k for k, op in by_key.items() if op.outcome == OK}
    failed = {k for k, op in by_key.items() if op.outcome == FAIL}
    unknown = {k for k, op in by_key.items() if op.outcome == UNKNOWN}
    evidence: list[str] = []
    lost_total = phantom_total = 0
    for node, present in sorted(final.items()):
        lost = sorted(ok - present)
        phantom = sorted(failed & present)
        lost_total += len(lost)
        phantom_total += len(phantom)
        evidence += [f"lost on {node}: acknowledged insert id={k} is missing: "
                     f"{by_key[k].describe()}" for k in lost]
        evidence += [f"phantom on {node}: failed insert id={k} is present: "
                     f"{by_key[k].describe()}" for k in phantom]
        stray = sorted(present - set(by_key))
        evidence += [f"stray on {node}: id={k} was never inserted by the workload"
                     for k in stray[:20]]
        phantom_total += len(stray)
    nodes = sorted(final)
    diverged = 0
    for other in nodes[1:]:
        differ = sorted(final[nodes[0]] ^ final[other])
        diverged += len(differ)
        for k in differ[:20]:
            where = nodes[0] if k in final[nodes[0]] else other
            evidence.append(f"diverged: id={k} is only on {where} ({nodes[0]} vs {other})")
    if not final:
        return Verdict("append", VerdictStatus.UNKNOWN, "no server could be read after the run",
                       evidence, counts)
    present_anywhere = set().union(*final.values())
    unknown_in = len(unknown & present_anywhere)
    summary = (f"{len(ok)} acknowledged inserts, {len(failed)} failed, {len(unknown)} unknown "
               f"({unknown_in} of them applied) on {len(final)} node(s)")
    if lost_total or phantom_total or diverged:
        return Verdict("append", VerdictStatus.INVALID,
                       f"{lost_total} lost, {phantom_total} phantom, {diverged} diverged; {summary}",
                       evidence, counts)
    if not ok:
        return Verdict("append", VerdictStatus.UNKNOWN, f"no insert was acknowledged; {summary}",
                       evidence, counts)
    return Verdict("append", VerdictStatus.VALID, summary, evidence, counts)
