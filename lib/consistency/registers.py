"""Read-your-writes across nodes: write a register on one node, read it on another.

Client i owns register i: it writes increasing values on its home node and
then reads the register back on the next node.  A read is *stale* when it
returns a value older than one whose write was acknowledged before the read
began.  ``sync`` chooses how the reading node is asked to catch up first:

* ``"none"``: plain reads (Galera applies other nodes' writes asynchronously
  and a replica lags its primary, so stale reads are possible);
* ``"wsrep"``: ``wsrep_sync_wait=1`` on the reading session (Galera's causal
  reads: a stale read is a bug);
* ``"gtid"``: the reader waits for the writer's GTID: MariaDB's
  ``@@last_gtid`` with ``MASTER_GTID_WAIT``; on MySQL/Percona the writer's
  ``@@gtid_executed`` with ``WAIT_FOR_EXECUTED_GTID_SET``.
"""
from __future__ import annotations

from typing import Any

import pymysql.cursors

from .oplog import OK, UNKNOWN, Counts, Op
from .reads import is_galera, live
from .verdict import Verdict, VerdictStatus
from .workload import Call, Client, Rejected, Workload
from ..servers.server import Server

SYNC_MODES = ("none", "wsrep", "gtid")
GTID_WAIT_TIMEOUT = 10


class ReadYourWrites(Workload):
    """Registers ``ryw.registers(k, v)``; one writer per register."""

    name = "ryw"

    def __init__(self, nodes: list[Server], clients: int = 4, sync: str = "none",
                 readers: list[Server] | None = None, schema: str = "ryw",
                 **kwargs: Any) -> None:
        if sync not in SYNC_MODES:
            raise ValueError(f"read-your-writes: sync must be one of {', '.join(SYNC_MODES)}, "
                             f"not {sync!r}")
        super().__init__(nodes, clients, **kwargs)
        self.sync = sync
        self.readers = list(readers) if readers else None
        self.schema = schema
        self.table = f"`{schema}`.`registers`"
        self._values: dict[str, int] = {}
        self._gtids: dict[str, str] = {}
        self.session_sql = ("SET SESSION wsrep_sync_wait = 0",) if is_galera(nodes[0]) else ()

    def setup(self) -> None:
        """One register per client, all 0."""
        node = self.create_table(self.schema, "registers",
                                 "k INT NOT NULL PRIMARY KEY, v BIGINT NOT NULL")
        node.execute(f"INSERT INTO {self.table} VALUES " +
                     ", ".join(f"({k}, 0)" for k in range(self.clients)))

    def reader_for(self, who: str) -> Server:
        """The node client who reads from: the next node after its home (or its reader)."""
        index = int(who[1:])
        if self.readers:
            return self.readers[index % len(self.readers)]
        return self.nodes[(index + 1) % len(self.nodes)]

    def step(self, client: Client) -> None:
        """Write the next value on the home node, then read it back on the reader."""
        k = int(client.name[1:])
        v = self._values.get(client.name, 0) + 1
        self._values[client.name] = v
        client.invoke("write", {"k": k, "v": v}, lambda cur, call: self._write(cur, call, k, v,
                                                                               client.name))
        reader = self.reader_for(client.name)
        session = None
        if is_galera(reader):
            session = [f"SET SESSION wsrep_sync_wait = {1 if self.sync == 'wsrep' else 0}"]
        client.invoke("read", {"k": k, "v": None},
                      lambda cur, call: self._read(cur, call, k, client.name),
                      node=reader, session_sql=session)

    def _write(self, cur: pymysql.cursors.Cursor, call: Call, k: int, v: int, who: str) -> None:
        call.committing = True
        cur.execute(f"UPDATE {self.table} SET v = %s WHERE k = %s", (v, k))
        if self.sync == "gtid":
            cur.execute(gtid_after_write_sql(self.nodes[0]))
            row = cur.fetchone()  # one row: the position after the write
            self._gtids[who] = row[0] if row else ""

    def _read(self, cur: pymysql.cursors.Cursor, _call: Call, k: int, who: str) -> dict[str, Any]:
        if self.sync == "gtid" and self._gtids.get(who):
            cur.execute(gtid_wait_sql(self.reader_for(who)),
                        (self._gtids[who], GTID_WAIT_TIMEOUT))
            waited = cur.fetchone()
            if waited is None or waited[0] != 0:
                raise Rejected(f"MASTER_GTID_WAIT({self._gtids[who]}) timed out")
        cur.execute(f"SELECT v FROM {self.table} WHERE k = %s", (k,))
        row = cur.fetchone()
        return {"k": k, "v": None if row is None else int(row[0])}

    def final_state(self) -> dict[str, dict[int, int]]:
        """Register values per running node."""
        sql = f"SELECT k, v FROM {self.table}"
        return {n.name: {int(k): int(v) for k, v in self.final_rows(n, sql)}
                for n in live(self.all_servers + [r for r in self.readers or []
                                                  if r not in self.all_servers])}

    def check(self, final: dict[str, dict[int, int]]) -> Verdict:
        """Stale reads (and impossible values) in the history."""
        return check_stale_reads(self.history.client_ops(), self.sync, self.history.counts())


def gtid_after_write_sql(server: Server) -> str:
    """What the writer reads after its write: MariaDB's session ``last_gtid``; on
    MySQL/Percona the executed set (it includes the write)."""
    from ..servers.replication import is_mariadb
    return "SELECT @@SESSION.last_gtid" if is_mariadb(server) else "SELECT @@GLOBAL.gtid_executed"


def gtid_wait_sql(server: Server) -> str:
    """How the reader waits for that position (0 means reached, as both functions return)."""
    from ..servers.replication import is_mariadb
    if is_mariadb(server):
        return "SELECT MASTER_GTID_WAIT(%s, %s)"
    return "SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)"


def check_stale_reads(ops: list[Op], sync: str = "none", counts: Counts | None = None) -> Verdict:
    """Reads that missed a write acknowledged before they began; values never written."""
    writes: dict[int, list[Op]] = {}
    for op in ops:
        if op.f == "write" and op.outcome in (OK, UNKNOWN):
            writes.setdefault(op.value["k"], []).append(op)
    reads = [op for op in ops if op.f == "read" and op.outcome == OK]
    evidence = []
    stale = impossible = 0
    for read in reads:
        k, seen = read.value["k"], read.value["v"]
        done = [w for w in writes.get(k, []) if w.outcome == OK and w.end < read.start]
        latest = max(done, key=lambda w: w.value["v"], default=None)
        attempted = max((w.value["v"] for w in writes.get(k, [])), default=0)
        if seen is None or seen > attempted:
            impossible += 1
            evidence.append(f"impossible read: register {k} = {seen}, never written: "
                            f"{read.describe()}")
        elif latest is not None and seen < latest.value["v"]:
            stale += 1
            lag = (read.start - latest.end) * 1000
            evidence.append(f"stale read: register {k} = {seen} but {latest.value['v']} was "
                            f"acknowledged {lag:.0f} ms before the read began: read "
                            f"{read.describe()}; write {latest.describe()}")
    summary = f"{stale} stale and {impossible} impossible of {len(reads)} reads (sync: {sync})"
    if stale or impossible:
        return Verdict("read-your-writes", VerdictStatus.INVALID, summary, evidence, counts)
    if not reads:
        return Verdict("read-your-writes", VerdictStatus.UNKNOWN, "no read succeeded", [], counts)
    return Verdict("read-your-writes", VerdictStatus.VALID, summary, [], counts)
