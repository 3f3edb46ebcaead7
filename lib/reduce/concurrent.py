"""The *concurrent* replay order, as pure logic: a trace's connections run at once and
free-running -- each connection sends its next statement as soon as its last one
returned, none waits for another's (no happens-before pacing) -- in rounds.

This is how a hunt trial ran (pquery and the randgen engine alike: one thread per
connection, each as fast as the server answers it), and what a bug that needs two
sessions in the server at the same instant wants: two INSERT IGNOREs into one table
deadlocking inside the server, a UDF entered by two threads at once.  The trace's own
order (:mod:`.schedule`) cannot give it when the trial's overlap was a matter of
microseconds the traced times do not resolve; luck can, given rounds.

- :func:`split`: the statements a round runs first, one at a time (the *setup*: the
  leading statements of the first connection, before any other connection sent one --
  a load's schema, which every lane needs), and per connection the statements its lane
  then sends free-running;
- :func:`lockstep`: the rounds' form for mysqltest, whose one thread cannot run
  connections free: the lanes aligned at their ends, in each step every connection's
  statement of that step is sent (``send``) right after its one before was reaped
  (``reap``), so the connections' statements overlap step by step and their last ones
  together;
- :data:`ROUNDS`: how many rounds a try (and the case) makes at most -- the first that
  shows the bug ends them (:func:`rounds_for`: fewer when a round is long).

A round starts from schema ``test`` emptied (the reuse rule's reset, which the case
repeats), so each round replays the candidate from the same state, as a try on fresh
servers would.  The replay is lib/reduce/freerun.py; the case lib/reduce/mtrcase.py.
"""
from __future__ import annotations

from typing import Sequence

from .case import Statement

NAME = "concurrent"
ROUNDS = 100                 # rounds per try and per case, at most
ROUND_SECONDS = 20.0         # a try's rounds after the first stop once this is spent


def split(statements: Sequence[Statement]) -> tuple[list[Statement], dict[int, list[Statement]]]:
    """(setup, lanes): the leading statements of the first connection sent before any
    other connection's first statement -- all but the last of them when the statements are
    all one connection's -- and per connection (in the order they first appear) the rest,
    in order (module docstring)."""
    setup: list[Statement] = []
    if statements:
        first = statements[0].conn
        for s in statements:
            if s.conn != first:
                break
            setup.append(s)
        if len(setup) == len(statements):
            setup = setup[:-1]
    rest = statements[len(setup):]
    lanes: dict[int, list[Statement]] = {}
    for s in rest:
        lanes.setdefault(s.conn, []).append(s)
    return setup, lanes


def lockstep(lanes: dict[int, list[Statement]]) -> list[tuple[str, Statement]]:
    """The lanes as mysqltest actions, ``("send", s)`` and ``("reap", s)``, the lanes
    aligned at their ends: in step ``k`` each connection (in the lanes' order) reaps its
    running statement and sends its statement of that step -- a lane of ``n`` statements
    in the last ``n`` steps, so every lane's last statement goes in the last step (a
    lane's short lead, a ``SET SESSION``, is over in a free-running replay by the time
    the others' statements run: its next statement meets theirs); then every statement
    still running is reaped, in the lanes' order."""
    actions: list[tuple[str, Statement]] = []
    running: dict[int, Statement] = {}
    steps = max((len(v) for v in lanes.values()), default=0)
    for k in range(steps):
        for conn, lane in lanes.items():
            index = k - (steps - len(lane))
            if index < 0:
                continue
            if conn in running:
                actions.append(("reap", running.pop(conn)))
            actions.append(("send", lane[index]))
            running[conn] = lane[index]
    for conn in lanes:
        if conn in running:
            actions.append(("reap", running.pop(conn)))
    return actions


def rounds_for(first_round: float, rounds: int = ROUNDS, seconds: float = ROUND_SECONDS) -> int:
    """How many rounds a try makes, given how long its first took: at most ``rounds``,
    and no more than ``seconds`` spent after the first (at least one round)."""
    if first_round <= 0:
        return rounds
    return max(1, min(rounds, 1 + int(seconds / first_round)))
