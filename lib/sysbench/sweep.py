"""Sweeps: a workload at several thread counts, optionally varying server variables, the
code tree (basedir) and the matrix's dimensions (engine, tables, reconnect, nodes;
lib/sysbench/matrix.py), each combination after a warm-up and repeated.  This module
holds the sweep file's spec and the results; lib/sysbench/runner.py runs them."""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import UsageError
from .engines import resolve_engine
from .matrix import Matrix
from .monitor import Sample
from .parse import SysbenchResult
from .tool import TPCC_LIKE, check_workload

CLUSTER_TYPES = MappingProxyType({"galera": "galera", "replication": "mysql"})
READ_ONLY_WORKLOADS = frozenset({"oltp_read_only", "oltp_point_select", "select_random_points",
                                 "select_random_ranges"})
TPCC_SCALE = ("warehouses", "items", "customers")
MAX_NODES = 9


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
    matrix: dict[str, Any] | None = None
    cluster: dict[str, Any] | None = None
    storage: str = ""
    protocol: str = "socket"
    total_rows: int | None = None
    warehouses: int | None = None
    items: int | None = None
    customers: int | None = None
    sysbench_options: list[str] = field(default_factory=list)
    monitor: bool = True
    latency_plots: bool = True
    consistency_check: bool = True

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
        spec.check()
        return spec

    # ------------------------------------------------------------------ checks
    def check(self) -> None:
        """The checks beyond the types: matrix, cluster, nodes, engines, scale."""
        grid = self.grid()
        nodes = max((c.nodes or 1 for c in grid.cells), default=1)
        size = self.cluster_size
        if self.cluster is not None:
            kind = self.cluster.get("type") if isinstance(self.cluster, dict) else None
            count = self.cluster.get("nodes") if isinstance(self.cluster, dict) else None
            if kind not in CLUSTER_TYPES or not isinstance(count, int) or \
                    isinstance(count, bool) or not 2 <= count <= MAX_NODES or \
                    set(self.cluster) - {"type", "nodes"}:
                raise UsageError("sweep 'cluster' must be {\"type\": \"galera\" or "
                                 f"\"replication\", \"nodes\": 2..{MAX_NODES}}}, "
                                 f"not {self.cluster!r}")
        if nodes > size:
            listed = grid.values_of("nodes")
            where = "one server" if size == 1 else f"{size} servers"
            raise UsageError(f"sweep 'matrix' nodes {listed}: spreading clients over {nodes} "
                             f"nodes needs a cluster of that many servers, and this sweep has "
                             f"{where} (add \"cluster\": {{\"type\": \"galera\", \"nodes\": "
                             f"{nodes}}})")
        if self.cluster_type == "replication" and nodes > 1 and \
                self.workload not in READ_ONLY_WORKLOADS:
            raise UsageError(f"sweep 'matrix' nodes {grid.values_of('nodes')}: replicas take "
                             f"no writes; spread only a read-only workload over them "
                             f"({', '.join(sorted(READ_ONLY_WORKLOADS))}), not {self.workload}")
        if self.variable is not None and "variables" in grid.given and self.matrix and \
                "variables" in self.matrix:
            raise UsageError("sweep: give the variables either as 'variable' or in "
                             "'matrix' variables, not both")
        for engine in grid.values_of("engine"):
            if engine is not None:
                found = resolve_engine(engine, None)
                if found.plugin and self.cluster_type == "galera":
                    raise UsageError(f"sweep engine {engine}: Galera replicates InnoDB only; "
                                     f"{found.name} tables would not replicate")
        tpcc = self.workload == TPCC_LIKE
        if tpcc and ("tables" in grid.given or self.total_rows is not None):
            raise UsageError("sweep: the TPC-C-like workload scales by 'warehouses', not "
                             "'tables' or 'total_rows'")
        if not tpcc and any(getattr(self, k) is not None for k in TPCC_SCALE):
            raise UsageError(f"sweep: {', '.join(TPCC_SCALE)} are the TPC-C-like workload's "
                             f"scale, not {self.workload}'s")
        for key in TPCC_SCALE + ("total_rows",):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or value < 1):
                raise UsageError(f"sweep {key!r} must be a positive integer, not {value!r}")
        if self.storage not in ("", "shm", "disk"):
            raise UsageError(f"sweep 'storage' must be 'disk' or 'shm', not {self.storage!r}")
        if self.protocol not in ("socket", "tcp"):
            raise UsageError(f"sweep 'protocol' must be 'socket' or 'tcp', not {self.protocol!r}")
        if not all(isinstance(o, str) and o.startswith("--") for o in self.sysbench_options):
            raise UsageError("sweep 'sysbench_options' must be a list of --options")

    def grid(self) -> Matrix:
        """The matrix's cells; a legacy 'variable' joins them as the variables dimension."""
        raw: Any = self.matrix
        if isinstance(raw, dict) and self.variable is not None and "variables" not in raw:
            raw = dict(raw)
            raw["variables"] = {self.variable: list(self.values)}
        return Matrix.parse(raw)

    @property
    def cluster_size(self) -> int:
        """How many servers each code tree gets (1 without a cluster)."""
        return int(self.cluster["nodes"]) if isinstance(self.cluster, dict) and \
            isinstance(self.cluster.get("nodes"), int) else 1

    @property
    def cluster_type(self) -> str | None:
        """'galera', 'replication' or None."""
        return str(self.cluster["type"]) if isinstance(self.cluster, dict) and \
            self.cluster.get("type") else None

    @property
    def server_type(self) -> str:
        """The kewpie server type of the sweep's servers."""
        return CLUSTER_TYPES.get(self.cluster_type or "", "mysql")

    def table_layout(self, tables: int | None) -> tuple[int, int]:
        """(tables, rows per table) of a cell: total_rows spread over the tables, or the
        spec's table_size per table."""
        count = tables or self.tables
        if self.total_rows:
            return count, max(1, self.total_rows // count)
        return count, self.table_size

    def tpcc_scale(self) -> dict[str, int]:
        """The TPC-C-like script's scale options."""
        return {k: int(getattr(self, k)) for k in TPCC_SCALE if getattr(self, k) is not None}

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
    """One timed run of one combination.

    ``value`` names the combination: the legacy variable's value, or the matrix
    cell's label (``engine=RocksDB reconnect=1``); ``cell`` holds the cell's
    dimensions; ``samples`` the resource monitors' seconds; ``log`` the file
    (in the sweep's ``logs/``) holding what sysbench printed.
    """

    basedir: str
    version: str
    value: Any
    threads: int
    repeat: int
    result: SysbenchResult
    cell: dict[str, Any] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    log: str = ""              # sysbench's output, in the sweep's logs/


@dataclass
class CheckRecord:
    """The TPC-C-like consistency check of one data set after its runs."""

    version: str
    data_set: str
    passed: bool | None        # None: skipped
    output: str


@dataclass
class SweepResult:
    """Every run of a sweep plus its context."""

    spec: SweepSpec
    context: dict[str, Any]
    runs: list[RunRecord] = field(default_factory=list)
    checks: list[CheckRecord] = field(default_factory=list)

    def combos(self) -> dict[tuple[str, str, int], list[float]]:
        """(version, value, threads) -> the tps of each repeat."""
        out: dict[tuple[str, str, int], list[float]] = {}
        for run in self.runs:
            out.setdefault((run.version, str(run.value), run.threads), []).append(run.result.tps)
        return out

    def median_tps(self) -> dict[tuple[str, str, int], float]:
        """Median tps per combination."""
        return {k: statistics.median(v) for k, v in self.combos().items()}
