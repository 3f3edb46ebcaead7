"""The trace's own interleaving of its connections, as a schedule a replay can keep.

A hunt trial's connections ran at once: the trace records, per statement, when it
was sent (``t``) and how long it took (``ms``).  A serial replay (one statement at
a time, in send order) loses that order -- a statement that waited for another
connection's lock got it in the trial and times out in the replay; a statement that
ran *during* another connection's never overlaps it -- and with it the state a
crash of a multi-connection trial was reached in.

:func:`happens_before` makes the schedule: a statement may be sent once every
statement of another connection that had *ended* before it was *sent* in the
trace has ended in the replay (a happens-before order), and once its own
connection's previous statement has ended; statements that overlapped in the
trace are otherwise free to overlap again.  Each statement's condition is a vector
``{connection: n}``: the first ``n`` statements (of the candidate) of that
connection must have ended.  The edges go from a lower ``seq`` to a higher one, so
the schedule cannot deadlock by itself; it is computed on the candidate's own
statements, so a subset keeps the order of what is left (the ends-before relation
is transitive through a removed statement: end(a) <= sent(b) <= end(b) <= sent(c)).

:func:`in_end_order` gives the *ended* variant: one statement at a time (each on its
own connection), in the order the statements ended in the trace -- a serialization
of the schedule in which a statement that waited for another connection's lock
comes after the statement that released it; deterministic, and what a mysql-test
case (one statement at a time) can keep.

:func:`offsets` gives the *timed* variant: a statement is also not sent before its
send time's offset from the trace's first statement (the trial's pacing, the gaps
between statements kept).

:func:`send_and_reap` writes the schedule for mysqltest, whose ``send`` sends a
statement without waiting and ``reap`` waits for it: statements are sent in send
order, and a statement is reaped only when a later one must follow it (its own
connection's next, or one of another connection that waits for it) -- so statements
that overlapped in the trace overlap in the mysql-test case too.

Pure logic: the replay that keeps a schedule is lib/reduce/interleave.py.
"""
from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from typing import Sequence

from .case import Statement

Wait = dict[int, int]   # connection -> how many of its statements must have ended


def timed(statements: Sequence[Statement]) -> bool:
    """Does every statement carry its traced send time (a schedule can be made)?"""
    return bool(statements) and all(s.t > 0 for s in statements)


def connections(statements: Sequence[Statement]) -> list[int]:
    """The statements' connections in the order they first appear."""
    return list(dict.fromkeys(s.conn for s in statements))


def happens_before(statements: Sequence[Statement]) -> list[Wait]:
    """For each statement (in the given order: send order), what must have ended before
    it is sent: per other connection, the number of that connection's statements (of
    these) that ended before it was sent in the trace (module docstring).  A connection
    needing none is left out; the statement's own connection is implicit (its lane
    sends in order).  Statements without a traced time wait for nothing."""
    ends: dict[int, list[float]] = defaultdict(list)    # per connection, running max
    seqs: dict[int, list[int]] = defaultdict(list)
    for s in statements:
        end = s.t + max(0.0, s.ms) / 1000.0
        lane = ends[s.conn]
        lane.append(max(end, lane[-1]) if lane else end)
        seqs[s.conn].append(s.seq)
    out: list[Wait] = []
    for s in statements:
        wait: Wait = {}
        if s.t > 0:
            for conn, lane in ends.items():
                if conn == s.conn:
                    continue
                # only statements sent before this one (lower seq) can be waited for
                earlier = bisect_right(seqs[conn], s.seq)
                count = bisect_right(lane, s.t, 0, earlier)
                if count:
                    wait[conn] = count
        out.append(wait)
    return out


def offsets(statements: Sequence[Statement]) -> list[float]:
    """Each statement's send time in seconds after the first statement's (0 for one
    without a traced time): the timed schedule's pacing."""
    starts = [s.t for s in statements if s.t > 0]
    first = min(starts) if starts else 0.0
    return [max(0.0, s.t - first) if s.t > 0 else 0.0 for s in statements]


def lanes(statements: Sequence[Statement]) -> dict[int, list[int]]:
    """Per connection, the indexes (into statements) of its statements in order."""
    out: dict[int, list[int]] = defaultdict(list)
    for index, s in enumerate(statements):
        out[s.conn].append(index)
    return dict(out)


def ready(wait: Wait, ended: dict[int, int]) -> bool:
    """Has every statement the wait names ended (ended: per connection, how many of its
    statements have ended in the replay)?"""
    return all(ended.get(conn, 0) >= count for conn, count in wait.items())


def serial_order(statements: Sequence[Statement]) -> list[int]:
    """A one-at-a-time order that keeps the schedule: the statements' indexes sorted by
    when they ended in the trace (ties by ``seq``); it never sends a statement before
    what it waits for, and a statement that waited for another connection's lock comes
    after the statement that let it go."""
    return sorted(range(len(statements)),
                  key=lambda i: (statements[i].t + max(0.0, statements[i].ms) / 1000.0,
                                 statements[i].seq))


def in_end_order(statements: Sequence[Statement]) -> list[Statement]:
    """The statements in the order they ended in the trace (:func:`serial_order`): the
    ``ended`` replay and the mysql-test case of a reduction replayed in the trace's
    order -- the order their effects took, as near as one connection at a time gets;
    in send order when a statement has no traced time."""
    if not timed(statements):
        return list(statements)
    return [statements[i] for i in serial_order(statements)]


def send_and_reap(statements: Sequence[Statement]) -> list[tuple[str, int]]:
    """The schedule as mysqltest actions, ``("send", index)`` and ``("reap", index)``
    (module docstring); the statements still running at the end are reaped in the order
    they ended in the trace."""
    waits = happens_before(statements)
    by_conn = lanes(statements)
    reaped = {conn: 0 for conn in by_conn}      # per connection: statements reaped
    running: dict[int, int] = {}                 # connection -> its statement sent, not reaped
    actions: list[tuple[str, int]] = []

    def reap(conn: int) -> None:
        """Reap the connection's running statement."""
        actions.append(("reap", running.pop(conn)))
        reaped[conn] += 1

    for index, stmt in enumerate(statements):
        if stmt.conn in running:
            reap(stmt.conn)
        for conn, count in waits[index].items():
            if reaped[conn] < count and conn in running:
                reap(conn)
        actions.append(("send", index))
        running[stmt.conn] = index
    for index in serial_order(statements):
        if running.get(statements[index].conn) == index:
            reap(statements[index].conn)
    return actions
