"""Operations of a recorded workload and their outcomes: ok, fail or unknown.

Every client call is one :class:`Op`.  Its outcome says what the client
knows about it (Jepsen's vocabulary):

* ``ok``: the server acknowledged it (a committed write, a read's value);
* ``fail``: it certainly did not take effect (an error the server returned
  before or instead of committing: a deadlock, a certification failure, a
  node not ready, no connection at all);
* ``unknown``: it may or may not have taken effect (the connection broke or
  timed out while the commit was on its way).

Faults are recorded in the same history as ``info`` operations of the
process ``nemesis``, so a report shows them between the client operations.

(A :class:`History` is Jepsen's word for this log of one workload's operations;
kewpie's results history, every run's results, is lib/history/.)
"""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

import pymysql

from ..servers.sql import error_code

OK, FAIL, UNKNOWN, INFO = "ok", "fail", "unknown", "info"
OUTCOMES = (OK, FAIL, UNKNOWN)
NEMESIS = "nemesis"

# Client-side errors meaning the request never reached a server.
NOT_SENT_CODES = frozenset({2002, 2003, 2005})
# Server errors that do not tell whether a commit happened.
AMBIGUOUS_SERVER_CODES = frozenset({1180, 1317, 1927, 1053})


@dataclass
class Op:
    """One operation: who ran what where, when, and with which outcome."""

    index: int
    process: str
    node: str
    f: str
    value: Any
    outcome: str
    start: float
    end: float
    error: str = ""

    def describe(self) -> str:
        """``#12 c3 insert 3000007 on node1 [+1.204s..+1.209s] unknown (2013 Lost connection)``."""
        error = f" ({self.error})" if self.error else ""
        return (f"#{self.index} {self.process} {self.f} {_short(self.value)} on {self.node} "
                f"[+{self.start:.3f}s..+{self.end:.3f}s] {self.outcome}{error}")


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, default=str, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + "..."


def describe_error(exc: BaseException) -> str:
    """``1213 Deadlock found ...`` or the exception's text, on one line."""
    code = error_code(exc)
    args = exc.args
    message = str(args[1]) if code and len(args) > 1 else str(exc) or type(exc).__name__
    message = " ".join(message.split())[:200]
    return f"{code} {message}" if code else message


def classify_error(exc: BaseException, committing: bool) -> str:
    """The outcome of an operation that raised exc.

    committing: the failing call was the one that commits (an autocommit
    write or ``COMMIT``).  A broken connection before that point rolls the
    transaction back on the server, so the operation failed; during it, the
    commit may or may not have happened.
    """
    code = error_code(exc)
    if code in NOT_SENT_CODES:
        return FAIL
    if 0 < code < 2000:  # the server answered with an error
        return UNKNOWN if committing and code in AMBIGUOUS_SERVER_CODES else FAIL
    if isinstance(exc, (pymysql.MySQLError, OSError, socket.timeout)) and not committing:
        return FAIL
    return UNKNOWN


@dataclass
class Counts:
    """How many client operations ended ok, fail and unknown."""

    ok: int = 0
    fail: int = 0
    unknown: int = 0

    def __str__(self) -> str:
        return f"{self.ok} ok, {self.fail} fail, {self.unknown} unknown"


@dataclass
class History:
    """A thread-safe, append-only list of operations with a common time origin."""

    ops: list[Op] = field(default_factory=list)
    t0: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def now(self) -> float:
        """Seconds since the history began."""
        return time.monotonic() - self.t0

    def add(self, process: str, node: str, f: str, value: Any, outcome: str, start: float,
            end: float | None = None, error: str = "") -> Op:
        """Append one operation and return it."""
        with self._lock:
            op = Op(len(self.ops), process, node, f, value, outcome, start,
                    self.now() if end is None else end, error)
            self.ops.append(op)
        return op

    def note(self, f: str, value: Any, node: str = "-", start: float | None = None) -> Op:
        """Record a fault or another event of the test itself (outcome ``info``)."""
        now = self.now()
        return self.add(NEMESIS, node, f, value, INFO, now if start is None else start, now)

    def client_ops(self, f: str | None = None, outcome: str | None = None) -> list[Op]:
        """The clients' operations, optionally only of one function and outcome."""
        with self._lock:
            ops = list(self.ops)
        return [op for op in ops if op.process != NEMESIS and (f is None or op.f == f)
                and (outcome is None or op.outcome == outcome)]

    def events(self) -> list[Op]:
        """The faults and other events recorded with :meth:`note`."""
        with self._lock:
            return [op for op in self.ops if op.process == NEMESIS]

    def counts(self, f: str | None = None) -> Counts:
        """ok / fail / unknown counts of the clients' operations."""
        counts = Counts()
        for op in self.client_ops(f):
            if op.outcome in OUTCOMES:
                setattr(counts, op.outcome, getattr(counts, op.outcome) + 1)
        return counts

    def save(self, path: str) -> None:
        """Write the history as JSON lines (one operation per line)."""
        with self._lock:
            ops = list(self.ops)
        with open(path, "w") as fh:
            for op in ops:
                fh.write(json.dumps(asdict(op), default=str) + "\n")

    @classmethod
    def load(cls, path: str) -> "History":
        """Read a history written by :meth:`save`."""
        history = cls()
        with open(path) as fh:
            history.ops = [Op(**json.loads(line)) for line in fh if line.strip()]
        return history

    @classmethod
    def of(cls, ops: Iterable[Op]) -> "History":
        """A history holding ops (for checkers' tests and replays)."""
        history = cls()
        history.ops = list(ops)
        return history
