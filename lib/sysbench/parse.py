"""Parse sysbench 1.0 output: the summary, the --report-interval lines, the
--histogram block, and what kewpie's own scripts print (sysbench/tpcc_like.lua's
"TPC-C-like statistics", sysbench/reconnect.lua's reconnect count)."""
from __future__ import annotations

import math
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
HISTOGRAM_HEAD = "Latency histogram (values are in milliseconds)"
HISTOGRAM_ROW_RE = re.compile(r"^\s+(?P<value>[\d.]+) \|\**\s+(?P<count>\d+)$")
TPCC_HEAD = "TPC-C-like statistics"
TPCC_FIELDS = MappingProxyType({
    "measured_s": re.compile(r"^\s+measured over:\s+([\d.]+)s$", re.M),
    "tpmc_like": re.compile(r"^\s+tpmC-like \(New-Order per minute\):\s+([\d.]+)$", re.M),
    "tpm_total": re.compile(r"^\s+transactions per minute \(all five\):\s+([\d.]+)$", re.M),
    "reconnects": re.compile(r"^\s+reconnects \(--reconnect\):\s+(\d+)$", re.M),
})
TPCC_ROW_RE = re.compile(
    r"^\s+(?P<name>new_order|payment|order_status|delivery|stock_level)\s+(?P<count>\d+)\s+"
    r"(?P<rollbacks>\d+)\s+(?P<retries>\d+)\s+(?P<mix>[\d.]+)\s+(?P<avg>[\d.]+)\s+"
    r"(?P<p50>[\d.]+)\s+(?P<p95>[\d.]+)\s+(?P<p99>[\d.]+)\s+(?P<max>[\d.]+)$", re.M)
RECONNECT_RE = re.compile(r"^kewpie reconnect: (\d+) reconnects", re.M)


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
class TxnStat:
    """One transaction type of the TPC-C-like workload, as its statistics block printed it."""

    name: str
    count: int
    rollbacks: int
    retries: int
    mix_pct: float
    avg_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float


@dataclass
class TpccLike:
    """The TPC-C-like statistics block (sysbench/tpcc_like.lua)."""

    measured_s: float
    tpmc_like: float
    tpm_total: float
    reconnects: int
    txns: list[TxnStat] = field(default_factory=list)


def histogram_percentile(histogram: list[tuple[float, int]], pct: float) -> float:
    """sysbench's own rule over its histogram: the first bucket at which the running
    count reaches floor(total * pct / 100 + 0.5); 0 for an empty histogram."""
    total = sum(count for _, count in histogram)
    if not total:
        return 0.0
    want = math.floor(total * pct / 100 + 0.5)
    seen = 0
    for value, count in histogram:
        seen += count
        if seen >= want and seen > 0:
            return value
    return histogram[-1][0]


@dataclass
class SysbenchResult:
    """What one sysbench run reported.

    ``latency_pct_ms`` is sysbench's printed percentile (``percentile``, 95 by
    default); ``histogram`` its --histogram block as (value ms, count) rows, from
    which :meth:`latency_at` reads the other percentiles.  ``planned_reconnects``
    is what sysbench/reconnect.lua or the TPC-C-like script reported
    (``reconnects`` is sysbench's own count of reconnects after lost connections).
    """

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
    histogram: list[tuple[float, int]] = field(default_factory=list)
    planned_reconnects: int = 0
    tpcc: TpccLike | None = None

    def latency_at(self, pct: float) -> float:
        """The latency percentile pct: sysbench's printed one when pct is it, else read
        off the histogram with sysbench's rule (0 without a histogram)."""
        if pct == self.percentile:
            return self.latency_pct_ms
        return histogram_percentile(self.histogram, pct)

    def percentiles(self) -> dict[str, float]:
        """p50 / p95 / p99 / max in ms (p95 as sysbench printed it)."""
        return {"p50": self.latency_at(50), "p95": self.latency_at(95),
                "p99": self.latency_at(99), "max": self.latency_max_ms}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "SysbenchResult":
        """The inverse of :meth:`to_dict` (older stored dicts lack the newer keys)."""
        raw = dict(raw)
        raw["intervals"] = [Interval(**i) for i in raw.get("intervals", [])]
        raw["histogram"] = [(float(v), int(c)) for v, c in raw.get("histogram", [])]
        tpcc = raw.get("tpcc")
        if tpcc:
            tpcc = dict(tpcc)
            tpcc["txns"] = [TxnStat(**t) for t in tpcc.get("txns", [])]
            raw["tpcc"] = TpccLike(**tpcc)
        return cls(**raw)


def _interval(match: re.Match[str]) -> Interval:
    return Interval(int(match["t"]), int(match["thds"]), float(match["tps"]), float(match["qps"]),
                    float(match["lat"]), float(match["err"]), float(match["reconn"]))


def parse_interval(line: str) -> Interval | None:
    """One --report-interval line as sysbench prints it while it runs (None for any
    other line): what a reader of its output as it comes needs."""
    match = INTERVAL_RE.match(line)
    return _interval(match) if match else None


def parse_histogram(text: str) -> list[tuple[float, int]]:
    """The --histogram block's (value ms, count) rows, in order (empty without one)."""
    at = text.find(HISTOGRAM_HEAD)
    if at < 0:
        return []
    rows: list[tuple[float, int]] = []
    for line in text[at:].splitlines()[2:]:
        match = HISTOGRAM_ROW_RE.match(line)
        if not match:
            break
        rows.append((float(match["value"]), int(match["count"])))
    return rows


def parse_tpcc(text: str) -> TpccLike | None:
    """The TPC-C-like statistics block, or None when the output has none."""
    at = text.find(TPCC_HEAD)
    if at < 0:
        return None
    block = text[at:]
    values: dict[str, float] = {}
    for key, regex in TPCC_FIELDS.items():
        match = regex.search(block)
        if not match:
            raise SysbenchOutputError(f"the TPC-C-like statistics have no '{key}' line")
        values[key] = float(match.group(1))
    txns = [TxnStat(m["name"], int(m["count"]), int(m["rollbacks"]), int(m["retries"]),
                    float(m["mix"]), float(m["avg"]), float(m["p50"]), float(m["p95"]),
                    float(m["p99"]), float(m["max"])) for m in TPCC_ROW_RE.finditer(block)]
    return TpccLike(values["measured_s"], values["tpmc_like"], values["tpm_total"],
                    int(values["reconnects"]), txns)


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
    tpcc = parse_tpcc(text)
    planned = RECONNECT_RE.search(text)
    intervals = [_interval(m) for m in INTERVAL_RE.finditer(text)]
    return SysbenchResult(
        tps=values["transactions"][1], qps=values["queries"][1],
        transactions=values["transactions"][0], queries=values["queries"][0],
        errors=values["errors"][0], reconnects=values["reconnects"][0],
        latency_min_ms=latency.get("min", 0.0), latency_avg_ms=latency.get("avg", 0.0),
        latency_max_ms=latency.get("max", 0.0), latency_pct_ms=latency.get("pct", 0.0),
        percentile=percentile, total_time_s=float(total.group(1)) if total else 0.0,
        intervals=intervals, histogram=parse_histogram(text),
        planned_reconnects=int(planned.group(1)) if planned else (tpcc.reconnects if tpcc else 0),
        tpcc=tpcc)
