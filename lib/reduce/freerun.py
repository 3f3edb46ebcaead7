"""Replaying a candidate *concurrent*: its setup one statement at a time, then one lane
(a thread with its own connection) per traced connection, all started at once, each
sending its statements as fast as the server answers them -- no lane waits for another
(:mod:`.concurrent`) -- in rounds, each from schema ``test`` emptied, until a round shows
the bug or the rounds are spent.

A round ends when every lane has sent its statements, or when one lane lost its
connection (the server died: ``lost`` is the first statement that saw it), a statement
was not ended by the server (``stuck``), ``stop`` said so or the ``deadline`` passed --
the other lanes stop before their next statement.  Between rounds ``done`` (when given)
says whether the round showed the bug by other means (an error-log line); the rounds
also end when the next would pass the try's share of time
(:func:`lib.reduce.concurrent.rounds_for`).  Lock waits are capped as the interleaved
replay caps them (:data:`lib.reduce.interleave.LOCK_WAIT_SECONDS`); each round opens its
connections anew (every session starts as the trial's did) and closes them at its end.
``Replayed.rounds`` says how many rounds ran; ``sent`` and ``errors`` are the last
round's.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

import pymysql

from ..randgen.connection import LOST_CONNECTION_CODES
from .case import Statement
from .concurrent import ROUNDS, rounds_for, split
from .interleave import open_lane, send_statement
from .replay import SCHEMA, STUCK, Replayed, drop_connection

if TYPE_CHECKING:
    from ..servers.server import Server


@dataclass
class _Round:
    """One round's shared state, under one lock."""

    out: Replayed
    stop: Callable[[], bool] | None
    deadline: float | None
    done: bool = False
    failure: BaseException | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def go_on(self) -> bool:
        """May a lane send its next statement (nothing ended the round)?"""
        with self.lock:
            if self.done:
                return False
            if self.stop is not None and self.stop():
                self.out.stopped = self.done = True
            elif self.deadline is not None and time.monotonic() > self.deadline:
                self.out.timed_out = self.done = True
            return not self.done

    def ended(self, stmt: Statement, code: int) -> None:
        """Note a statement's end (its error code)."""
        with self.lock:
            if code == STUCK:
                self.out.stuck = self.out.stuck or stmt.seq
                self.done = True
            elif code in LOST_CONNECTION_CODES:
                self.out.errors[stmt.seq] = code
                self.out.lost = self.out.lost or stmt.seq
                self.done = True
            else:
                self.out.sent += 1
                if code:
                    self.out.errors[stmt.seq] = code


def replay_concurrent(statements: Sequence[Statement], server: Server,
                      stop: Callable[[], bool] | None = None, deadline: float | None = None,
                      rounds: int = ROUNDS, done: Callable[[], bool] | None = None) -> Replayed:
    """The candidate replayed concurrent on server, in up to ``rounds`` rounds (module
    docstring); what the replay saw."""
    out = Replayed()
    started = time.monotonic()
    setup, lanes = split(statements)
    planned = max(1, rounds)
    try:
        for number in range(planned):
            if number and not _reset(server):
                break
            out.errors, out.sent = {}, 0
            round_started = time.monotonic()
            _round(setup, lanes, server, _Round(out, stop, deadline))
            out.rounds = number + 1
            if number == 0:
                planned = rounds_for(time.monotonic() - round_started, planned)
            if out.lost or out.stuck or out.stopped or out.timed_out:
                break
            if done is not None and done():
                break
            if number + 1 >= planned:
                break
    finally:
        out.seconds = time.monotonic() - started
    return out


def _reset(server: Server) -> bool:
    """Schema ``test`` emptied between rounds (False when the server cannot be reached)."""
    try:
        conn = server.connect()
    except pymysql.MySQLError:
        return False
    try:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{SCHEMA}`")
            cur.execute(f"CREATE DATABASE `{SCHEMA}`")
        return True
    except pymysql.MySQLError:
        return False
    finally:
        try:
            conn.close()
        except pymysql.MySQLError:
            pass


def _round(setup: list[Statement], lanes: dict[int, list[Statement]], server: Server,
           state: _Round) -> None:
    """One round: the setup one at a time, then the lanes at once."""
    conns: dict[int, pymysql.connections.Connection] = {}
    try:
        for stmt in setup:
            if not state.go_on():
                return
            state.ended(stmt, send_statement(server, stmt, conns))
        start = threading.Barrier(len(lanes)) if lanes else None
        threads = [threading.Thread(target=_lane, name=f"reduce-freerun-{conn}", daemon=True,
                                    args=(server, lane, conns, state, start))
                   for conn, lane in lanes.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for key in list(conns):
            drop_connection(conns, key)
    if state.failure is not None:
        raise state.failure


def _lane(server: Server, lane: list[Statement], conns: dict[int, pymysql.connections.Connection],
          state: _Round, start: threading.Barrier | None) -> None:
    """One connection's statements, each sent as soon as the last returned."""
    try:
        try:
            open_lane(server, lane[0].conn, conns)   # before the start: lanes start together
        except pymysql.MySQLError:
            pass                                     # its first statement says what failed
        if start is not None:
            start.wait(timeout=60)
        for stmt in lane:
            if not state.go_on():
                return
            state.ended(stmt, send_statement(server, stmt, conns))
    except BaseException as exc:  # noqa: BLE001 - raised again by _round
        with state.lock:
            state.failure = state.failure or exc
            state.done = True
