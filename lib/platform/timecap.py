"""A time cap on a stretch of the main thread's work, raised there as Ctrl-C would be.

:class:`TimeCap` arms ``SIGALRM`` for its seconds; when it goes off, its handler raises
:class:`~lib.errors.CapReached` (an :class:`~lib.errors.Interrupted`) in the main thread,
so the work under the cap unwinds exactly as it does on Ctrl-C: every ``finally`` runs,
parallel tries are told to stop and waited for, servers are stopped by their owners.
Like the stop signals' relay (:mod:`.interrupts`) it does not raise inside code where an
exception would do harm -- the ``logging`` package (a lock left held) and any module the
caller names (``defer_in``: e.g. a confirmation whose tools must not be killed half-way)
-- but arms itself again a moment later, until the main thread is out of it.  Leaving
the ``with`` block disarms it for good: the timer stopped, a signal already pending
dropped, the previous handler back (SIGALRM ignored when it was the default, which
would end the process).  Main thread only (signals are delivered there).
"""
from __future__ import annotations

import signal
from types import FrameType, TracebackType
from typing import Any

from ..errors import CapReached
from .interrupts import UNSAFE_PACKAGES, in_unsafe_code

RETRY_AFTER = 0.25   # seconds between two goes of a cap put off (deferred code)


class TimeCap:
    """``with TimeCap(seconds, defer_in=(...)) as cap:`` -- CapReached in the main thread
    once seconds have passed (0 or less: no cap); :attr:`reached` says whether it did."""

    def __init__(self, seconds: float, defer_in: tuple[str, ...] = (),
                 retry_after: float = RETRY_AFTER) -> None:
        self.seconds = seconds
        self.defer_in = UNSAFE_PACKAGES + tuple(defer_in)
        self.retry_after = retry_after
        self.reached = False
        self.deferred = 0            # goes put off because the main thread was in defer_in
        self._previous: Any = None
        self._armed = False

    def __enter__(self) -> "TimeCap":
        if self.seconds > 0:
            self._previous = signal.signal(signal.SIGALRM, self._handler)
            self._armed = True
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.disarm()

    def disarm(self) -> None:
        """Stop the timer, drop a SIGALRM already pending, give the handler back (idempotent)."""
        if not self._armed:
            return
        self._armed = False
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_IGN)   # a pending one is discarded
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
            # SIGALRM's default ends the process: one the stop signals' relay delivers
            # again late (a CapReached a finalizer swallowed) must find it ignored
            previous = self._previous
            signal.signal(signal.SIGALRM, signal.SIG_IGN if previous in (None, signal.SIG_DFL)
                          else previous)

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        """SIGALRM: CapReached where the main thread is, unless it is in deferred code."""
        if not self._armed:
            return
        if in_unsafe_code(frame, self.defer_in):
            self.deferred += 1
            signal.setitimer(signal.ITIMER_REAL, self.retry_after)
            return
        self.reached = True
        raise CapReached(self.seconds)
