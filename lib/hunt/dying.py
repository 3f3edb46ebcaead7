"""A server's health after a load, settled: a late answer waited for, a dying server's core
given time -- the one way the hunt's trials, the reductions' tries and the replays tell a
crash from a hang.

A server that does not answer right after a load is one of three things:

- slow: a loaded machine answers late, so a server that does not answer is looked at
  again every second for ``grace`` seconds before it is called hung;
- dying: its error log has gained a crash report since the load began, and its crash
  handler goes on to write its core, which takes seconds -- tens of seconds on a loaded
  machine (at load 45 a crash had been called a hang after 15 s; a reduction's try gave
  it 3 s, then counted the candidate as not failing).  It is
  waited for at once, without the slow server's grace, for as long as its core file or
  its error log grows (up to :data:`DYING_WAIT`);
- stuck: a release build's crash handler can block for good (a lock it needs is held by
  the thread that crashed), and waiting the whole :data:`DYING_WAIT` then costs two
  minutes a replay for nothing (MDEV-35492 on 10.11.18: 171 s of checks of a 172 s
  replay).  Once neither its core nor its error log grew for :data:`DYING_STALL`
  seconds the wait stops; the server is still running (a hang to the health check),
  and :attr:`Settled.crashing` tells the caller its crash report is written.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..checks.backtrace import find_core
from ..servers.health import Health, HealthState
from .crashreport import parse_crash_report

if TYPE_CHECKING:
    from ..servers.server import Server

DYING_WAIT = 120.0        # a dying server's longest wait (its core written)
DYING_STALL = 15.0        # ... cut when neither its core nor its error log grew this long
DYING_STEP = 1.0          # seconds between two looks
UNANSWERED_GRACE = 10.0   # seconds a running server may take to answer before it hangs


class ProgressWatch:
    """Says when a set of sizes has not changed for ``stall`` seconds."""

    def __init__(self, stall: float, now: float) -> None:
        self.stall = stall
        self.changed_at = now
        self.sizes: tuple[int, ...] | None = None

    def stalled(self, now: float, sizes: tuple[int, ...]) -> bool:
        """Record the sizes seen at now; True once they stayed the same ``stall`` seconds."""
        if sizes != self.sizes:
            self.sizes = sizes
            self.changed_at = now
        return now - self.changed_at >= self.stall


@dataclass(frozen=True)
class Settled:
    """A server's settled health: ``crashing`` when it still ran with a crash report in its
    error log since the mark (it was given the dying server's wait; one still running
    after it is stuck in its crash handler), ``note`` when that wait was cut short ('' when
    it was not)."""

    health: Health
    crashing: bool = False
    note: str = ""


def _sizes(server: "Server") -> tuple[int, ...]:
    """The dying server's core file size (-1: none yet) and its error log's size."""
    core = find_core(server.paths.datadir)
    try:
        core_size = os.path.getsize(core) if core else -1
    except OSError:
        core_size = -1
    return core_size, server.errlog.size()


def crash_reported(server: "Server", mark: int) -> bool:
    """Has the server's error log gained a crash report since mark (a byte offset)?"""
    try:
        return parse_crash_report(server.errlog.since(mark)) is not None
    except OSError:
        return False


def wait_dying(server: "Server", wait: float = DYING_WAIT,
               stall: float = DYING_STALL) -> tuple[Health, str]:
    """Wait for a server whose crash report is written to end (see the module docstring):
    its health, and a note when the wait was cut short ('' otherwise)."""
    started = time.monotonic()
    watch = ProgressWatch(stall, started)
    while True:
        health = server.health(exit_wait=DYING_STEP)
        now = time.monotonic()
        if health.state is not HealthState.HUNG or now - started >= wait:
            return health, ""
        if watch.stalled(now, _sizes(server)):
            return health, (f"its crash report is written, but it neither ended nor wrote "
                            f"to its core or error log for {stall:g} s")


def settle(server: "Server", mark: int, exit_wait: float = 3.0,
           grace: float = UNANSWERED_GRACE, first: Health | None = None) -> Settled:
    """The server's health after a load begun when its error log was mark bytes long (see
    the module docstring): a server that does not answer is given ``grace`` seconds to
    answer, one whose log has a crash report the dying server's wait instead.  first: the
    health the caller has just read (not read again)."""
    health = first if first is not None else server.health(exit_wait=exit_wait)
    patience = time.monotonic() + grace
    while health.state is HealthState.HUNG:
        if crash_reported(server, mark):
            health, note = wait_dying(server)
            return Settled(health, True, note)
        if time.monotonic() >= patience:
            break
        time.sleep(1.0)
        health = server.health(exit_wait=exit_wait)
    return Settled(health)
