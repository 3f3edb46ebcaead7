"""The time cap of a stretch of the main thread's work: CapReached (an Interrupted) at the
cap, unwinding finally blocks as Ctrl-C would; put off while the main thread is in a
module named to defer in; no cap at 0; disarmed for good on leaving (nothing pending, the
previous SIGALRM handler back).

Covers: lib/platform/timecap.py, lib/errors.py
"""
import signal
import time

import pytest

from lib.errors import CapReached, Interrupted
from lib.platform.timecap import TimeCap


def _spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)


def test_the_cap_raises_cap_reached_and_runs_finally_blocks():
    cleaned = []
    with pytest.raises(CapReached) as caught:
        with TimeCap(0.1) as cap:
            try:
                _spin(5)
            finally:
                cleaned.append(True)
    assert cap.reached and cleaned == [True]
    assert isinstance(caught.value, Interrupted) and caught.value.signum == signal.SIGALRM
    assert "stopped at its cap of 0.1 s" in str(caught.value)
    _spin(0.2)   # disarmed: nothing goes off later


def test_no_cap_at_zero_and_work_that_ends_in_time():
    with TimeCap(0) as cap:
        _spin(0.05)
    assert not cap.reached
    with TimeCap(5) as cap:
        _spin(0.05)
    assert not cap.reached
    _spin(0.1)   # disarmed: nothing goes off later


def test_the_previous_handler_comes_back_and_a_late_alarm_is_harmless():
    seen = []
    previous = signal.signal(signal.SIGALRM, lambda s, f: seen.append(s))
    try:
        with TimeCap(5):
            pass
        assert signal.getsignal(signal.SIGALRM) is not None
        signal.raise_signal(signal.SIGALRM)
        assert seen == [signal.SIGALRM]
    finally:
        signal.signal(signal.SIGALRM, previous)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    with TimeCap(5):
        pass
    signal.raise_signal(signal.SIGALRM)   # the default would end the process
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_IGN
    signal.signal(signal.SIGALRM, signal.SIG_DFL)


def test_the_cap_waits_while_the_main_thread_is_in_deferred_code():
    deferred = {"__name__": "kw_deferred", "time": time}   # a module of its own, by name
    exec("def busy(seconds):\n"
         "    end = time.monotonic() + seconds\n"
         "    while time.monotonic() < end:\n"
         "        time.sleep(0.01)\n", deferred)
    returned = []
    with pytest.raises(CapReached):
        with TimeCap(0.05, defer_in=("kw_deferred",), retry_after=0.02) as cap:
            deferred["busy"](0.3)          # the cap goes off in there: put off
            returned.append(True)
            _spin(5)                       # out of it: the cap goes off
    assert returned == [True] and cap.deferred >= 1 and cap.reached
