"""The resource monitors' arithmetic (machine and server figures per interval) and the
monitor thread itself over the machine (no server): it waits for the run's start,
samples each second, and its samples cover the run up to its stop; paused, it reads
nothing, and after a resume no sample spans the pause.

Covers: lib/sysbench/monitor.py
"""
import threading
import time

from lib.sysbench.monitor import (MACHINE, ResourceMonitor, Sample, as_rows, from_rows,
                                  machine_values, server_values, series, sources, summary)


def test_machine_values_are_shares_of_all_cpus_and_bytes_per_second():
    before = {"cpu_user": 10, "cpu_system": 5, "cpu_iowait": 1, "cpu_idle": 100, "cpu_steal": 0,
              "disk_read": 0, "disk_write": 1000}
    after = {"cpu_user": 11, "cpu_system": 5.5, "cpu_iowait": 1.5, "cpu_idle": 100, "cpu_steal": 0,
             "disk_read": 4096, "disk_write": 3000}
    values = machine_values(before, after, 2.0)
    assert values == {"cpu_user_pct": 50.0, "cpu_system_pct": 25.0, "cpu_iowait_pct": 25.0,
                      "cpu_idle_pct": 0.0, "disk_read_bps": 2048.0, "disk_write_bps": 1000.0}


def test_server_values_rates_gauges_and_flow_control():
    before = {"cpu_user": 1.0, "cpu_system": 0.5, "rss_bytes": 1, "io_read": 0, "io_write": 0,
              "status:Innodb_buffer_pool_reads": 10, "status:Threads_running": 3,
              "status:wsrep_flow_control_paused_ns": 0}
    after = {"cpu_user": 2.5, "cpu_system": 0.75, "rss_bytes": 2048, "io_read": 100, "io_write": 50,
             "status:Innodb_buffer_pool_reads": 30, "status:Threads_running": 5,
             "status:wsrep_flow_control_paused_ns": 250_000_000, "status:Questions": 9}
    values = server_values(before, after, 1.0)
    assert values["cpu_user_pct"] == 150.0 and values["cpu_system_pct"] == 25.0
    assert values["rss_bytes"] == 2048 and values["io_read_bps"] == 100
    assert values["bp_reads_per_s"] == 20 and values["threads_running"] == 5
    assert values["wsrep_fc_paused"] == 0.25
    assert "queries_per_s" not in values  # a counter needs two readings


def test_rows_roundtrip_and_series():
    samples = [Sample(1.0, MACHINE, {"cpu_user_pct": 3.0}), Sample(1.0, "s0", {"rss_bytes": 7.0}),
               Sample(2.0, MACHINE, {"cpu_user_pct": 5.0})]
    assert from_rows(as_rows(samples)) == samples
    assert series(samples, MACHINE, "cpu_user_pct") == ([1.0, 2.0], [3.0, 5.0])
    assert sources(samples) == [MACHINE, "s0"] and summary(samples, MACHINE, "cpu_user_pct") == 4.0
    assert summary(samples, "s1", "rss_bytes") is None


def test_monitor_samples_the_machine_from_the_mark_to_the_stop():
    monitor = ResourceMonitor([], interval=0.2).start()
    monitor.mark()
    for _ in range(600):  # wait for the state (3 samples), within 30 s
        if len(monitor.samples) >= 3:
            break
        threading.Event().wait(0.05)
    samples = monitor.stop()
    assert not monitor.error and samples[0].source == MACHINE
    times = [s.t for s in samples]
    assert times == sorted(times) and times[0] > 0
    assert {"cpu_user_pct", "cpu_idle_pct", "cpu_iowait_pct"} <= set(samples[0].values)


def test_monitor_stopped_before_the_mark_has_no_samples():
    monitor = ResourceMonitor([]).start()
    assert monitor.stop() == [] and not monitor.error


class CountingMonitor(ResourceMonitor):
    """Records when each of its readings was taken (the machine reading's instant)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reads = []

    def _read_all(self):
        reading = super()._read_all()
        self.reads.append(reading[0].at)
        return reading


def wait_for(monitor, predicate):
    """Wait (up to 30 s) until predicate() holds, checked while the monitor's thread
    is not reading; True when it did."""
    for _ in range(600):
        with monitor._cond:
            if predicate():
                return True
        threading.Event().wait(0.05)
    return False


def test_paused_monitor_reads_nothing_and_resumes_with_a_fresh_first_reading():
    monitor = CountingMonitor([], interval=0.05).start()
    monitor.mark()
    try:
        assert wait_for(monitor, lambda: len(monitor.samples) >= 2)
        monitor.pause()
        paused_at = time.monotonic()
        reads, samples = len(monitor.reads), len(monitor.samples)
        threading.Event().wait(0.5)  # ten intervals: a paused monitor takes none of them
        assert monitor.paused and (len(monitor.reads), len(monitor.samples)) == (reads, samples)
        monitor.resume()
        assert wait_for(monitor, lambda: len(monitor.samples) > samples)
        first = monitor.samples[samples]
        at = monitor._start + first.t
        ending = min(monitor.reads, key=lambda r: abs(r - at))
        begun = monitor.reads[monitor.reads.index(ending) - 1]
        assert begun > paused_at + 0.4  # the sample began at the resume, not before the pause
        assert first.t - (begun - monitor._start) >= 0.025 - 0.002  # at least half an interval
    finally:
        monitor.stop()
    assert not monitor.error


def test_a_pause_and_an_immediate_resume_still_break_the_sample():
    monitor = CountingMonitor([], interval=0.2).start()
    monitor.mark()
    try:
        assert wait_for(monitor, lambda: len(monitor.samples) >= 1)
        with monitor._cond:  # between readings: pause and resume before the thread wakes
            samples = len(monitor.samples)
            monitor.pause()
            paused_at = time.monotonic()
            monitor.resume()
        assert wait_for(monitor, lambda: len(monitor.samples) > samples)
        first = monitor.samples[samples]
        ending = min(monitor.reads, key=lambda r: abs(r - (monitor._start + first.t)))
        assert monitor.reads[monitor.reads.index(ending) - 1] >= paused_at
    finally:
        monitor.stop()
    assert not monitor.error


def test_monitor_paused_before_the_mark_samples_only_after_the_resume():
    monitor = CountingMonitor([], interval=0.05).start()
    monitor.pause()
    monitor.mark()
    threading.Event().wait(0.3)
    with monitor._cond:
        assert monitor.reads == [] and monitor.samples == []
    monitor.resume()
    assert wait_for(monitor, lambda: len(monitor.samples) >= 1)
    assert monitor.stop()[0].source == MACHINE and not monitor.error


def test_monitor_stopped_while_paused_stops_without_another_reading():
    monitor = CountingMonitor([], interval=0.05).start()
    monitor.mark()
    assert wait_for(monitor, lambda: len(monitor.samples) >= 1)
    monitor.pause()
    reads, samples = len(monitor.reads), len(monitor.samples)
    monitor.stop()
    assert not monitor._thread.is_alive() and not monitor.error
    assert (len(monitor.reads), len(monitor.samples)) == (reads, samples)


def test_mark_at_an_earlier_instant_shifts_the_sample_grid():
    monitor = ResourceMonitor([], interval=0.2).start()
    monitor.mark(time.monotonic() - 0.1)  # half an interval early: samples end mid-"second"
    assert wait_for(monitor, lambda: len(monitor.samples) >= 2)
    samples = monitor.stop()
    assert not monitor.error
    # t counts from the earlier instant: the first sample, read 0.1 s after the mark,
    # ends at t >= 0.2, and sample i at t >= 0.2 * (i + 1)
    assert all(s.t >= 0.2 * (i + 1) - 0.001 for i, s in enumerate(samples))
