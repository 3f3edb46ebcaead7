"""The per-connection statement trace of a run: every statement sent, in order, as JSON lines.

A run given a :class:`StatementTrace` (``RandgenRun(trace=...)``; kewpie's
hunt mode does) writes one JSON object per statement it sends -- the
gendata's and every thread's, init rules included -- with the server, the
server's connection id, the randgen thread, the SQL and what came back::

    {"seq": 17, "t": 1764094800.123456, "ms": 0.412, "server": "s0", "conn": 12,
     "thread": 2, "sql": "UPDATE t1 SET a = 3", "result": "ok", "rows": null,
     "affected": 1}
    {"seq": 18, ..., "result": "error", "error": 1213, "message": "Deadlock found ..."}

``seq`` numbers statements in the order they were sent (taken when the
statement leaves, so two threads' overlapping statements keep their real
order); lines are written when a statement ends, so they can be out of
``seq`` order in the file: :func:`read_trace` returns them sorted.  ``t`` is
the wall-clock send time, ``ms`` how long the statement took; ``rows`` is the
number of rows its result sets returned (``null`` for a statement without
one) and ``affected`` the server's affected-rows count.  ``thread`` 0 is the
run's own connection (gendata).  The writer is thread-safe and buffered;
:meth:`StatementTrace.close` flushes it.
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from typing import Any, TextIO

MAX_MESSAGE = 500


class StatementTrace:
    """A JSON-lines trace file of a run's statements (see the module docstring)."""

    def __init__(self, path: str, server: str = "s0") -> None:
        self.path = path
        self.server = server
        self._fh: TextIO | None = open(path, "w", buffering=1 << 16)
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self.count = 0

    def begin(self) -> tuple[int, float]:
        """A statement is about to be sent: its sequence number and send time."""
        return next(self._seq), time.time()  # itertools.count is atomic under the GIL

    def done(self, seq: int, sent: float, thread: int, conn: int | None, sql: str,
             rows: int | None = None, affected: int | None = None,
             error: int | None = None, message: str = "", server: str = "") -> None:
        """Record a statement that ended: ok (rows, affected) or error (code, message)."""
        record: dict[str, Any] = {"seq": seq, "t": round(sent, 6),
                                  "ms": round((time.time() - sent) * 1000, 3),
                                  "server": server or self.server, "conn": conn,
                                  "thread": thread, "sql": sql}
        if error is None:
            record.update(result="ok", rows=rows, affected=affected)
        else:
            record.update(result="error", error=error, message=message[:MAX_MESSAGE])
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            if self._fh is not None:
                self._fh.write(line)
                self.count += 1

    def close(self) -> None:
        """Flush and close the file (later records are dropped)."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


def read_trace(path: str) -> list[dict[str, Any]]:
    """A trace file's records sorted by ``seq`` (a torn last line is skipped)."""
    records = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    records.sort(key=lambda r: int(r.get("seq", 0)))
    return records
