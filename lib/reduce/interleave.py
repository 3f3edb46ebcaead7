"""Replaying a candidate with the trace's own interleaving: one lane (a thread with its
own connection) per traced connection, each sending its statements in order, each
statement once the statements it waits for have ended (:mod:`.schedule`:
happens-before), and in the *timed* variant not before its traced offset from the
first statement either.  Statements the schedule does not order run at once, as in
the trial.

Unlike the serial replay (:mod:`.replay`), transaction control, XA, locks and session
settings stay on their own connections and a lock wait can end the way it ended in
the trial -- by the holder's next statement, sent meanwhile by its lane: lock waits
are capped at :data:`LOCK_WAIT_SECONDS` (the pquery load's own 5 s), not the serial
replay's 1 s.  A statement waits at most :data:`WAIT_SECONDS` for the statements it
is ordered after (one of them may be held by a lock the replay's different state
gave another lane): then it is sent anyway, and the replay counts it (``forced``).

What ends a serial replay ends this one, on every lane: a lost connection (the
server died: ``lost`` is the first statement that saw it), a statement the server
did not end (``stuck``), ``stop`` and the ``deadline``.  Every lane's connection
stays open until the whole replay ends (an open transaction or XA of the trace
stays open as long as the trace kept it).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

import pymysql

from ..randgen.connection import LOST_CONNECTION_CODES
from .case import Statement
from .replay import MALFORMED, STUCK, Replayed, drop_connection, error_code, resets_caps, \
    run_statement, session
from .schedule import Wait, happens_before, lanes, offsets, ready

if TYPE_CHECKING:
    from ..servers.server import Server

LOCK_WAIT_SECONDS = 5
WAIT_SECONDS = 30.0      # the longest a statement waits for the statements it follows
POLL_SECONDS = 0.5       # how often a waiting lane looks at stop and the deadline
ORDERS = ("serial", "ended", "interleaved", "timed", "concurrent")   # a Checker's replay orders


@dataclass
class _Shared:
    """The lanes' common state, under one condition."""

    ended: dict[int, int] = field(default_factory=dict)   # per connection: ended statements
    done: bool = False          # a lane ended the replay (lost, stuck, stop, deadline)
    forced: int = 0             # statements sent after WAIT_SECONDS without their order
    failure: BaseException | None = None
    cond: threading.Condition = field(default_factory=threading.Condition)


def replay_scheduled(statements: Sequence[Statement], server: Server, paced: bool = False,
                     stop: Callable[[], bool] | None = None,
                     deadline: float | None = None) -> Replayed:
    """Send statements to server on one connection per traced connection, in the trace's
    happens-before order (``paced``: and at their traced offsets); what the replay saw
    (module docstring)."""
    out = Replayed()
    started = time.monotonic()
    waits = happens_before(statements)
    starts = offsets(statements) if paced else [0.0] * len(statements)
    shared = _Shared(ended={conn: 0 for conn in lanes(statements)})
    conns: dict[int, pymysql.connections.Connection] = {}
    threads = [threading.Thread(target=_lane, name=f"reduce-lane-{conn}", daemon=True,
                                args=(server, [statements[i] for i in indexes],
                                      [waits[i] for i in indexes],
                                      [started + starts[i] for i in indexes],
                                      shared, out, conns, stop, deadline))
               for conn, indexes in lanes(statements).items()]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        with shared.cond:
            shared.done = True
            shared.cond.notify_all()
        for thread in threads:
            if thread.is_alive():
                thread.join()
        for key in list(conns):
            drop_connection(conns, key)
        out.seconds = time.monotonic() - started
        out.forced = shared.forced
    if shared.failure is not None:
        raise shared.failure
    return out


def _lane(server: Server, statements: list[Statement], waits: list[Wait], not_before: list[float],
          shared: _Shared, out: Replayed, conns: dict[int, pymysql.connections.Connection],
          stop: Callable[[], bool] | None, deadline: float | None) -> None:
    """One connection's statements in order, each when its turn has come."""
    try:
        for stmt, wait, at in zip(statements, waits, not_before):
            if not _turn(wait, at, shared, out, stop, deadline):
                return
            code = send_statement(server, stmt, conns)
            with shared.cond:
                if code == STUCK:
                    out.stuck = out.stuck or stmt.seq
                    shared.done = True
                elif code in LOST_CONNECTION_CODES:
                    out.errors[stmt.seq] = code
                    out.lost = out.lost or stmt.seq
                    shared.done = True
                else:
                    out.sent += 1
                    if code:
                        out.errors[stmt.seq] = code
                shared.ended[stmt.conn] = shared.ended.get(stmt.conn, 0) + 1
                shared.cond.notify_all()
                if shared.done:
                    return
    except BaseException as exc:  # noqa: BLE001 - raised again by replay_scheduled
        with shared.cond:
            shared.failure = shared.failure or exc
            shared.done = True
            shared.cond.notify_all()


def _turn(wait: Wait, at: float, shared: _Shared, out: Replayed,
          stop: Callable[[], bool] | None, deadline: float | None) -> bool:
    """Wait until the statement may be sent (True), or the replay ends (False)."""
    waited_since = time.monotonic()
    with shared.cond:
        while True:
            if shared.done:
                return False
            if stop is not None and stop():
                out.stopped = shared.done = True
                shared.cond.notify_all()
                return False
            now = time.monotonic()
            if deadline is not None and now > deadline:
                out.timed_out = shared.done = True
                shared.cond.notify_all()
                return False
            if ready(wait, shared.ended):
                if now >= at:
                    return True
                shared.cond.wait(min(POLL_SECONDS, at - now))
                continue
            if now - waited_since > WAIT_SECONDS:
                shared.forced += 1
                return True
            shared.cond.wait(POLL_SECONDS)


def open_lane(server: Server, conn: int, conns: dict[int, pymysql.connections.Connection]
              ) -> None:
    """The lane's connection opened now (the replay's session, lock waits at
    :data:`LOCK_WAIT_SECONDS`) unless it is open."""
    if conn not in conns:
        conns[conn] = session(server, LOCK_WAIT_SECONDS)


def send_statement(server: Server, stmt: Statement,
                   conns: dict[int, pymysql.connections.Connection]) -> int:
    """One statement on its lane's connection (opened at its first statement); its error
    code (0: none)."""
    try:
        open_lane(server, stmt.conn, conns)
        conn = conns[stmt.conn]
        code, _ = run_statement(conn, stmt.sql)
        if not code and resets_caps(stmt.sql):
            session(server, LOCK_WAIT_SECONDS, conn)
    except (pymysql.MySQLError, UnicodeDecodeError) as exc:
        code = error_code(exc)
    if code == MALFORMED:   # the reply was left half read: the next statement reconnects
        drop_connection(conns, stmt.conn)
    return code
