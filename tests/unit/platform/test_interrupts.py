"""A signal whose handler runs inside a finalizer is not lost, and one that lands inside
logging does not leave logging's locks held (lib/platform/interrupts.py).

Covers: lib/platform/interrupts.py (InterruptRelay, in_unsafe_code)
"""
import logging
import signal
import sys
import threading
import time

import pytest

from lib.errors import Interrupted
from lib.platform.interrupts import InterruptRelay, in_unsafe_code


class SignalsInFinalizer:
    """An object whose finalizer receives the signal (as a Popen's or socket's might)."""

    def __del__(self):
        signal.raise_signal(signal.SIGUSR1)   # the handler runs here, inside __del__


def _with_relay():
    relay = InterruptRelay(redeliver_after=0.01)
    relay.install()
    previous = signal.signal(signal.SIGUSR1, relay.handler)
    return relay, previous


def test_signal_swallowed_by_a_finalizer_is_delivered_again():
    relay, previous = _with_relay()
    try:
        with pytest.raises(Interrupted) as info:
            SignalsInFinalizer()          # dropped at once: __del__ swallows Interrupted
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.005)         # the redelivered signal lands here
        assert info.value.signum == signal.SIGUSR1
    finally:
        signal.signal(signal.SIGUSR1, previous)
        relay.uninstall()


def test_other_unraisable_exceptions_go_to_the_previous_hook(monkeypatch):
    seen = []
    import sys
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    relay = InterruptRelay()
    relay.install()
    try:
        class Raises:
            def __del__(self):
                raise ValueError("in a finalizer")
        Raises()
    finally:
        relay.uninstall()
    assert sys.unraisablehook == seen.append
    assert [type(u.exc_value) for u in seen] == [ValueError]


class SignalsInEmit(logging.Handler):
    """A log handler that receives the signal while logging holds its locks."""

    def emit(self, record):
        signal.raise_signal(signal.SIGUSR1)   # the handler runs here, inside logging


class RecordsFrame(logging.Handler):
    """A log handler that keeps the frame it emits in."""

    def __init__(self):
        super().__init__()
        self.frames = []

    def emit(self, record):
        self.frames.append(sys._getframe())


def _sleep_until_interrupted(seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.005)


def test_frames_inside_logging_are_unsafe():
    log = logging.getLogger("kewpie-test-frames")
    handler = RecordsFrame()
    log.addHandler(handler)
    try:
        log.warning("x")
    finally:
        log.removeHandler(handler)
    assert in_unsafe_code(handler.frames[0])          # emit was called by logging
    assert not in_unsafe_code(sys._getframe())
    assert not in_unsafe_code(None)


def test_signal_inside_logging_waits_until_logging_returns():
    relay, previous = _with_relay()
    log = logging.getLogger("kewpie-test-emit")
    log.propagate = False
    handler = SignalsInEmit()
    log.addHandler(handler)
    try:
        with pytest.raises(Interrupted) as info:
            log.warning("the signal lands in here")   # put off: no exception inside logging
            _sleep_until_interrupted()                # delivered again here
        assert info.value.signum == signal.SIGUSR1
        assert relay.redelivered == 1
    finally:
        log.removeHandler(handler)
        signal.signal(signal.SIGUSR1, previous)
        relay.uninstall()
    # nothing of logging was left held: another thread can log and take the handler's lock
    other = threading.Thread(target=lambda: (logging.getLogger("kewpie-test-other"),
                                             handler.acquire(), handler.release()))
    other.start()
    other.join(5)
    assert not other.is_alive()


def test_a_signal_is_put_off_only_so_many_times():
    relay = InterruptRelay(max_deferrals=0)
    relay.install()
    try:
        log = logging.getLogger("kewpie-test-frames2")
        handler = RecordsFrame()
        log.addHandler(handler)
        log.warning("x")
        log.removeHandler(handler)
        with pytest.raises(Interrupted):
            relay.handler(signal.SIGTERM, handler.frames[0])
    finally:
        relay.uninstall()


def test_uninstall_stops_the_relay_thread():
    relay = InterruptRelay()
    relay.install()
    assert any(t.name == "interrupt-relay" for t in threading.enumerate())
    relay.uninstall()
    assert not any(t.name == "interrupt-relay" for t in threading.enumerate())


def test_handler_raises_interrupted():
    with pytest.raises(Interrupted) as info:
        InterruptRelay().handler(signal.SIGTERM, None)
    assert info.value.signum == signal.SIGTERM
