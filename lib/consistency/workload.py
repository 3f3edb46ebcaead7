"""Recorded workloads: client threads that log every operation's outcome.

A :class:`Workload` says how to set up its tables, what one client step
does, how to read the final state and how to check the history.  Each
client thread (:class:`Client`) has its own connections, calls
:meth:`Client.invoke` for every operation and so records it in the
workload's :class:`~lib.consistency.oplog.History` as ok, fail or
unknown.  :func:`lib.consistency.run.run_workloads` drives workloads and a
fault schedule together.
"""
from __future__ import annotations

import random
import threading
import time
from typing import Any, Callable, Sequence

import pymysql

from .oplog import FAIL, OK, History, Op, classify_error, describe_error
from .reads import read_rows
from .verdict import Verdict
from ..servers.judging import JUDGING_BOUND
from ..servers.sql import error_code
from ..servers.server import Server

CONNECT_TIMEOUT = 2.0
READ_TIMEOUT = 10.0
BACKOFF = 0.05


class Rejected(Exception):
    """Raised by an operation that decided not to apply (e.g. not enough money): a fail."""


class Call:
    """Per-operation state an action updates: set ``committing`` before the commit."""

    def __init__(self) -> None:
        self.committing = False


Action = Callable[[Any, Call], Any]


class Client:
    """One client process: a name, a home node, lazily opened connections, a history."""

    def __init__(self, name: str, node: Server, history: History, session_sql: Sequence[str],
                 rng: random.Random, read_timeout: float = READ_TIMEOUT) -> None:
        self.name = name
        self.node = node
        self.history = history
        self.session_sql = list(session_sql)
        self.rng = rng
        self.read_timeout = read_timeout
        self._conns: dict[str, pymysql.Connection] = {}

    def connection(self, node: Server, session_sql: list[str] | None = None) -> pymysql.Connection:
        """The client's connection to node (opened, with the session settings, on first use)."""
        key = node.name if session_sql is None else f"{node.name}|{';'.join(session_sql)}"
        conn = self._conns.get(key)
        if conn is None:
            conn = node.connect(autocommit=True, connect_timeout=CONNECT_TIMEOUT,
                                read_timeout=self.read_timeout, write_timeout=self.read_timeout)
            try:
                with conn.cursor() as cur:
                    for sql in self.session_sql if session_sql is None else session_sql:
                        cur.execute(sql)
            except BaseException:
                conn.close()
                raise
            self._conns[key] = conn
        return conn

    def drop(self, node: Server | None = None) -> None:
        """Close the connections (to node, or all)."""
        for key in list(self._conns):
            if node is None or key.split("|", 1)[0] == node.name:
                conn = self._conns.pop(key)
                try:
                    conn.close()
                except Exception:  # noqa: BLE001 - a dead connection
                    pass

    def invoke(self, f: str, value: Any, action: Action, node: Server | None = None,
               session_sql: list[str] | None = None) -> Op:
        """Run action(cursor, call) on node and record the operation.

        The recorded value is what action returns, or value when it returns
        None.  :class:`Rejected` and server errors before the commit are
        ``fail``; a broken connection while committing is ``unknown``.
        """
        node = node or self.node
        start = self.history.now()
        call = Call()
        try:
            conn = self.connection(node, session_sql)
        except (pymysql.MySQLError, OSError) as exc:
            op = self.history.add(self.name, node.name, f, value, FAIL, start,
                                  error=describe_error(exc))
            time.sleep(BACKOFF)
            return op
        try:
            with conn.cursor() as cur:
                result = action(cur, call)
            return self.history.add(self.name, node.name, f, value if result is None else result,
                                    OK, start)
        except Rejected as exc:
            self._rollback(conn, node)
            return self.history.add(self.name, node.name, f, value, FAIL, start, error=str(exc))
        except (pymysql.MySQLError, OSError) as exc:
            outcome = classify_error(exc, call.committing)
            op = self.history.add(self.name, node.name, f, value, outcome, start,
                                  error=describe_error(exc))
            if 0 < error_code(exc) < 2000:  # the server answered: the connection is fine
                self._rollback(conn, node)
            else:
                self.drop(node)
            time.sleep(BACKOFF)
            return op

    def _rollback(self, conn: pymysql.Connection, node: Server) -> None:
        try:
            conn.rollback()
        except (pymysql.MySQLError, OSError):
            self.drop(node)


class Workload:
    """Base of recorded workloads: override setup, step, final_state and check.

    ``nodes`` are the servers clients connect to (client i's home node is
    ``nodes[i % len(nodes)]``); ``clients`` is the number of client threads;
    ``observers`` (replicas, say) are read from too: their final state is
    checked and read-only operations may go to them.
    """

    name = "workload"
    session_sql: tuple[str, ...] = ()  # SET statements each client runs first
    judging_bound = JUDGING_BOUND  # seconds a final read retries transient refusals

    def __init__(self, nodes: list[Server], clients: int = 4, seed: int = 1,
                 read_timeout: float = READ_TIMEOUT,
                 observers: list[Server] | None = None) -> None:
        if not nodes:
            raise ValueError(f"{self.name}: no servers to run against")
        self.nodes = list(nodes)
        self.clients = clients
        self.seed = seed
        self.read_timeout = read_timeout
        self.observers = [o for o in observers or [] if o not in self.nodes]
        self.history = History()

    @property
    def all_servers(self) -> list[Server]:
        """nodes, then observers."""
        return self.nodes + self.observers

    def setup(self) -> None:
        """Create the workload's schema on the first node."""

    def create_table(self, schema: str, table: str, columns: str) -> Server:
        """(Re)create ``schema.table`` with columns on the first node; returns that node."""
        node = self.nodes[0]
        node.execute(f"CREATE DATABASE IF NOT EXISTS `{schema}`")
        node.execute(f"DROP TABLE IF EXISTS `{schema}`.`{table}`")
        node.execute(f"CREATE TABLE `{schema}`.`{table}` ({columns}) ENGINE=InnoDB")
        return node

    def step(self, client: Client) -> None:
        """One operation (or a few) of one client."""
        raise NotImplementedError

    def final_state(self) -> Any:
        """Read what the servers hold once the run is over and faults are healed."""
        return None

    def final_rows(self, node: Server, sql: str) -> list[tuple[Any, ...]]:
        """Rows of a final-state read on node: a judging read (lib/consistency/reads.py),
        retried for ``judging_bound`` seconds when refused transiently."""
        return read_rows(node, sql, bound=self.judging_bound)

    def check(self, final: Any) -> Verdict:
        """Judge the history (and the final state)."""
        raise NotImplementedError

    def make_clients(self) -> list[Client]:
        """The workload's client processes, spread over its nodes."""
        return [Client(f"{self.name[0]}{i}", self.nodes[i % len(self.nodes)], self.history,
                       self.session_sql, random.Random(self.seed * 7919 + i), self.read_timeout)
                for i in range(self.clients)]


class ClientThreads:
    """Runs each client's steps in a thread until stopped."""

    def __init__(self, workload: Workload) -> None:
        self.workload = workload
        self.clients = workload.make_clients()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.crashes: list[str] = []

    def start(self) -> None:
        """Start one thread per client."""
        for client in self.clients:
            thread = threading.Thread(target=self._loop, args=(client,), daemon=True,
                                      name=f"{self.workload.name}-{client.name}")
            thread.start()
            self._threads.append(thread)

    def _loop(self, client: Client) -> None:
        try:
            while not self._stop.is_set():
                self.workload.step(client)
        except Exception as exc:  # noqa: BLE001 - a bug in a workload must not hang the run
            self.crashes.append(f"{client.name}: {type(exc).__name__}: {exc}")
        finally:
            client.drop()

    def stop(self, timeout: float = READ_TIMEOUT + 5) -> None:
        """Ask the clients to stop after their current operation and wait for them."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
