"""--test-timeout: a watchdog thread that ends an overrunning test from outside it.

When the time is up the watchdog marks the run timed out, stops the unittest
result (no further test method starts) and kills the test's servers: a test
blocked in a query or waiting on a server gets an ordinary connection error
and leaves through its own tearDown and cleanups.  Nothing is raised inside
test code on time.

Last resort: a test stuck in pure Python (a sleep, a loop that never touches
a server) is not ended by dead servers.  If it still runs ``grace`` seconds
later, the watchdog sends SIGALRM to the runner's thread (the main thread
only; elsewhere the runner waits), whose handler raises TestTimeoutError
there.  The handler is installed only while the test runs and ignores a
signal that arrives after the test finished.

:meth:`TestWatchdog.run` watches a body; the watchdog is also a context
manager, for a caller that runs the test between two hooks (pytest's call).
"""
from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any, Callable

from ..errors import TestTimeoutError

LAST_RESORT_GRACE = 10.0


class TestWatchdog:
    """Watches one test module's run (:meth:`run`); ``timed_out`` says whether it fired.

    ``on_timeout`` is called once, from the watchdog thread, when ``timeout``
    seconds pass (0: no watchdog at all).
    """

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, timeout: float, on_timeout: Callable[[], None],
                 grace: float = LAST_RESORT_GRACE) -> None:
        self.timeout = timeout
        self.on_timeout = on_timeout
        self.grace = grace
        self.timed_out = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._target = threading.get_ident()
        self._previous: Callable[[int, FrameType | None], Any] | int | None = None
        self._armed = False

    def run(self, body: Callable[[], object]) -> None:
        """Run body under the watchdog.  The last resort's TestTimeoutError ends body
        quietly (``timed_out`` says so); the watchdog is always stopped and the
        previous SIGALRM handler restored."""
        try:
            try:
                self._start()   # under load the alarm may come before start() returns
                body()
            finally:
                self._stop()
        except TestTimeoutError:
            # Only one SIGALRM is ever sent: should its exception land in _start() or
            # in the first _stop(), this one completes it.
            self._stop()
            if not self.timed_out:
                raise

    def __enter__(self) -> "TestWatchdog":
        """The watchdog over a with block (where a caller cannot hand over a body: pytest's
        call phase), as :meth:`run` watches a body."""
        try:
            self._start()
        except TestTimeoutError:   # the alarm came before start() returned: the block runs
            self._stop()
            if not self.timed_out:
                raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 trace: TracebackType | None) -> bool:
        """Stop watching; the last resort's TestTimeoutError ends the block quietly."""
        try:
            self._stop()
        except TestTimeoutError:
            self._stop()
            if not self.timed_out:
                raise
        return kind is not None and issubclass(kind, TestTimeoutError) and self.timed_out

    def _start(self) -> None:
        if self.timeout <= 0:
            return
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
            self._armed = True
        self._thread = threading.Thread(target=self._watch, name="kewpie-test-watchdog",
                                        daemon=True)
        self._thread.start()

    def _stop(self) -> None:
        """Idempotent: the test is over; wait for the watchdog and restore SIGALRM."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._armed:
            self._armed = False
            previous = self._previous
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)

    def _watch(self) -> None:
        """The watchdog thread: fire on time, then the last resort after the grace."""
        if self._done.wait(self.timeout):
            return
        self.timed_out = True
        try:
            self.on_timeout()
        finally:
            if not self._done.wait(self.grace) and self._armed:
                signal.pthread_kill(self._target, signal.SIGALRM)

    def _on_alarm(self, _signum: int, _frame: object) -> None:
        """The last resort, in the test's thread: raise unless the test already ended."""
        if not self._done.is_set():
            raise TestTimeoutError(f"test exceeded --test-timeout {self.timeout:.0f}s and "
                                   f"did not end when its servers were killed")
