"""--test-timeout's watchdog: quiet in time, off with 0, ends a blocked wait, interrupts
pure Python as a last resort, and leaves SIGALRM's handler as it was; as a body's runner and
as a context manager.

Covers: lib/run/watchdog.py
"""
import threading
import time

import pytest

from lib.errors import TestTimeoutError as TimeoutRaised
from lib.run.watchdog import TestWatchdog


def test_watchdog_quiet_when_in_time():
    fired = []
    dog = TestWatchdog(5, lambda: fired.append(1))
    dog.run(lambda: None)
    assert not dog.timed_out and not fired


def test_watchdog_off_with_zero():
    dog = TestWatchdog(0, lambda: pytest.fail("no watchdog with 0"))
    dog.run(lambda: time.sleep(0.05))
    assert not dog.timed_out


def test_watchdog_ends_a_blocked_wait_through_on_timeout():
    released = threading.Event()
    dog = TestWatchdog(0.2, released.set, grace=30)
    start = time.monotonic()
    dog.run(lambda: released.wait(10))  # like a query that fails when its server dies
    assert dog.timed_out and time.monotonic() - start < 5


def test_watchdog_last_resort_interrupts_pure_python():
    dog = TestWatchdog(0.1, lambda: None, grace=0.2)
    start = time.monotonic()
    dog.run(lambda: time.sleep(10))
    assert dog.timed_out and time.monotonic() - start < 5


def test_watchdog_restores_sigalrm_handler():
    import signal
    before = signal.getsignal(signal.SIGALRM)
    TestWatchdog(0.1, lambda: None, grace=0.1).run(lambda: time.sleep(1))
    assert signal.getsignal(signal.SIGALRM) is before


def test_watchdog_alarm_during_a_slow_start_is_caught_and_restores_the_handler():
    # Under load the watchdog thread may fire before Thread.start() returns in the
    # test's thread: the last resort's exception then lands inside _start().
    import signal

    class SlowStart(TestWatchdog):
        def _start(self):
            super()._start()
            time.sleep(1)   # the alarm (0.1 s + 0.1 s grace) lands here

    before = signal.getsignal(signal.SIGALRM)
    dog = SlowStart(0.1, lambda: None, grace=0.1)
    dog.run(lambda: None)
    assert dog.timed_out
    assert signal.getsignal(signal.SIGALRM) is before


def test_watchdog_other_errors_pass_through():
    with pytest.raises(TimeoutRaised):
        def body():
            raise TimeoutRaised("not the watchdog's")
        TestWatchdog(5, lambda: None).run(body)


def test_watchdog_as_a_context_manager():
    """The with form (pytest's call phase): quiet in time, ends pure Python as a last
    resort quietly, restores SIGALRM, lets another TestTimeoutError through."""
    import signal
    before = signal.getsignal(signal.SIGALRM)
    with TestWatchdog(5, lambda: pytest.fail("in time")) as dog:
        pass
    assert not dog.timed_out
    start = time.monotonic()
    with TestWatchdog(0.1, lambda: None, grace=0.2) as dog:
        time.sleep(10)
    assert dog.timed_out and time.monotonic() - start < 5
    assert signal.getsignal(signal.SIGALRM) is before
    with pytest.raises(TimeoutRaised):
        with TestWatchdog(5, lambda: None):
            raise TimeoutRaised("not the watchdog's")
