"""How long a replay waits for a server that wrote a crash report but still runs.

Such a server is dying: its crash handler has printed the report and goes on to
write its core, which takes seconds -- tens of seconds on a loaded machine (at
load 45 a crash had been called a hang after 15 s).  Sometimes it never ends: a
release build's handler can block for good (a lock it needs is held by the thread
that crashed), and waiting the whole :data:`DYING_WAIT` then costs two minutes a
replay for nothing (MDEV-35492 on 10.11.18: 171 s of checks of a 172 s replay).

So the wait follows the dying server's progress: as long as its core file or its
error log grows it is given time (up to :data:`DYING_WAIT`); once neither has
grown for :data:`DYING_STALL` seconds it is stuck, and the replay stops waiting.
The verdict is the one the whole wait would have given (the server did not end:
a hang, killed and thrown away), only sooner; the detail says why.
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from ..checks.backtrace import find_core
from ..servers.health import Health, HealthState

if TYPE_CHECKING:
    from ..servers.server import Server

DYING_WAIT = 120.0        # a dying server's longest wait (its core written)
DYING_STALL = 15.0        # ... cut when neither its core nor its error log grew this long
DYING_STEP = 1.0          # seconds between two looks


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


def _sizes(server: "Server") -> tuple[int, ...]:
    """The dying server's core file size (-1: none yet) and its error log's size."""
    core = find_core(server.paths.datadir)
    try:
        core_size = os.path.getsize(core) if core else -1
    except OSError:
        core_size = -1
    return core_size, server.errlog.size()


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
