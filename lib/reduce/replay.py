"""Replaying statements on servers: each traced connection gets its own connection (in
schema ``test``), statements go in their order; a compare topology runs every statement
on each server and compares what they returned.

A statement's error is kept (the mysql-test case expects it) and the replay goes
on; a lost connection (the server died) ends the replay.  Each statement runs
under ``max_statement_time`` so a candidate cannot hang the reduction.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pymysql

from ..randgen.connection import LOST_CONNECTION_CODES
from .case import Statement

if TYPE_CHECKING:
    from ..servers.server import Server

SCHEMA = "test"
STATEMENT_SECONDS = 20


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


def _code(exc: pymysql.MySQLError) -> int:
    args = getattr(exc, "args", ())
    return int(args[0]) if args and isinstance(args[0], int) else 2013


def _run(conn: pymysql.connections.Connection, sql: str) -> tuple[int, Any]:
    """(error code or 0, the rows as a multiset) of one statement."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            rows = cur.fetchall() if cur.description else None
            while cur.nextset():
                pass
        return 0, None if rows is None else Counter(tuple(str(v) for v in r) for r in rows)
    except pymysql.MySQLError as exc:
        return _code(exc), None


def _connect(server: Server) -> pymysql.connections.Connection:
    # every value as the server's bytes (no decoding, no conversion): a corpus's statement
    # can give rows that are no UTF-8, and PyMySQL failed to decode them (an internal
    # error that ended a reduction); rows are compared as bytes, the same on every server
    conn = server.connect(db=SCHEMA, autocommit=True, use_unicode=False, conv={})
    with conn.cursor() as cur:
        cur.execute(f"SET SESSION max_statement_time = {STATEMENT_SECONDS}")
    return conn


def replay(statements: Sequence[Statement], servers: Sequence[Server],
           compare: bool = False, stop: Callable[[], bool] | None = None) -> Replayed:
    """Send statements (one connection per traced connection) to servers[0], and in a
    compare replay to every server, comparing results.  stop, asked before each
    statement, ends the replay early (its answer is no longer wanted)."""
    out = Replayed()
    targets = list(servers) if compare else list(servers[:1])
    conns: dict[tuple[int, int], pymysql.connections.Connection] = {}
    try:
        for stmt in statements:
            if stop is not None and stop():
                out.stopped = True
                return out
            results = []
            for index, server in enumerate(targets):
                key = (index, stmt.conn)
                try:
                    if key not in conns:
                        conns[key] = _connect(server)
                    code, rows = _run(conns[key], stmt.sql)
                except pymysql.MySQLError as exc:
                    code, rows = _code(exc), None
                if code in LOST_CONNECTION_CODES:
                    out.errors[stmt.seq] = code
                    out.lost = stmt.seq
                    return out
                results.append((code, rows))
            out.sent += 1
            code = results[0][0]
            if code:
                out.errors[stmt.seq] = code
            if compare and any(r != results[0] for r in results[1:]):
                out.differences.append(stmt)
        return out
    finally:
        for conn in conns.values():
            try:
                conn.close()
            except pymysql.MySQLError:
                pass
