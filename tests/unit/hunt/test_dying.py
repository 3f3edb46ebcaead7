"""How long a replay waits for a server whose crash report is written: the wait follows
its progress (its core file and error log growing), and is cut once neither grew for
the stall time.

Covers: lib/hunt/dying.py
"""
from lib.hunt.dying import DYING_STALL, DYING_WAIT, ProgressWatch


def test_a_growing_core_keeps_the_wait_going():
    watch = ProgressWatch(15.0, now=0.0)
    for second in range(0, 100, 5):            # the core grows every look
        assert not watch.stalled(float(second), (second * 1000, 500))


def test_no_core_and_a_still_error_log_stall_after_the_stall_time():
    watch = ProgressWatch(15.0, now=0.0)
    assert not watch.stalled(0.0, (-1, 500))
    assert not watch.stalled(14.9, (-1, 500))
    assert watch.stalled(15.0, (-1, 500))


def test_the_stall_counts_from_the_last_change():
    watch = ProgressWatch(15.0, now=0.0)
    assert not watch.stalled(10.0, (-1, 500))
    assert not watch.stalled(20.0, (-1, 600))    # the handler wrote more of its report
    assert not watch.stalled(34.0, (-1, 600))
    assert not watch.stalled(36.0, (4096, 600))  # the core appears
    assert watch.stalled(51.0, (4096, 600))


def test_the_stall_is_well_inside_the_whole_wait():
    assert 0 < DYING_STALL < DYING_WAIT / 4


# ---- settle: the one way hunts, reductions and replays tell a crash from a hang
import os
from types import SimpleNamespace

import pytest

from lib.hunt import dying
from lib.hunt.dying import settle
from lib.servers.health import Health, HealthState

REPORT = open(os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "hunt",
                           "crash_signal11.log")).read()
HUNG = Health(HealthState.HUNG, "s0 does not answer")
CRASHED = Health(HealthState.CRASHED, "s0 crashed")
OK = Health(HealthState.OK, "")


class _Log:
    def __init__(self, text):
        self.text = text

    def since(self, mark):
        return self.text[mark:]

    def size(self):
        return len(self.text)


class _Server:
    """A server whose health answers come from a list (the last one repeats)."""

    def __init__(self, answers, log=""):
        self.answers = list(answers)
        self.errlog = _Log(log)
        self.paths = SimpleNamespace(datadir="/nonexistent-kewpie-datadir")
        self.asked = 0

    def health(self, exit_wait=3.0):
        self.asked += 1
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@pytest.fixture
def clock(monkeypatch):
    """time.monotonic and time.sleep of lib.hunt.dying on a fake clock."""
    now = [0.0]
    monkeypatch.setattr(dying.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(dying.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))

    def health_ticks(server):       # each health look takes a second
        inner = server.health

        def look(exit_wait=3.0):
            now[0] += 1.0
            return inner(exit_wait)
        server.health = look
        return server
    return health_ticks


def test_a_server_that_answers_is_settled_at_once(clock):
    server = clock(_Server([OK]))
    assert settle(server, 0) == dying.Settled(OK)
    assert server.asked == 1


def test_a_dying_server_is_waited_for_without_the_slow_servers_grace(clock):
    # its crash report is written; it ends on the fourth look: a crash, not a hang
    server = clock(_Server([HUNG, HUNG, HUNG, CRASHED], log=REPORT))
    settled = settle(server, 0, grace=0.0)
    assert settled.health is CRASHED and settled.crashing and settled.note == ""


def test_a_dying_server_that_never_ends_is_crashing_with_a_note(clock):
    server = clock(_Server([HUNG], log=REPORT))
    settled = settle(server, 0)
    assert settled.health is HUNG and settled.crashing
    assert "neither ended nor wrote" in settled.note


def test_a_crash_report_before_the_mark_is_not_this_loads(clock):
    server = clock(_Server([HUNG], log=REPORT))
    settled = settle(server, len(REPORT), grace=5.0)
    assert settled.health is HUNG and not settled.crashing


def test_a_slow_server_gets_the_grace_then_hangs(clock):
    server = clock(_Server([HUNG]))
    settled = settle(server, 0, grace=10.0)
    assert settled.health is HUNG and not settled.crashing
    assert 5 <= server.asked <= 11


def test_a_slow_server_that_answers_within_the_grace_is_ok(clock):
    server = clock(_Server([HUNG, HUNG, OK]))
    assert settle(server, 0, grace=10.0).health is OK


def test_the_health_just_read_is_not_read_again(clock):
    server = clock(_Server([OK]))
    assert settle(server, 0, first=OK).health is OK and server.asked == 0
