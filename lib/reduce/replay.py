"""Replaying statements on servers: each traced connection gets its own connection (in
schema ``test``), statements go in their order; a compare topology runs every statement
on each server and compares what they returned.

A statement's error is kept (the mysql-test case expects it) and the replay goes
on; a lost connection (the server died) ends the replay.  Each statement runs
under ``max_statement_time`` so a candidate cannot hang the reduction.

Lock waits are cut to :data:`LOCK_WAIT_SECONDS` (``lock_wait_timeout`` and
``innodb_lock_wait_timeout`` of every replay session): the replay sends one
statement at a time, so a statement waiting for a lock another traced connection
holds (an open transaction, a HANDLER, a LOCK TABLES) can only end by its timeout
-- the holder sends nothing until it does.  A hunt's 4-connection trace of 30,000
statements otherwise spent minutes per wait (MDL waits end at
``max_statement_time``).  A traced statement that sets one of these variables is
followed by the caps again (:func:`resets_caps`).

A statement the server does not end at ``max_statement_time`` -- some loops do not
look at the kill flag: a killed join-cache scan or window sort ran on for 15 minutes
and held a reduction -- ends the replay when the client's read times out
(:data:`READ_SECONDS`): ``stuck`` says at which statement; the servers are then
replaced (:mod:`.check`).

``deadline`` (a ``time.monotonic()`` value) caps a whole replay: past it the
replay stops before its next statement and says so (``timed_out``), so one slow
candidate cannot eat a reduction's budget (:mod:`.budget`).
"""
from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

import pymysql

from ..randgen.connection import LOST_CONNECTION_CODES
from .case import Statement

if TYPE_CHECKING:
    from ..servers.server import Server

K = TypeVar("K")                        # a replay's connection key
SCHEMA = "test"
STATEMENT_SECONDS = 20
LOCK_WAIT_SECONDS = 1
READ_SECONDS = 3 * STATEMENT_SECONDS   # the client's read timeout: a statement past it is stuck
STUCK = -1                              # the code of a statement whose read timed out
MALFORMED = 2027                        # CR_MALFORMED_PACKET: a reply PyMySQL could not decode
_CAP_VARIABLES = re.compile(r"\b(?:lock_wait_timeout|innodb_lock_wait_timeout|max_statement_time)"
                            r"\b", re.I)
_SET_STATEMENT_FOR = re.compile(r"\s*SET\s+STATEMENT\b", re.I)


def resets_caps(sql: str) -> bool:
    """Does this statement set one of the replay's capped session variables (lock waits,
    statement time), so that the caps must be set again after it?  ``SET STATEMENT ...
    FOR`` sets them for its own statement only."""
    return bool(re.match(r"\s*SET\b", sql, re.I)) and not _SET_STATEMENT_FOR.match(sql) \
        and bool(_CAP_VARIABLES.search(sql))


@dataclass
class Replayed:
    """What a replay saw: the error each statement got (seq -> code), whether a server's
    connection was lost (and at which statement), and the statements whose results
    differed between the servers."""

    errors: dict[int, int] = field(default_factory=dict)
    lost: int = 0                  # seq of the statement that lost its connection
    differences: list[Statement] = field(default_factory=list)
    sent: int = 0
    stopped: bool = False          # the replay was told to stop before its end
    timed_out: bool = False        # the replay reached its deadline before its end
    stuck: int = 0                 # seq of a statement the server did not end (read timeout)
    seconds: float = 0.0           # how long the replay took
    forced: int = 0                # interleaved: statements sent without their order (.interleave)
    rounds: int = 0                # concurrent: the rounds replayed (.freerun)


def error_code(exc: Exception) -> int:
    """A statement's error code: the server's, 2013 when there is none, :data:`STUCK`
    when the client's read timed out (the server did not end the statement),
    :data:`MALFORMED` when PyMySQL could not decode the reply (a column name that is no
    UTF-8: it raises UnicodeDecodeError, which ended a reduction)."""
    if isinstance(exc, UnicodeDecodeError):
        return MALFORMED
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    if len(args) > 1 and "timed out" in str(args[1]):
        return STUCK
    return int(args[0]) if args and isinstance(args[0], int) else 2013


def run_statement(conn: pymysql.connections.Connection, sql: str) -> tuple[int, Any]:
    """(error code or 0, the rows as a multiset) of one statement."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            rows = cur.fetchall() if cur.description else None
            while cur.nextset():
                pass
        return 0, None if rows is None else Counter(tuple(str(v) for v in r) for r in rows)
    except (pymysql.MySQLError, UnicodeDecodeError) as exc:
        return error_code(exc), None


def raw_conversions() -> dict[Any, Any]:
    """PyMySQL's conversions without its decoders: every value read as the server's bytes
    (a corpus's statement can give rows that are no UTF-8, and PyMySQL failed to decode
    them: an internal error that ended a reduction), while the encoders stay -- PyMySQL
    escapes its own ``SET AUTOCOMMIT = 1`` when a corpus left the server's autocommit off,
    and with no encoder at all that was an internal error too (TypeError: no default type
    converter defined)."""
    return {k: v for k, v in pymysql.converters.conversions.items() if not isinstance(k, int)}


def session(server: Server, lock_wait: int = LOCK_WAIT_SECONDS,
            conn: pymysql.connections.Connection | None = None
            ) -> pymysql.connections.Connection:
    """A replay connection to server in schema ``test`` (or conn again), its statement
    time and lock waits capped (lock waits at lock_wait seconds)."""
    if conn is None:   # rows are compared as bytes, the same on every server (raw_conversions)
        conn = server.connect(db=SCHEMA, autocommit=True, use_unicode=False,
                              conv=raw_conversions(), read_timeout=READ_SECONDS,
                              write_timeout=READ_SECONDS)
    _set_caps(conn, lock_wait)
    return conn


def drop_connection(conns: dict[K, pymysql.connections.Connection], key: K) -> None:
    """Close and forget one replay connection (the next statement opens another)."""
    conn = conns.pop(key, None)
    if conn is not None:
        try:
            conn.close()
        except (pymysql.MySQLError, OSError):
            pass


def _set_caps(conn: pymysql.connections.Connection, lock_wait: int = LOCK_WAIT_SECONDS) -> None:
    """The session's statement-time and lock-wait caps (module docstring)."""
    with conn.cursor() as cur:
        cur.execute(f"SET SESSION max_statement_time = {STATEMENT_SECONDS}, "
                    f"lock_wait_timeout = {lock_wait}, innodb_lock_wait_timeout = {lock_wait}")


def replay(statements: Sequence[Statement], servers: Sequence[Server],
           compare: bool = False, stop: Callable[[], bool] | None = None,
           deadline: float | None = None) -> Replayed:
    """Send statements (one connection per traced connection) to servers[0], and in a
    compare replay to every server, comparing results.  stop, asked before each
    statement, ends the replay early (its answer is no longer wanted); so does the
    deadline (``time.monotonic()``; ``timed_out``)."""
    out = Replayed()
    started = time.monotonic()
    try:
        _replay(statements, servers, compare, stop, deadline, out)
    finally:
        out.seconds = time.monotonic() - started
    return out


def _replay(statements: Sequence[Statement], servers: Sequence[Server], compare: bool,
            stop: Callable[[], bool] | None, deadline: float | None, out: Replayed) -> None:
    targets = list(servers) if compare else list(servers[:1])
    conns: dict[tuple[int, int], pymysql.connections.Connection] = {}
    try:
        for stmt in statements:
            if stop is not None and stop():
                out.stopped = True
                return
            if deadline is not None and time.monotonic() > deadline:
                out.timed_out = True
                return
            results = []
            for index, server in enumerate(targets):
                key = (index, stmt.conn)
                try:
                    if key not in conns:
                        conns[key] = session(server)
                    code, rows = run_statement(conns[key], stmt.sql)
                    if not code and resets_caps(stmt.sql):
                        _set_caps(conns[key])
                except (pymysql.MySQLError, UnicodeDecodeError) as exc:
                    code, rows = error_code(exc), None
                if code == MALFORMED:    # the reply was left half read: a new connection
                    drop_connection(conns, key)
                if code == STUCK:
                    out.stuck = stmt.seq
                    return
                if code in LOST_CONNECTION_CODES:
                    out.errors[stmt.seq] = code
                    out.lost = stmt.seq
                    return
                results.append((code, rows))
            out.sent += 1
            code = results[0][0]
            if code:
                out.errors[stmt.seq] = code
            if compare and any(r != results[0] for r in results[1:]):
                out.differences.append(stmt)
    finally:
        for conn in conns.values():
            try:
                conn.close()
            except pymysql.MySQLError:
                pass
