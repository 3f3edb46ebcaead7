"""A sweep's outputs: console table, Markdown tables, CSV, JSON and PNG plots (matplotlib).

Files in the sweep's directory:

- ``table.txt`` / ``table.md``: median tps per thread count and combination, then
  the latency percentiles (50/95/99/max), the resources the monitors saw, and
  for the TPC-C-like workload tpmC-like and the consistency checks;
- ``results.csv`` (one row per run), ``results.json`` (spec, context, every run
  with its intervals, histogram and monitor samples);
- ``tps_vs_threads.png``; ``tps_over_time.png`` (the run with the most
  threads: tps and the resources over one time axis);
- ``timeline/<run>.png`` and ``latency/<run>.png`` for every run (tps beside
  the resources; the latency distribution), and ``latency_distribution.png``
  (every combination's distribution at the most threads).
"""
from __future__ import annotations

import csv
import json
import os
import statistics
from dataclasses import asdict
from typing import Any, Callable

from ..platform.safewrite import HeldOutput, OutputDir
from ..platform.secrets import redact, redact_text
from .monitor import MACHINE, series, sources, summary
from .sweep import RunRecord, SweepResult

MB = 1024 * 1024


def _columns(sweep: SweepResult) -> list[tuple[str, str]]:
    combos = sweep.combos()
    return sorted({(v, val) for v, val, _ in combos}, key=str)


def _heads(sweep: SweepResult, columns: list[tuple[str, str]]) -> list[str]:
    several_versions = len({v for v, _ in columns}) > 1
    heads = [f"{v} {val}" if several_versions else f"{val}" for v, val in columns]
    return ["default" if h == "None" else h.removesuffix(" None") for h in heads]


def _runs_of(sweep: SweepResult, version: str, value: str, threads: int) -> list[RunRecord]:
    return [r for r in sweep.runs
            if r.version == version and str(r.value) == value and r.threads == threads]


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def run_label(run: RunRecord) -> str:
    """A run's name in file names and titles."""
    value = "" if run.value is None else f"{run.value} "
    return f"{run.version} {value}{run.threads}t r{run.repeat}".replace("/", "_")


def server_mean(run: RunRecord, metric: str) -> float | None:
    """A server metric's mean over the run, summed over the set's servers."""
    means = [summary(run.samples, source, metric) for source in sources(run.samples)
             if source != MACHINE]
    values = [m for m in means if m is not None]
    return sum(values) if values else None


def miss_pct(run: RunRecord) -> float | None:
    """Buffer-pool misses in % of read requests over the run (all servers)."""
    reads, requests = server_mean(run, "bp_reads_per_s"), server_mean(run, "bp_read_requests_per_s")
    if reads is None or not requests:
        return None
    return 100 * reads / requests


def server_cpu(run: RunRecord) -> float | None:
    """The servers' CPU (user + system) in % of one CPU, mean over the run."""
    user = server_mean(run, "cpu_user_pct")
    return None if user is None else user + (server_mean(run, "cpu_system_pct") or 0.0)


def _machine_mb(metric: str) -> Callable[[RunRecord], float | None]:
    def read(run: RunRecord) -> float | None:
        """The machine metric's mean over the run, in MB."""
        value = summary(run.samples, MACHINE, metric)
        return None if value is None else value / MB
    return read


def _server_rss_mb(run: RunRecord) -> float | None:
    value = server_mean(run, "rss_bytes")
    return None if value is None else value / MB


RESOURCE_COLUMNS: tuple[tuple[str, str, Callable[[RunRecord], float | None]], ...] = (
    ("server CPU %", "{:.0f}", server_cpu),
    ("iowait %", "{:.1f}", lambda r: summary(r.samples, MACHINE, "cpu_iowait_pct")),
    ("disk read MB/s", "{:.2f}", _machine_mb("disk_read_bps")),
    ("disk write MB/s", "{:.2f}", _machine_mb("disk_write_bps")),
    ("RSS MB", "{:.0f}", _server_rss_mb),
    ("bp misses/s", "{:.0f}", lambda r: server_mean(r, "bp_reads_per_s")),
    ("bp miss %", "{:.2f}", miss_pct),
    ("RocksDB cache misses/s", "{:.0f}", lambda r: server_mean(r, "rocksdb_block_cache_miss_per_s")),
    ("row lock waits/s", "{:.1f}", lambda r: server_mean(r, "row_lock_waits_per_s")),
    ("flow control paused", "{:.2f}", lambda r: server_mean(r, "wsrep_fc_paused")),
)


def _fmt(fmt: str, value: float | None) -> str:
    return "-" if value is None else fmt.format(value)


Table = tuple[list[str], list[list[str]]]  # a header and its rows
Columns = list[tuple[str, str]]  # _columns(): the (version, value) of each column


def table_rows(sweep: SweepResult) -> dict[str, Table]:
    """The tables (title -> header, rows) that table() and markdown() print."""
    columns = _columns(sweep)
    heads = _heads(sweep, columns)
    threads = sorted({t for _, _, t in sweep.combos()})
    tables: dict[str, Table] = {}
    tables["tps"] = _tps_table(sweep, columns, heads, threads)
    tables["latency"] = _latency_table(sweep, columns, heads, threads)
    if any(r.samples for r in sweep.runs):
        tables["resources"] = _resources_table(sweep, columns, heads, threads)
    tpcc_runs = [r for r in sweep.runs if r.result.tpcc]
    if tpcc_runs:
        top = max(tpcc_runs, key=lambda r: (r.threads, -r.repeat))
        tables[f"TPC-C-like transactions ({run_label(top)})"] = _tpcc_table(top)
    return tables


def _tps_table(sweep: SweepResult, columns: Columns, heads: list[str],
               threads: list[int]) -> Table:
    """tps by thread count (rows) and column: the median (and range) of the repeats."""
    rows = []
    for t in threads:
        cells = []
        for v, val in columns:
            tps = [r.result.tps for r in _runs_of(sweep, v, val, t)]
            if not tps:
                cells.append("-")
            elif len(tps) > 1:
                cells.append(f"{statistics.median(tps):.1f} ({min(tps):.0f}-{max(tps):.0f})")
            else:
                cells.append(f"{tps[0]:.1f}")
        rows.append([str(t), *cells])
    return ["threads", *heads], rows


def _latency_table(sweep: SweepResult, columns: Columns, heads: list[str],
                   threads: list[int]) -> Table:
    """Latency percentiles (and tpmC-like) by thread count and combination."""
    rows = []
    for t in threads:
        for (v, val), name in zip(columns, heads):
            runs = _runs_of(sweep, v, val, t)
            if not runs:
                continue
            pcts = [r.result.percentiles() for r in runs]
            row = [str(t), name or "-",
                   *(_fmt("{:.2f}", _median([p[k] for p in pcts])) for k in ("p50", "p95", "p99")),
                   _fmt("{:.2f}", max(p["max"] for p in pcts))]
            if any(r.result.tpcc for r in runs):
                row.append(_fmt("{:.0f}", _median([r.result.tpcc.tpmc_like for r in runs
                                                   if r.result.tpcc])))
            rows.append(row)
    latency_head = ["threads", "combination", "p50 ms", "p95 ms", "p99 ms", "max ms"]
    if any(r.result.tpcc for r in sweep.runs):
        latency_head.append("tpmC-like")
    return latency_head, rows


def _resources_table(sweep: SweepResult, columns: Columns, heads: list[str],
                     threads: list[int]) -> Table:
    """The resource monitors' medians (the columns some run has) by thread count and
    combination."""
    wanted = [c for c in RESOURCE_COLUMNS if any(c[2](r) is not None for r in sweep.runs)]
    rows = []
    for t in threads:
        for (v, val), head_name in zip(columns, heads):
            runs = _runs_of(sweep, v, val, t)
            if not runs:
                continue
            median_tps = statistics.median([r.result.tps for r in runs])
            rows.append([str(t), head_name or "-", f"{median_tps:.1f}",
                         *(_fmt(fmt, _median([x for x in (fn(r) for r in runs)
                                              if x is not None]))
                           for _, fmt, fn in wanted)])
    return ["threads", "combination", "tps", *(c[0] for c in wanted)], rows


def _tpcc_table(top: RunRecord) -> Table:
    """The TPC-C-like transactions of one run (the most threads' first repeat)."""
    assert top.result.tpcc is not None
    return (["transaction", "count", "rollbacks", "retries", "mix %", "avg ms", "p50 ms",
             "p95 ms", "p99 ms", "max ms"],
            [[t.name, str(t.count), str(t.rollbacks), str(t.retries), f"{t.mix_pct:.2f}",
              f"{t.avg_ms:.2f}", f"{t.p50_ms:.2f}", f"{t.p95_ms:.2f}", f"{t.p99_ms:.2f}",
              f"{t.max_ms:.2f}"] for t in top.result.tpcc.txns])


def _title(sweep: SweepResult) -> str:
    spec = sweep.spec
    across = spec.variable or ", ".join(spec.grid().varied) or "default"
    return (f"{spec.workload}: median tps, {spec.repeats} repeat(s) of {spec.duration:g}s "
            f"({across} across)")


def table(sweep: SweepResult) -> str:
    """Text tables: median tps (min-max over repeats) per thread count and combination,
    then latency percentiles, resources and TPC-C-like figures."""
    lines = [_title(sweep)]
    for name, (head, rows) in table_rows(sweep).items():
        widths = [max(len(str(x)) for x in col) + 2 for col in zip(head, *rows)]
        if name != "tps":
            lines += ["", name + ":"]
        lines.append("".join(f"{h:>{w}}" for h, w in zip(head, widths)))
        lines += ["".join(f"{c:>{w}}" for c, w in zip(row, widths)) for row in rows]
    for check in sweep.checks:
        state = {True: "all hold", False: "FAILED", None: "skipped"}[check.passed]
        last = next((ln.strip() for ln in check.output.splitlines()[::-1] if ln.strip()), "")
        lines.append(f"TPC-C-like consistency, {check.data_set} on {check.version}: {state} "
                     f"({last})")
    return "\n".join(lines)


def markdown(sweep: SweepResult) -> str:
    """The same tables in Markdown (for docs)."""
    out = [f"**{_title(sweep)}**", ""]
    for name, (head, rows) in table_rows(sweep).items():
        if name != "tps":
            out += [f"*{name}*", ""]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join("---" if h in ("combination", "transaction") else "---:"
                                  for h in head) + "|")
        out += ["| " + " | ".join(row) + " |" for row in rows]
        out.append("")
    for check in sweep.checks:
        state = {True: "all conditions hold", False: "FAILED", None: "skipped"}[check.passed]
        out.append(f"- TPC-C-like consistency of `{check.data_set}` on {check.version}: {state}")
    return "\n".join(out).rstrip() + "\n"


def write_csv(sweep: SweepResult, path: str) -> str:
    """One row per run."""
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["workload", "version", "variable", "value", "engine", "tables", "reconnect",
                      "nodes", "threads", "repeat", "tps", "qps",
                      "latency_avg_ms", f"latency_p{sweep.runs[0].result.percentile if sweep.runs else 95}_ms",
                      "latency_p50_ms", "latency_p99_ms", "latency_max_ms",
                      "errors", "reconnects", "planned_reconnects", "tpmc_like",
                      "server_cpu_pct", "bp_reads_per_s", "bp_miss_pct"])
        for run in sweep.runs:
            r = run.result
            pct = r.percentiles()
            cpu = server_cpu(run)
            out.writerow([sweep.spec.workload, run.version, sweep.spec.variable or "", run.value,
                          run.cell.get("engine") or "", run.cell.get("tables") or "",
                          run.cell.get("reconnect", ""), run.cell.get("nodes") or "",
                          run.threads, run.repeat, f"{r.tps:.2f}", f"{r.qps:.2f}",
                          f"{r.latency_avg_ms:.2f}", f"{r.latency_pct_ms:.2f}",
                          f"{pct['p50']:.3f}", f"{pct['p99']:.3f}",
                          f"{pct['max']:.2f}", r.errors, r.reconnects, r.planned_reconnects,
                          f"{r.tpcc.tpmc_like:.2f}" if r.tpcc else "",
                          _fmt("{:.1f}", cpu), _fmt("{:.1f}", server_mean(run, "bp_reads_per_s")),
                          _fmt("{:.3f}", miss_pct(run))])
    return path


def write_json(sweep: SweepResult, path: str) -> str:
    """The spec, the context (their secrets, such as a server option's password, as
    ``***``: the file is an artifact), every run (intervals, histogram, samples) and the
    checks."""
    doc = {"spec": redact(sweep.spec.to_dict()), "context": redact(sweep.context),
           "runs": [{"version": r.version, "value": r.value, "threads": r.threads,
                     "repeat": r.repeat, "cell": r.cell, "log": r.log, **r.result.to_dict(),
                     "percentiles": r.result.percentiles(),
                     "samples": [asdict(s) for s in r.samples]} for r in sweep.runs],
           "checks": [asdict(c) for c in sweep.checks]}
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=1, default=str)
    return path


def _pyplot() -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _figure(width: float, height: float) -> Any:
    """A matplotlib Figure outside pyplot (cheaper for the per-run plots)."""
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height))


def plot_threads(sweep: SweepResult, path: str) -> str:
    """Throughput against threads, one line per combination (or version)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    medians = sweep.median_tps()
    columns = _columns(sweep)
    for (version, value), head in zip(columns, _heads(sweep, columns)):
        points = sorted((t, tps) for (v, val, t), tps in medians.items() if (v, val) == (version, value))
        label = f"{sweep.spec.variable}={value}" if sweep.spec.variable and sweep.spec.matrix is None \
            else (head or version)
        if len({v for v, _, _ in medians}) > 1 and sweep.spec.variable and sweep.spec.matrix is None:
            label = f"{version} {label}"
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sweep.spec.threads, labels=[str(t) for t in sweep.spec.threads])
    ax.set_xlabel("client threads")
    ax.set_ylabel("transactions/s (median)")
    ax.set_title(f"{sweep.spec.name}: {sweep.spec.workload}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _panels(run: RunRecord) -> list[tuple[str, list[tuple[str, str, str, float]]]]:
    """The timeline's panels after tps: (y label, [(source, metric, legend, scale)])."""
    servers = [s for s in sources(run.samples) if s != MACHINE]
    have = {(s.source, m) for s in run.samples for m in s.values}

    def lines(metric: str, legend: str, scale: float = 1.0) -> list[tuple[str, str, str, float]]:
        """One line per server that has the metric."""
        return [(src, metric, f"{src} {legend}" if len(servers) > 1 else legend, scale)
                for src in servers if (src, metric) in have]
    per_node = [(src, "queries_per_s", src, 1.0) for src in servers
                if len(servers) > 1 and (src, "queries_per_s") in have]
    panels = [("queries/s per server", per_node),
              ("CPU %", lines("cpu_user_pct", "server user") + lines("cpu_system_pct", "server sys")
               + [(MACHINE, m, f"machine {n}", 1.0) for m, n in
                  (("cpu_user_pct", "user"), ("cpu_system_pct", "sys"), ("cpu_iowait_pct", "iowait"))
                  if (MACHINE, m) in have]),
              ("disk MB/s", [(MACHINE, m, f"machine {n}", 1 / MB) for m, n in
                             (("disk_read_bps", "read"), ("disk_write_bps", "write"))
                             if (MACHINE, m) in have]
               + lines("io_read_bps", "server read", 1 / MB) + lines("io_write_bps", "server write", 1 / MB)),
              ("RSS MB", lines("rss_bytes", "server RSS", 1 / MB)),
              ("buffer pool /s", lines("bp_reads_per_s", "misses (reads)")
               + lines("rocksdb_block_cache_miss_per_s", "RocksDB block cache misses")),
              ("threads / waits", lines("threads_running", "Threads_running")
               + lines("row_lock_waits_per_s", "row lock waits/s")),
              ("flow control", lines("wsrep_fc_paused", "paused fraction"))]
    return [(name, content) for name, content in panels if content]


def plot_timeline(run: RunRecord, path: str, title: str = "") -> str:
    """tps over time beside the resources, one figure over a shared time axis (lines that
    stay at zero, and panels left empty so, are left out)."""
    panels = []
    for name, content in _panels(run):
        kept = []
        for source, metric, legend, scale in content:
            t, values = series(run.samples, source, metric)
            if any(values) or name in ("CPU %", "disk MB/s"):
                kept.append((legend, t, [v * scale for v in values]))
        if kept:
            panels.append((name, kept))
    fig = _figure(8, 1.9 + 1.45 * len(panels))
    axes = fig.subplots(1 + len(panels), 1, sharex=True, squeeze=False)
    ax = axes[0][0]
    if run.result.intervals:
        ax.plot([i.second for i in run.result.intervals], [i.tps for i in run.result.intervals],
                marker=".", color="black")
    ax.set_ylabel("transactions/s", fontsize="small")
    ax.set_title(title or run_label(run), fontsize="medium")
    ax.grid(True, alpha=0.3)
    for (name, kept), row in zip(panels, axes[1:]):
        ax = row[0]
        for legend, t, values in kept:
            ax.plot(t, values, label=legend)
        ax.set_ylabel(name, fontsize="small")
        ax.ticklabel_format(axis="y", useOffset=False, style="plain")
        if name == "RSS MB":  # from 0, the line clear of the frame (RSS barely moves)
            ax.set_ylim(0, 1.15 * max((max(v, default=0.0) for _, _, v in kept), default=0.0) + 1)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small", loc="upper left", ncol=3, framealpha=0.6)
    axes[-1][0].set_xlabel("seconds")
    axes[-1][0].set_xlim(left=0)
    fig.subplots_adjust(left=0.1, right=0.97, top=0.96, bottom=0.06, hspace=0.12)
    fig.savefig(path, dpi=85)
    return path


def plot_over_time(sweep: SweepResult, path: str) -> str:
    """The timeline of the run with the most threads (first combination, first repeat)."""
    if not sweep.runs:
        plt = _pyplot()
        fig, _ = plt.subplots(figsize=(7, 3.5))
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return path
    run = max(sweep.runs, key=lambda r: (r.threads, -r.repeat))
    return plot_timeline(run, path, f"{sweep.spec.workload}, {run_label(run)}")


def plot_latency(run: RunRecord, path: str) -> str:
    """One run's latency distribution (sysbench's histogram) with p50/p95/p99/max."""
    fig = _figure(7, 3.4)
    ax = fig.add_subplot()
    hist = run.result.histogram
    if hist:
        ax.fill_between([v for v, _ in hist], [c for _, c in hist], step="mid", alpha=0.35)
        ax.step([v for v, _ in hist], [c for _, c in hist], where="mid")
        ax.set_xscale("log")
        pct = run.result.percentiles()
        for key, style in (("p50", ":"), ("p95", "--"), ("p99", "-."), ("max", "-")):
            ax.axvline(pct[key], linestyle=style, color="tab:red", linewidth=1,
                       label=f"{key} {pct[key]:.2f} ms")
        ax.legend(fontsize="small")
    ax.set_xlabel("latency, ms (sysbench's histogram)")
    ax.set_ylabel("transactions")
    ax.set_title(run_label(run), fontsize="medium")
    ax.grid(True, alpha=0.3)
    fig.subplots_adjust(left=0.11, right=0.97, top=0.9, bottom=0.15)
    fig.savefig(path, dpi=85)
    return path


def plot_latency_distribution(sweep: SweepResult, path: str) -> str:
    """Every combination's latency distribution at the most threads (repeat 1), as the
    share of transactions at or below each latency."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    top = max((r.threads for r in sweep.runs), default=0)
    for run in [r for r in sweep.runs if r.threads == top and r.repeat == 1]:
        hist = run.result.histogram
        total = sum(c for _, c in hist)
        if not total:
            continue
        seen, xs, ys = 0, [], []
        for value, count in hist:
            seen += count
            xs.append(value)
            ys.append(100 * seen / total)
        label = " ".join(x for x in (run.version if len({r.version for r in sweep.runs}) > 1 else "",
                                     "" if run.value is None else str(run.value)) if x)
        ax.plot(xs, ys, label=label or run.version)
    ax.set_xscale("log")
    ax.set_xlabel("latency, ms")
    ax.set_ylabel("% of transactions at or below")
    ax.set_title(f"{sweep.spec.name}: latency at {top} threads", fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_all(sweep: SweepResult, out_dir: str | OutputDir) -> dict[str, str]:
    """Tables, CSV, JSON and the plots in out_dir (see the module), written into the folder
    kewpie holds, never through a link (lib/platform/safewrite.py; out_dir a path: a
    folder a suite chose, made when missing); returns their paths."""
    with HeldOutput(out_dir, "--sweep-out") as out:
        held = out.held()
        paths = _write_all(sweep, held, out)
        return {k: out.path + v[len(held):] if v.startswith(held) else v
                for k, v in paths.items()}


def _write_all(sweep: SweepResult, out_dir: str, out: OutputDir) -> dict[str, str]:
    """write_all's files under out_dir (the held folder's path)."""
    paths = {"csv": write_csv(sweep, os.path.join(out_dir, "results.csv")),
             "json": write_json(sweep, os.path.join(out_dir, "results.json")),
             "plot_threads": plot_threads(sweep, os.path.join(out_dir, "tps_vs_threads.png")),
             "plot_time": plot_over_time(sweep, os.path.join(out_dir, "tps_over_time.png"))}
    if any(r.result.histogram for r in sweep.runs):
        paths["plot_latency"] = plot_latency_distribution(
            sweep, os.path.join(out_dir, "latency_distribution.png"))
    if sweep.spec.latency_plots:
        for sub in ("timeline", "latency"):
            out.folder(sub).close()
        for run in sweep.runs:
            name = run_label(run).replace(" ", "_") + ".png"
            if run.samples:
                plot_timeline(run, os.path.join(out_dir, "timeline", name))
            if run.result.histogram:
                plot_latency(run, os.path.join(out_dir, "latency", name))
    with open(os.path.join(out_dir, "table.txt"), "w") as fh:
        fh.write(redact_text(table(sweep)) + "\n")
    paths["table"] = os.path.join(out_dir, "table.txt")
    with open(os.path.join(out_dir, "table.md"), "w") as fh:
        fh.write(redact_text(markdown(sweep)))
    paths["markdown"] = os.path.join(out_dir, "table.md")
    return paths
