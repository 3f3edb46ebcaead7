"""How long a replay waits for a server whose crash report is written: the wait follows
its progress (its core file and error log growing), and is cut once neither grew for
the stall time.

Covers: lib/replay/dying.py
"""
from lib.replay.dying import DYING_STALL, DYING_WAIT, ProgressWatch


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
