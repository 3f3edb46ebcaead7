"""Run Debian's sysbench 1.0 OLTP workloads against a managed server."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from ..errors import CodeTreeError, KewpieError, UsageError
from ..platform.tools import run_tool
from ..servers.server import Server
from .parse import SysbenchResult, parse_output

LUA_DIRS = ("/usr/share/sysbench", "/usr/local/share/sysbench")


class SysbenchError(KewpieError):
    """sysbench failed; the message carries the end of its output."""


def find_sysbench() -> str:
    """The sysbench binary, or one clear error saying how to get it."""
    path = shutil.which("sysbench")
    if not path:
        raise CodeTreeError("sysbench is not installed (Debian package sysbench; "
                            "scripts/setup.sh installs it)")
    return path


def known_workloads() -> list[str]:
    """The stock Lua workloads installed with sysbench."""
    names: set[str] = set()
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
    """A sysbench workload and its data set."""

    name: str
    tables: int = 4
    table_size: int = 10000
    db: str = "sbtest"

    def common_args(self, server: Server) -> list[str]:
        """Connection and data-set options shared by prepare, run and cleanup."""
        return [check_workload(self.name), "--db-driver=mysql",
                f"--mysql-socket={server.socket_file}", "--mysql-user=root",
                f"--mysql-db={self.db}", f"--tables={self.tables}",
                f"--table-size={self.table_size}"]


class Sysbench:
    """prepare / run / cleanup for one workload on one server."""

    def __init__(self, workload: Workload, log_dir: str) -> None:
        self.binary = find_sysbench()
        self.workload = workload
        self.log_dir = log_dir
        os.makedirs(log_dir, exist_ok=True)

    def _call(self, server: Server, args: list[str], log_name: str, timeout: float) -> str:
        argv = [self.binary, *self.workload.common_args(server), *args]
        try:
            proc = run_tool(argv, timeout=timeout, tmpdir=self.log_dir)  # not /tmp
        except OSError as exc:
            raise SysbenchError(f"cannot run {argv[0]}: {exc}") from exc
        if proc.timed_out:
            raise SysbenchError(f"sysbench {args[-1]} did not finish within {timeout:.0f}s")
        text = proc.output
        with open(os.path.join(self.log_dir, log_name), "w") as fh:
            fh.write(" ".join(argv) + "\n" + text)
        if proc.returncode != 0 or "FATAL" in text:
            tail = "\n".join(text.strip().splitlines()[-6:])
            raise SysbenchError(f"sysbench {args[-1]} of {self.workload.name} failed "
                                f"(exit {proc.returncode}):\n{tail}")
        return text

    def prepare(self, server: Server) -> None:
        """Create the schema and load the tables."""
        server.execute(f"CREATE DATABASE IF NOT EXISTS `{self.workload.db}`")
        self._call(server, ["prepare"], "prepare.log", timeout=1800)

    def run(self, server: Server, threads: int, seconds: float, report_interval: int = 1,
            percentile: int = 95, log_name: str = "run.log") -> SysbenchResult:
        """One timed run; returns the parsed result (per-interval report included)."""
        text = self._call(server, [f"--threads={threads}", f"--time={int(seconds)}",
                                   f"--report-interval={report_interval}",
                                   f"--percentile={percentile}", "run"],
                          log_name, timeout=seconds + 120)
        return parse_output(text)

    def cleanup(self, server: Server) -> None:
        """Drop the tables."""
        self._call(server, ["cleanup"], "cleanup.log", timeout=600)
