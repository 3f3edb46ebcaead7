"""Sweeps: a workload at several thread counts, optionally varying one server variable
or the code tree (basedir), each combination after a warm-up and repeated."""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ..errors import QueryError, UsageError
from ..platform.logsetup import get_logger
from ..servers.server import Server
from .parse import SysbenchResult
from .tool import Sysbench, Workload, check_workload

READ_ONLY_VARIABLE = 1238  # ER_INCORRECT_GLOBAL_LOCAL_VAR: needs a restart


@dataclass
class SweepSpec:
    """What a sweep runs (the JSON sweep file, see docs/sysbench.md)."""

    name: str
    workload: str
    threads: list[int]
    duration: float = 10.0
    warmup: float = 3.0
    repeats: int = 1
    tables: int = 4
    table_size: int = 10000
    variable: str | None = None
    values: list[Any] = field(default_factory=lambda: [None])
    basedirs: list[str] = field(default_factory=list)
    server_options: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SweepSpec":
        """Build and check a spec from the sweep file's dict."""
        data = dict(data)
        var = data.pop("variable", None)
        if isinstance(var, dict):
            data["variable"], data["values"] = var.get("name"), var.get("values") or [None]
        elif var is not None:
            raise UsageError("sweep 'variable' must be {\"name\": ..., \"values\": [...]}")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise UsageError(f"unknown sweep keys: {', '.join(sorted(unknown))}")
        try:
            spec = cls(**data)
        except TypeError as exc:
            raise UsageError(f"bad sweep file: {exc}") from None
        check_workload(spec.workload)
        if not spec.threads or not all(isinstance(t, int) and t > 0 for t in spec.threads):
            raise UsageError("sweep 'threads' must be a list of positive integers")
        if spec.repeats < 1 or spec.duration <= 0:
            raise UsageError("sweep 'repeats' must be >= 1 and 'duration' > 0")
        return spec

    @classmethod
    def from_file(cls, path: str) -> "SweepSpec":
        """Read a JSON sweep file."""
        try:
            with open(path) as fh:
                return cls.from_dict(json.load(fh))
        except OSError as exc:
            raise UsageError(f"cannot read sweep file {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise UsageError(f"sweep file {path} is not valid JSON: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        """The spec as stored with the results."""
        return asdict(self)


@dataclass
class RunRecord:
    """One timed run of one combination."""

    basedir: str
    version: str
    value: Any
    threads: int
    repeat: int
    result: SysbenchResult


@dataclass
class SweepResult:
    """Every run of a sweep plus its context."""

    spec: SweepSpec
    context: dict[str, Any]
    runs: list[RunRecord] = field(default_factory=list)

    def combos(self) -> dict[tuple[str, str, int], list[float]]:
        """(version, value, threads) -> the tps of each repeat."""
        out: dict[tuple[str, str, int], list[float]] = {}
        for run in self.runs:
            out.setdefault((run.version, str(run.value), run.threads), []).append(run.result.tps)
        return out

    def median_tps(self) -> dict[tuple[str, str, int], float]:
        """Median tps per combination."""
        return {k: statistics.median(v) for k, v in self.combos().items()}


ServerFor = Callable[[str, list[str]], Server]


def apply_variable(server: Server, spec: SweepSpec, value: Any, base_options: list[str],
                   restart: Callable[[list[str]], Server]) -> Server:
    """Set the sweep's variable: SET GLOBAL if dynamic, else restart with the option."""
    if spec.variable is None or value is None:
        return server
    try:
        server.execute(f"SET GLOBAL {spec.variable} = %s", (value,))
        return server
    except QueryError as exc:
        if exc.code != READ_ONLY_VARIABLE:
            raise UsageError(f"cannot set {spec.variable}={value!r}: {exc.message}") from None
    option = f"--{spec.variable.replace('_', '-')}={value}"
    get_logger().info(f"sweep: {spec.variable} is not dynamic; restarting with {option}")
    return restart(base_options + [option])


def run_sweep(spec: SweepSpec, server_for: ServerFor, log_dir: str,
              context: dict[str, Any]) -> SweepResult:
    """Run every combination of basedirs x values x threads, repeats times each.

    server_for(basedir, options) returns a running server with those options
    (restarting it when they change); the data set is prepared once per server.
    """
    log = get_logger()
    sweep = SweepResult(spec, context)
    tool = Sysbench(Workload(spec.workload, spec.tables, spec.table_size), log_dir)
    for basedir in spec.basedirs or [""]:
        server = server_for(basedir, list(spec.server_options))
        version = server.variable("version") or "?"
        log.info(f"sweep {spec.name}: preparing {spec.tables} x {spec.table_size} rows "
                 f"on {version}")
        tool.prepare(server)
        for value in spec.values:
            server = apply_variable(server, spec, value, list(spec.server_options),
                                    lambda opts: server_for(basedir, opts))
            for threads in spec.threads:
                if spec.warmup > 0:
                    tool.run(server, threads, spec.warmup, log_name=f"warmup-{threads}.log")
                for repeat in range(1, spec.repeats + 1):
                    label = f"{spec.variable}={value} " if spec.variable else ""
                    result = tool.run(server, threads, spec.duration,
                                      log_name=f"run-{version}-{value}-{threads}-{repeat}.log")
                    log.info(f"sweep {spec.name}: {label}threads={threads} repeat {repeat}: "
                             f"{result.tps:.1f} tps, p{result.percentile} "
                             f"{result.latency_pct_ms:.2f} ms, {result.errors} errors")
                    sweep.runs.append(RunRecord(basedir, version, value, threads, repeat, result))
        tool.cleanup(server)
    return sweep
