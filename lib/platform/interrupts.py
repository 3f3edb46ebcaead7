"""Signals as :class:`~lib.errors.Interrupted` in the main thread: never lost, never raised
where they would leave a lock held.

Python runs a signal's handler in the main thread between two bytecodes, wherever that
thread is. Two places make that unsafe:

- inside a finalizer (an object's ``__del__``, a weakref callback), the exception the
  handler raises cannot propagate: Python prints it ("Exception ignored in ...") through
  ``sys.unraisablehook`` and carries on as if no signal had come, so a Ctrl-C or SIGTERM
  would be lost and the run go on to its end;
- inside the ``logging`` package, between a lock's ``acquire()`` and the ``try:`` whose
  ``finally`` releases it, the exception leaves the lock held by the main thread: every
  other thread that logs (a fault schedule, a client thread) then blocks for good, and
  whatever waits for those threads waits for ever.

:class:`InterruptRelay` handles both: its handler does not raise while the main thread is
inside ``logging`` but has the signal delivered again a moment later, and its
``sys.unraisablehook`` does the same for an ``Interrupted`` swallowed by a finalizer.
Redelivery goes through one daemon thread fed by a :class:`queue.SimpleQueue`, whose
``put`` is safe to call from a signal handler or a finalizer (a new thread is not: starting
one takes locks the interrupted code may hold).
"""
from __future__ import annotations

import queue
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any, Callable

from ..errors import Interrupted

REDELIVER_AFTER = 0.05   # seconds: the finalizer or logging call has returned by then
MAX_DEFERRALS = 40       # a main thread stuck in logging (a full pipe) is interrupted anyway
UNSAFE_PACKAGES = ("logging",)   # acquire-then-try locks an exception would leave held


def in_unsafe_code(frame: FrameType | None, packages: tuple[str, ...] = UNSAFE_PACKAGES) -> bool:
    """True when frame, or any frame that called it, is code of one of packages."""
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if any(name == p or name.startswith(p + ".") for p in packages):
            return True
        frame = frame.f_back
    return False


class InterruptRelay:
    """The handler of the signals kewpie stops on, with the unraisable hook and the
    redelivery thread that keep one from being lost (see the module's docstring)."""

    def __init__(self, redeliver_after: float = REDELIVER_AFTER,
                 max_deferrals: int = MAX_DEFERRALS) -> None:
        """redeliver_after: seconds between a signal put off and its new delivery;
        max_deferrals: how many times in a row one signal may be put off."""
        self.redeliver_after = redeliver_after
        self.max_deferrals = max_deferrals
        self.deferred = 0          # deferrals in a row of the signal being delivered
        self.redelivered = 0       # signals delivered again, in all
        self._previous_hook: Callable[[Any], Any] | None = None
        self._pending: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._open = False

    def handler(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler: raise Interrupted(signum) where the main thread is, unless
        it is inside ``logging``: then have the signal delivered again shortly."""
        if (self._open and self.deferred < self.max_deferrals
                and in_unsafe_code(frame)):
            self.deferred += 1
            self._pending.put(signum)
            return
        self.deferred = 0
        raise Interrupted(signum)

    def install(self) -> None:
        """Hook ``sys.unraisablehook`` and start the redelivery thread (once)."""
        if self._open:
            return
        self._open = True
        self._previous_hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable
        self._thread = threading.Thread(target=self._redeliver, name="interrupt-relay",
                                        daemon=True)
        self._thread.start()

    def uninstall(self) -> None:
        """Give ``sys.unraisablehook`` back and stop the redelivery thread."""
        if not self._open:
            return
        self._open = False
        if self._previous_hook is not None:
            sys.unraisablehook = self._previous_hook
            self._previous_hook = None
        self._pending.put(None)
        if self._thread is not None:
            self._thread.join(1.0)
            self._thread = None

    def _redeliver(self) -> None:
        while True:
            signum = self._pending.get()
            if signum is None:
                return
            time.sleep(self.redeliver_after)
            if not self._open:
                return
            self.redelivered += 1
            signal.raise_signal(signum)

    def _unraisable(self, unraisable: Any) -> None:
        exc = getattr(unraisable, "exc_value", None)
        if isinstance(exc, Interrupted) and self._open:
            self._pending.put(exc.signum)   # no logging here: it may be what was interrupted
            return
        previous = self._previous_hook or sys.__unraisablehook__
        previous(unraisable)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def interrupt_on_stop_signals(signals: tuple[int, ...] = STOP_SIGNALS) -> InterruptRelay:
    """In a worker process's main thread: have signals raise Interrupted through a new,
    installed relay (returned; the process's end stops its thread)."""
    relay = InterruptRelay()
    relay.install()
    for sig in signals:
        signal.signal(sig, relay.handler)
    return relay
