"""A signal whose handler runs inside a finalizer is not lost (lib/platform/interrupts.py).

Covers: lib/platform/interrupts.py (InterruptRelay)
"""
import signal
import time

import pytest

from lib.errors import Interrupted
from lib.platform.interrupts import InterruptRelay


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


def test_handler_raises_interrupted():
    with pytest.raises(Interrupted) as info:
        InterruptRelay().handler(signal.SIGTERM, None)
    assert info.value.signum == signal.SIGTERM
