"""The resource monitors' arithmetic (machine and server figures per interval) and the
monitor thread itself over the machine (no server): it waits for the run's start,
samples each second, and its samples cover the run up to its stop.

Covers: lib/sysbench/monitor.py
"""
import threading

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
