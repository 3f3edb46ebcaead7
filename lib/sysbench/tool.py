"""Run sysbench 1.0 workloads against managed servers: Debian's stock OLTP scripts and
kewpie's own (``sysbench/tpcc_like.lua``, ``sysbench/reconnect.lua``)."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..errors import CodeTreeError, KewpieError, UsageError
from ..home import data_path
from ..platform.tools import run_tool
from ..servers.server import Server
from .monitor import ResourceMonitor, Sample
from .parse import SysbenchResult, parse_output

LUA_DIRS = ("/usr/share/sysbench", "/usr/local/share/sysbench")
TPCC_LIKE = "tpcc_like"
SHIPPED = ("tpcc_like",)          # kewpie's workloads, in data_path("sysbench")
RECONNECT_SCRIPT = "reconnect.lua"
HOST = "127.0.0.1"
THREADS_STARTED = "Threads started!"


class SysbenchError(KewpieError):
    """sysbench failed; the message carries the end of its output."""


def find_sysbench() -> str:
    """The sysbench binary, or one clear error saying how to get it."""
    path = shutil.which("sysbench")
    if not path:
        raise CodeTreeError("sysbench is not installed (Debian package sysbench; "
                            "scripts/setup.sh installs it)")
    return path


def shipped_script(name: str) -> str:
    """The path of one of kewpie's Lua scripts (in the checkout or the wheel)."""
    return data_path("sysbench", name if name.endswith(".lua") else name + ".lua")


def known_workloads() -> list[str]:
    """The stock Lua workloads installed with sysbench, and kewpie's own."""
    names: set[str] = set(SHIPPED)
    for directory in LUA_DIRS:
        if os.path.isdir(directory):
            names.update(n[:-4] for n in os.listdir(directory)
                         if n.endswith(".lua") and n != "oltp_common.lua")
    return sorted(names)


def check_workload(name: str) -> str:
    """A workload name or .lua path that exists; UsageError listing the known ones."""
    if name.endswith(".lua") and os.path.isfile(name):
        return name
    known = known_workloads()
    if name not in known:
        raise UsageError(f"unknown sysbench workload {name!r}; known: {', '.join(known)}")
    return name


@dataclass
class Workload:
    """A sysbench workload and its data set.

    ``scale`` holds the TPC-C-like workload's ``warehouses``, ``items`` and
    ``customers``; ``engine`` is the storage engine of the tables (None: the
    server's default); ``options`` are more sysbench options for every command.
    """

    name: str
    tables: int = 4
    table_size: int = 10000
    db: str = "sbtest"
    engine: str | None = None
    scale: dict[str, int] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)

    @property
    def tpcc_like(self) -> bool:
        """The TPC-C-like workload (its own data set and consistency check)."""
        return self.name == TPCC_LIKE

    def script_args(self, reconnect: int = 0) -> list[str]:
        """The script (and what picks it): kewpie's TPC-C-like, or a stock workload,
        through sysbench/reconnect.lua when it reconnects."""
        if self.tpcc_like:
            return [shipped_script(TPCC_LIKE)] + ([f"--reconnect={reconnect}"] if reconnect else [])
        name = check_workload(self.name)
        if reconnect:
            return [shipped_script(RECONNECT_SCRIPT), f"--workload={name}",
                    f"--reconnect={reconnect}"]
        return [name]

    def data_args(self) -> list[str]:
        """The data set's options (tables and rows, or the TPC-C-like scale)."""
        if self.tpcc_like:
            args = [f"--{k}={v}" for k, v in sorted(self.scale.items())]
        else:
            args = [f"--tables={self.tables}", f"--table-size={self.table_size}"]
        if self.engine:
            args.append(f"--mysql_storage_engine={self.engine}")
        return args + list(self.options)


def connection_args(servers: Sequence[Server], tcp: bool = False) -> list[str]:
    """How sysbench reaches the servers: one server's socket, or over TCP a host and
    port list (sysbench spreads its connections over the list)."""
    if len(servers) == 1 and not tcp:
        return [f"--mysql-socket={servers[0].paths.socket_file}"]
    return [f"--mysql-host={','.join(HOST for _ in servers)}",
            f"--mysql-port={','.join(str(s.port) for s in servers)}"]


@dataclass
class RunOutput:
    """One timed run: what sysbench printed, parsed, and the monitors' samples."""

    result: SysbenchResult
    samples: list[Sample] = field(default_factory=list)
    monitor_error: str = ""


def failure_lines(text: str, keep: int = 6) -> str:
    """What to quote from a failed sysbench's output: its FATAL/ALERT lines when
    it printed any (a script's report may follow them), else its last lines."""
    lines = text.strip().splitlines()
    fatal = [line for line in lines if line.startswith(("FATAL", "ALERT"))]
    return "\n".join((fatal or lines)[-keep:])


class Sysbench:
    """prepare / run / check / cleanup for one workload on one set of servers."""

    def __init__(self, workload: Workload, log_dir: str) -> None:
        self.binary = find_sysbench()
        self.workload = workload
        self.log_dir = log_dir
        os.makedirs(log_dir, exist_ok=True)

    def _argv(self, servers: Sequence[Server], args: list[str], reconnect: int = 0,
              tcp: bool = False) -> list[str]:
        return [self.binary, *self.workload.script_args(reconnect), "--db-driver=mysql",
                *connection_args(servers, tcp), "--mysql-user=root",
                f"--mysql-db={self.workload.db}", *self.workload.data_args(), *args]

    def _call(self, argv: list[str], log_name: str, timeout: float,
              on_line: Callable[[str], object] | None = None,
              check: bool = True) -> tuple[int, str]:
        command = argv[-1]
        try:
            proc = run_tool(argv, timeout=timeout, tmpdir=self.log_dir,  # not /tmp
                            on_line=on_line)
        except OSError as exc:
            raise SysbenchError(f"cannot run {argv[0]}: {exc}") from exc
        text = "\n".join(proc.lines) + "\n" if on_line is not None else proc.output
        with open(os.path.join(self.log_dir, log_name), "w") as fh:
            fh.write(" ".join(argv) + "\n" + text)
        if proc.timed_out:
            raise SysbenchError(f"sysbench {command} did not finish within {timeout:.0f}s "
                                f"(its output: {os.path.join(self.log_dir, log_name)})")
        if check and (proc.returncode != 0 or "FATAL" in text):
            raise SysbenchError(f"sysbench {command} of {self.workload.name} failed "
                                f"(exit {proc.returncode}; its output: "
                                f"{os.path.join(self.log_dir, log_name)}):\n"
                                f"{failure_lines(text)}")
        return proc.returncode, text

    def prepare(self, server: Server, threads: int = 1) -> None:
        """Create the schema and load the tables (threads load in parallel)."""
        server.execute(f"CREATE DATABASE IF NOT EXISTS `{self.workload.db}`")
        self._call(self._argv([server], [f"--threads={threads}", "prepare"]),
                   f"prepare-{self.workload.db}.log", timeout=3600)

    def run(self, servers: Sequence[Server], threads: int, seconds: float,
            report_interval: int = 1, percentile: int = 95, log_name: str = "run.log",
            reconnect: int = 0, tcp: bool = False,
            watch: Sequence[Server] | None = None,
            on_line: Callable[[str], object] | None = None) -> RunOutput:
        """One timed run over servers (their list spreads the clients); with watch,
        those servers and the machine are sampled every second while it runs; on_line
        sees each line of sysbench's output as it comes (bench/sweep_overhead.py)."""
        argv = self._argv(servers, [f"--threads={threads}", f"--time={int(seconds)}",
                                    f"--report-interval={report_interval}",
                                    f"--percentile={percentile}", "--histogram=on", "run"],
                          reconnect, tcp)
        monitor = ResourceMonitor(list(watch)).start() if watch else None

        def each_line(line: str) -> None:
            """Mark the monitors' t = 0 when sysbench's threads start."""
            if monitor is not None and line.startswith(THREADS_STARTED):
                monitor.mark()
            if on_line is not None:
                on_line(line)
        try:
            _, text = self._call(argv, log_name, timeout=seconds + 300, on_line=each_line)
        finally:
            samples = monitor.stop() if monitor is not None else []
        return RunOutput(parse_output(text), samples, monitor.error if monitor else "")

    def check(self, server: Server) -> tuple[bool, str]:
        """The TPC-C-like consistency check: (all conditions hold, its output)."""
        code, text = self._call(self._argv([server], ["check"]),
                                f"check-{self.workload.db}.log", timeout=1800, check=False)
        if "consistency:" not in text:
            raise SysbenchError(f"the TPC-C-like consistency check did not run:\n"
                                f"{failure_lines(text)}")
        return code == 0, text

    def cleanup(self, server: Server) -> None:
        """Drop the tables."""
        self._call(self._argv([server], ["cleanup"]), f"cleanup-{self.workload.db}.log",
                   timeout=600)
