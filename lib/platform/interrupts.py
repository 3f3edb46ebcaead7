"""Signals as :class:`~lib.errors.Interrupted` in the main thread, never lost in a finalizer.

Python runs a signal's handler in the main thread between two bytecodes, wherever that
thread is. When it is inside a finalizer (an object's ``__del__``, a weakref callback),
the exception the handler raises cannot propagate: Python prints it ("Exception ignored
in ...") through ``sys.unraisablehook`` and carries on as if no signal had come. A
Ctrl-C or SIGTERM would then be lost and the run go on to its end. :class:`InterruptRelay`
hooks ``sys.unraisablehook``: an ``Interrupted`` swallowed there is delivered again a
moment later, from a short-lived thread, once the finalizer has returned.
"""
from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any, Callable

from ..errors import Interrupted
from .logsetup import get_logger

REDELIVER_AFTER = 0.05   # seconds: the finalizer that swallowed the signal has returned


class InterruptRelay:
    """The handler of the signals kewpie stops on, with the unraisable hook that keeps
    one from being lost (see the module's docstring)."""

    def __init__(self, redeliver_after: float = REDELIVER_AFTER) -> None:
        """redeliver_after: seconds between a swallowed signal and its new delivery."""
        self.redeliver_after = redeliver_after
        self._previous_hook: Callable[[Any], Any] | None = None

    def handler(self, signum: int, _frame: FrameType | None) -> None:
        """The signal handler: raise Interrupted(signum) where the main thread is."""
        raise Interrupted(signum)

    def install(self) -> None:
        """Hook ``sys.unraisablehook`` (once)."""
        if self._previous_hook is None:
            self._previous_hook = sys.unraisablehook
            sys.unraisablehook = self._unraisable

    def uninstall(self) -> None:
        """Give ``sys.unraisablehook`` back."""
        if self._previous_hook is not None:
            sys.unraisablehook = self._previous_hook
            self._previous_hook = None

    def _unraisable(self, unraisable: Any) -> None:
        exc = getattr(unraisable, "exc_value", None)
        if isinstance(exc, Interrupted):
            get_logger().debug(f"signal {exc.signum} arrived in a finalizer "
                               f"({unraisable.object!r}): delivering it again")
            timer = threading.Timer(self.redeliver_after, signal.raise_signal, args=(exc.signum,))
            timer.daemon = True
            timer.start()
            return
        previous = self._previous_hook or sys.__unraisablehook__
        previous(unraisable)
