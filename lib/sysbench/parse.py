"""Parse sysbench 1.0 output (the summary and the --report-interval lines)."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import KewpieError

INTERVAL_RE = re.compile(
    r"^\[ *(?P<t>\d+)s \] thds: (?P<thds>\d+) tps: (?P<tps>[\d.]+) qps: (?P<qps>[\d.]+) "
    r"\(r/w/o: [\d./]+\) lat \(ms,(?P<pct>\d+)%\): (?P<lat>[\d.]+) err/s: (?P<err>[\d.]+) "
    r"reconn/s: (?P<reconn>[\d.]+)", re.M)
FIELDS = MappingProxyType({
    "transactions": re.compile(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)"),
    "queries": re.compile(r"^\s+queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)", re.M),
    "errors": re.compile(r"ignored errors:\s+(\d+)\s+\(([\d.]+) per sec\.\)"),
    "reconnects": re.compile(r"reconnects:\s+(\d+)\s+\(([\d.]+) per sec\.\)"),
})
LATENCY_RE = re.compile(r"^\s+(min|avg|max|\d+th percentile|sum):\s+([\d.]+)", re.M)
TOTAL_TIME_RE = re.compile(r"total time:\s+([\d.]+)s")


class SysbenchOutputError(KewpieError):
    """sysbench's output could not be read (it failed, or its format changed)."""


@dataclass
class Interval:
    """One --report-interval line."""

    second: int
    threads: int
    tps: float
    qps: float
    latency_pct_ms: float
    errors_per_s: float
    reconnects_per_s: float


@dataclass
class SysbenchResult:
    """What one sysbench run reported."""

    tps: float
    qps: float
    transactions: int
    queries: int
    errors: int
    reconnects: int
    latency_min_ms: float
    latency_avg_ms: float
    latency_max_ms: float
    latency_pct_ms: float
    percentile: int
    total_time_s: float
    intervals: list[Interval] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return asdict(self)


def parse_output(text: str) -> SysbenchResult:
    """Read a `sysbench ... run` output; SysbenchOutputError if it has no summary."""
    values: dict[str, tuple[int, float]] = {}
    for key, regex in FIELDS.items():
        match = regex.search(text)
        if not match:
            tail = "\n".join(text.strip().splitlines()[-5:])
            raise SysbenchOutputError(f"sysbench output has no '{key}' line; it ended with:\n{tail}")
        values[key] = (int(match.group(1)), float(match.group(2)))
    latency: dict[str, float] = {}
    percentile = 95
    for name, value in LATENCY_RE.findall(text):
        if name.endswith("percentile"):
            percentile = int(name.split("th")[0])
            latency["pct"] = float(value)
        else:
            latency[name] = float(value)
    total = TOTAL_TIME_RE.search(text)
    intervals = [Interval(int(m["t"]), int(m["thds"]), float(m["tps"]), float(m["qps"]),
                          float(m["lat"]), float(m["err"]), float(m["reconn"]))
                 for m in INTERVAL_RE.finditer(text)]
    return SysbenchResult(
        tps=values["transactions"][1], qps=values["queries"][1],
        transactions=values["transactions"][0], queries=values["queries"][0],
        errors=values["errors"][0], reconnects=values["reconnects"][0],
        latency_min_ms=latency.get("min", 0.0), latency_avg_ms=latency.get("avg", 0.0),
        latency_max_ms=latency.get("max", 0.0), latency_pct_ms=latency.get("pct", 0.0),
        percentile=percentile, total_time_s=float(total.group(1)) if total else 0.0,
        intervals=intervals)
