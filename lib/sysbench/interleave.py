"""Version against version on a shared machine: the code trees take turns.

:func:`lib.sysbench.sweep.run_sweep` runs one tree's whole sweep, then the
next one's, so load that comes and goes on the machine (other users, other
jobs) lands on one tree and looks like a difference between versions.  Here
every tree's server is prepared and kept running, and each (threads, repeat)
step runs on every tree in turn, the order alternating between repeats, so a
drift in load falls on all trees alike.  Used for sweeps with several
``basedirs`` and no variable.
"""
from __future__ import annotations

from typing import Any, TypeVar

from ..platform.logsetup import get_logger
from ..servers.server import Server
from .sweep import RunRecord, ServerFor, SweepResult, SweepSpec
from .tool import Sysbench, Workload

T = TypeVar("T")


def turn_order(servers: list[T], repeat: int) -> list[T]:
    """Who runs first alternates: as listed on odd repeats, reversed on even ones."""
    return list(servers) if repeat % 2 else list(reversed(servers))


def run_interleaved(spec: SweepSpec, server_for: ServerFor, log_dir: str,
                    context: dict[str, Any]) -> SweepResult:
    """Run spec's threads x repeats on every basedir's server in turn (see the module)."""
    log = get_logger()
    sweep = SweepResult(spec, context)
    tool = Sysbench(Workload(spec.workload, spec.tables, spec.table_size), log_dir)
    servers: list[tuple[str, str, Server]] = []
    for basedir in spec.basedirs:
        server = server_for(basedir, list(spec.server_options))
        version = server.variable("version") or "?"
        log.info(f"sweep {spec.name}: preparing {spec.tables} x {spec.table_size} rows "
                 f"on {version}")
        tool.prepare(server)
        servers.append((basedir, version, server))
    for threads in spec.threads:
        if spec.warmup > 0:
            for _basedir, version, server in servers:
                tool.run(server, threads, spec.warmup, log_name=f"warmup-{version}-{threads}.log")
        for repeat in range(1, spec.repeats + 1):
            for basedir, version, server in turn_order(servers, repeat):
                result = tool.run(server, threads, spec.duration,
                                  log_name=f"run-{version}-None-{threads}-{repeat}.log")
                log.info(f"sweep {spec.name}: {version} threads={threads} repeat {repeat}: "
                         f"{result.tps:.1f} tps, p{result.percentile} "
                         f"{result.latency_pct_ms:.2f} ms, {result.errors} errors")
                sweep.runs.append(RunRecord(basedir, version, None, threads, repeat, result))
    for _basedir, _version, server in servers:
        tool.cleanup(server)
    return sweep
