"""Resource monitors: what the machine and the servers did, second by second, while a
sysbench run ran (the right-hand graphs of the published posts).

A :class:`ResourceMonitor` is a thread of the harness (no process of its own).
It opens one connection per server before the run, waits for :meth:`mark`
(sysbench printed "Threads started!", so the samples line up with sysbench's
own per-second report lines), then every ``interval`` seconds records:

- the machine (source ``machine``): CPU user / system / iowait / idle in % of
  all CPUs, disk read / write bytes per second (every disk, psutil);
- each server (source = its name, ``s0``...): its process's CPU user / system
  in % of one CPU (so up to 200 on 2 cores), its RSS, the bytes it read from and
  wrote to storage per second, and its status counters: buffer-pool reads
  (misses: pages read from disk) and read requests per second, Threads_running,
  row-lock waits and queries per second, and on a Galera node the flow-control
  pauses (fraction of the second paused) and messages sent / received.

Each sample's ``t`` is the end of the second it covers, counted like
sysbench's ``[ ts ]`` lines from the start of the run; the samples are
contiguous (each covers the time since the one before, the first from t = 0),
and when the run ends more than half a second after the last one, a last,
shorter sample covers the rest.  A counter a server
lacks (no wsrep, no RocksDB) is simply absent from its samples.

:meth:`ResourceMonitor.pause` and :meth:`~ResourceMonitor.resume` switch the
sampling off and on (bench/sweep_overhead.py measures the monitors' cost so):
once pause() returns, the monitor reads nothing and queries no server (it waits
for a reading in progress; the part-second since the last sample is dropped)
and keeps its connections.  After resume() it takes a fresh first reading, and
its next sample ends at the next whole second since the mark, or at the one
after when that is under half a second away (it covers 0.5 to 1.5 s): the
samples have a gap where the monitor was paused, and no sample spans a pause.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import psutil
import pymysql

from ..servers.server import Server

DEFAULT_INTERVAL = 1.0
# status counter -> (metric name, kind): "rate" per second, "gauge" as read,
# "ns_fraction" a nanosecond counter as the fraction of the interval.
STATUS = MappingProxyType({
    "Innodb_buffer_pool_reads": ("bp_reads_per_s", "rate"),
    "Innodb_buffer_pool_read_requests": ("bp_read_requests_per_s", "rate"),
    "Threads_running": ("threads_running", "gauge"),
    "Innodb_row_lock_waits": ("row_lock_waits_per_s", "rate"),
    "Questions": ("queries_per_s", "rate"),
    "Rocksdb_block_cache_miss": ("rocksdb_block_cache_miss_per_s", "rate"),
    "Rocksdb_block_cache_hit": ("rocksdb_block_cache_hit_per_s", "rate"),
    "wsrep_flow_control_paused_ns": ("wsrep_fc_paused", "ns_fraction"),
    "wsrep_flow_control_sent": ("wsrep_fc_sent_per_s", "rate"),
    "wsrep_flow_control_recv": ("wsrep_fc_recv_per_s", "rate"),
})
STATUS_QUERY = ("SHOW GLOBAL STATUS WHERE Variable_name IN ("
                + ", ".join(f"'{name}'" for name in STATUS) + ")")
MACHINE = "machine"


@dataclass
class Sample:
    """One second of one source: t (seconds since the run started) and its metrics."""

    t: float
    source: str
    values: dict[str, float] = field(default_factory=dict)


@dataclass
class _Reading:
    """Cumulative figures at one instant (the monitor subtracts two of them)."""

    at: float
    counters: dict[str, float]


class _ServerProbe:
    """What the monitor reads of one server: its process and its status counters."""

    def __init__(self, server: Server) -> None:
        self.name = server.name
        pid = server.server_pid
        self.process = psutil.Process(pid) if pid else None
        self.conn: pymysql.Connection | None = server.connect(read_timeout=5)

    def read(self) -> dict[str, float]:
        """The server's cumulative counters now (what it cannot read is left out)."""
        out: dict[str, float] = {}
        if self.process is not None:
            try:
                with self.process.oneshot():
                    cpu = self.process.cpu_times()
                    out["cpu_user"], out["cpu_system"] = cpu.user, cpu.system
                    out["rss_bytes"] = float(self.process.memory_info().rss)
                    io = self.process.io_counters()
                    out["io_read"], out["io_write"] = float(io.read_bytes), float(io.write_bytes)
            except (psutil.Error, OSError):
                self.process = None
        if self.conn is not None:
            try:
                with self.conn.cursor() as cur:
                    cur.execute(STATUS_QUERY)
                    for name, value in cur.fetchall():
                        try:
                            out[f"status:{name}"] = float(value)
                        except (TypeError, ValueError):
                            continue
            except pymysql.MySQLError:
                self.close()
        return out

    def close(self) -> None:
        """Drop the status connection."""
        if self.conn is not None:
            try:
                self.conn.close()
            except pymysql.MySQLError:
                pass
            self.conn = None


def _machine_now() -> dict[str, float]:
    """The machine's cumulative CPU times and disk bytes now."""
    cpu = psutil.cpu_times()
    out = {"cpu_user": cpu.user + cpu.nice, "cpu_system": cpu.system + cpu.irq + cpu.softirq,
           "cpu_iowait": getattr(cpu, "iowait", 0.0), "cpu_idle": cpu.idle,
           "cpu_steal": getattr(cpu, "steal", 0.0)}
    disks = psutil.disk_io_counters()
    if disks is not None:
        out["disk_read"], out["disk_write"] = float(disks.read_bytes), float(disks.write_bytes)
    return out


def machine_values(before: dict[str, float], after: dict[str, float],
                   seconds: float) -> dict[str, float]:
    """Per-interval machine metrics from two readings seconds apart: CPU shares in % of
    all CPUs, disk bytes per second."""
    spent = {k: after[k] - before[k] for k in ("cpu_user", "cpu_system", "cpu_iowait",
                                                "cpu_idle", "cpu_steal")}
    total = sum(spent.values()) or 1.0
    out = {"cpu_user_pct": 100 * spent["cpu_user"] / total,
           "cpu_system_pct": 100 * spent["cpu_system"] / total,
           "cpu_iowait_pct": 100 * spent["cpu_iowait"] / total,
           "cpu_idle_pct": 100 * spent["cpu_idle"] / total}
    secs = seconds or 1.0
    if "disk_read" in before and "disk_read" in after:
        out["disk_read_bps"] = (after["disk_read"] - before["disk_read"]) / secs
        out["disk_write_bps"] = (after["disk_write"] - before["disk_write"]) / secs
    return out


def server_values(before: dict[str, float], after: dict[str, float],
                  seconds: float) -> dict[str, float]:
    """Per-interval server metrics from two readings seconds apart."""
    out: dict[str, float] = {}
    secs = seconds or 1.0
    if "cpu_user" in before and "cpu_user" in after:
        out["cpu_user_pct"] = 100 * (after["cpu_user"] - before["cpu_user"]) / secs
        out["cpu_system_pct"] = 100 * (after["cpu_system"] - before["cpu_system"]) / secs
        out["rss_bytes"] = after["rss_bytes"]
        out["io_read_bps"] = (after["io_read"] - before["io_read"]) / secs
        out["io_write_bps"] = (after["io_write"] - before["io_write"]) / secs
    for status, (metric, kind) in STATUS.items():
        key = f"status:{status}"
        if key not in after:
            continue
        if kind == "gauge":
            out[metric] = after[key]
        elif key in before:
            delta = after[key] - before[key]
            out[metric] = delta / secs / 1e9 if kind == "ns_fraction" else delta / secs
    return out


class ResourceMonitor:
    """Samples the machine and servers every interval seconds from :meth:`mark` until
    :meth:`stop`, but not while paused (a daemon thread; see the module)."""

    def __init__(self, servers: list[Server], interval: float = DEFAULT_INTERVAL) -> None:
        self.servers = list(servers)
        self.interval = interval
        self.samples: list[Sample] = []
        # The thread holds this lock except while it waits, so whoever takes it (mark,
        # pause, resume, stop) waits for a reading in progress and none starts meanwhile.
        self._cond = threading.Condition()
        self._marked = False
        self._paused = False
        self._pauses = 0  # how many times pause() was called
        self._stopping = False
        self._start = 0.0
        self._thread: threading.Thread | None = None
        self._probes: list[_ServerProbe] = []
        self.error = ""

    def start(self) -> "ResourceMonitor":
        """Connect to the servers and start the thread (it waits for :meth:`mark`)."""
        self._probes = [_ServerProbe(s) for s in self.servers]
        psutil.cpu_times()  # warm psutil's first call outside the timed run
        self._thread = threading.Thread(target=self._loop, name="kewpie-monitor", daemon=True)
        self._thread.start()
        return self

    def mark(self, at: float | None = None) -> None:
        """The run started now, or at ``at`` (time.monotonic's clock): t = 0, and the
        samples end at whole intervals from there."""
        with self._cond:
            self._start = time.monotonic() if at is None else at
            self._marked = True
            self._cond.notify_all()

    def pause(self) -> None:
        """Stop sampling until :meth:`resume`: when this returns, no reading is in
        progress and none starts (the connections stay open)."""
        with self._cond:
            self._paused = True
            self._pauses += 1
            self._cond.notify_all()

    def resume(self) -> None:
        """Sample again (from a fresh reading; see the module)."""
        with self._cond:
            self._paused = False
            self._cond.notify_all()

    @property
    def paused(self) -> bool:
        """Whether the monitor is paused."""
        return self._paused

    def stop(self) -> list[Sample]:
        """Stop sampling (see the module for the last second) and return the samples."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for probe in self._probes:
            probe.close()
        return self.samples

    def __enter__(self) -> "ResourceMonitor":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def read_once(self) -> None:
        """Take one reading of the machine and every server, as each sample does, and
        drop it (after :meth:`start`, before :meth:`mark`: bench/sweep_overhead.py times
        what a sample costs)."""
        self._read_all()

    def _read_all(self) -> tuple[_Reading, list[_Reading]]:
        at = time.monotonic()
        return (_Reading(at, _machine_now()),
                [_Reading(time.monotonic(), probe.read()) for probe in self._probes])

    def _next_tick(self, at: float) -> int:
        """The tick that ends the sample begun at ``at``: the next whole interval since
        the mark, or the one after when the next is under half an interval away."""
        tick = int((at - self._start) / self.interval) + 1
        if self._start + tick * self.interval - at < self.interval / 2:
            tick += 1
        return tick

    def _loop(self) -> None:
        try:
            with self._cond:
                self._cond.wait_for(lambda: self._marked or self._stopping)
                self._sample_until_stopped()
        except Exception as exc:  # a monitor must never break the run it watches
            self.error = f"{type(exc).__name__}: {exc}"

    def _stopped(self) -> bool:
        """Whether stop() was called (a method: it changes while the thread waits)."""
        return self._stopping

    def _sample_until_stopped(self) -> None:
        """The thread's work, with self._cond held (released only while it waits)."""
        before: tuple[_Reading, list[_Reading]] | None = None
        tick = pauses = 0
        while not self._stopping:
            if self._paused:
                before = None  # a sample never spans a pause
                self._cond.wait_for(lambda: self._stopping or not self._paused)
                continue
            if before is None:
                before, pauses = self._read_all(), self._pauses
                tick = self._next_tick(before[0].at)
                continue
            self._cond.wait_for(lambda: self._stopping or self._pauses != pauses,
                                max(0.0, self._start + tick * self.interval - time.monotonic()))
            if self._pauses != pauses:
                before = None  # paused (and maybe resumed) meanwhile: drop the part-second
                continue
            stopped = self._stopped()
            machine, servers = before
            now_machine, now_servers = self._read_all()
            covered = now_machine.at - machine.at
            if stopped and covered < self.interval / 2:
                return  # the run ended just after the last sample
            t = round(now_machine.at - self._start, 3)
            self.samples.append(Sample(t, MACHINE, machine_values(
                machine.counters, now_machine.counters, covered)))
            for probe, old, new in zip(self._probes, servers, now_servers):
                self.samples.append(Sample(t, probe.name, server_values(
                    old.counters, new.counters, new.at - old.at)))
            if stopped:
                return  # the last, shorter second of the run
            before = (now_machine, now_servers)
            tick = max(tick + 1, int((time.monotonic() - self._start) / self.interval) + 1)


def series(samples: list[Sample], source: str, metric: str) -> tuple[list[float], list[float]]:
    """(t, value) lists of one metric of one source, in time order."""
    points = sorted((s.t, s.values[metric]) for s in samples
                    if s.source == source and metric in s.values)
    return [p[0] for p in points], [p[1] for p in points]


def sources(samples: list[Sample]) -> list[str]:
    """The sources in the samples: ``machine`` first, then the servers by name."""
    names = {s.source for s in samples}
    return ([MACHINE] if MACHINE in names else []) + sorted(names - {MACHINE})


def summary(samples: list[Sample], source: str, metric: str) -> float | None:
    """The mean of a metric over the run (None when it was never sampled)."""
    _, values = series(samples, source, metric)
    return sum(values) / len(values) if values else None


def as_rows(samples: list[Sample]) -> list[tuple[float, str, str, float]]:
    """(t, source, metric, value) rows, as stored."""
    return [(s.t, s.source, metric, value) for s in samples for metric, value in
            sorted(s.values.items())]


def from_rows(rows: list[tuple[Any, ...]]) -> list[Sample]:
    """Samples back from stored (t, source, metric, value) rows."""
    grouped: dict[tuple[float, str], Sample] = {}
    for t, source, metric, value in rows:
        key = (float(t), str(source))
        grouped.setdefault(key, Sample(float(t), str(source))).values[str(metric)] = float(value)
    return sorted(grouped.values(), key=lambda s: (s.t, s.source != MACHINE, s.source))
