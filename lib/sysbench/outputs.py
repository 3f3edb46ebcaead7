"""A sweep's outputs: console table, CSV, JSON and PNG plots (matplotlib)."""
from __future__ import annotations

import csv
import json
import os
import statistics

from .sweep import SweepResult


def table(sweep: SweepResult) -> str:
    """Median tps per combination: rows = threads, columns = version/value."""
    combos = sweep.combos()
    columns = sorted({(v, val) for v, val, _ in combos}, key=str)
    threads = sorted({t for _, _, t in combos})
    name = sweep.spec.variable or "default"
    heads = [f"{val}" if len({v for v, _ in columns}) == 1 else f"{v} {val}" for v, val in columns]
    heads = [h.removesuffix(" None") for h in heads]  # versions against versions, no variable
    width = max([12, *(len(h) + 2 for h in heads)])
    lines = [f"{sweep.spec.workload}: median tps, {sweep.spec.repeats} repeat(s) of "
             f"{sweep.spec.duration:g}s ({name} across)",
             f"{'threads':>8}" + "".join(f"{h:>{width}}" for h in heads)]
    for t in threads:
        cells = []
        for v, val in columns:
            values = combos.get((v, val, t))
            cells.append(f"{statistics.median(values):>{width}.1f}" if values else f"{'-':>{width}}")
        lines.append(f"{t:>8}" + "".join(cells))
    return "\n".join(lines)


def write_csv(sweep: SweepResult, path: str) -> str:
    """One row per run."""
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["workload", "version", "variable", "value", "threads", "repeat", "tps",
                      "qps", "latency_avg_ms", f"latency_p{sweep.runs[0].result.percentile if sweep.runs else 95}_ms",
                      "errors", "reconnects"])
        for run in sweep.runs:
            r = run.result
            out.writerow([sweep.spec.workload, run.version, sweep.spec.variable or "", run.value,
                          run.threads, run.repeat, f"{r.tps:.2f}", f"{r.qps:.2f}",
                          f"{r.latency_avg_ms:.2f}", f"{r.latency_pct_ms:.2f}", r.errors, r.reconnects])
    return path


def write_json(sweep: SweepResult, path: str) -> str:
    """The spec, the context and every run with its intervals."""
    doc = {"spec": sweep.spec.to_dict(), "context": sweep.context,
           "runs": [{"version": r.version, "value": r.value, "threads": r.threads,
                     "repeat": r.repeat, **r.result.to_dict()} for r in sweep.runs]}
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=2, default=str)
    return path


def plot_threads(sweep: SweepResult, path: str) -> str:
    """Throughput against threads, one line per variable value (or version)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    medians = sweep.median_tps()
    for version, value in sorted({(v, val) for v, val, _ in medians}, key=str):
        points = sorted((t, tps) for (v, val, t), tps in medians.items() if (v, val) == (version, value))
        label = f"{sweep.spec.variable}={value}" if sweep.spec.variable else version
        if len({v for v, _, _ in medians}) > 1 and sweep.spec.variable:
            label = f"{version} {label}"
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sweep.spec.threads, labels=[str(t) for t in sweep.spec.threads])
    ax.set_xlabel("client threads")
    ax.set_ylabel("transactions/s (median)")
    ax.set_title(f"{sweep.spec.name}: {sweep.spec.workload}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_over_time(sweep: SweepResult, path: str) -> str:
    """Throughput over time for the run with the most threads (first value, first repeat)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    run = max(sweep.runs, key=lambda r: (r.threads, -r.repeat)) if sweep.runs else None
    fig, ax = plt.subplots(figsize=(7, 3.5))
    if run and run.result.intervals:
        ax.plot([i.second for i in run.result.intervals], [i.tps for i in run.result.intervals],
                marker=".")
        ax.set_title(f"{sweep.spec.workload}, {run.threads} threads, "
                     f"{sweep.spec.variable or ''}{'=' + str(run.value) if sweep.spec.variable else ''}")
    ax.set_xlabel("seconds")
    ax.set_ylabel("transactions/s")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_all(sweep: SweepResult, out_dir: str) -> dict[str, str]:
    """Table text plus CSV, JSON and both plots in out_dir; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {"csv": write_csv(sweep, os.path.join(out_dir, "results.csv")),
             "json": write_json(sweep, os.path.join(out_dir, "results.json")),
             "plot_threads": plot_threads(sweep, os.path.join(out_dir, "tps_vs_threads.png")),
             "plot_time": plot_over_time(sweep, os.path.join(out_dir, "tps_over_time.png"))}
    with open(os.path.join(out_dir, "table.txt"), "w") as fh:
        fh.write(table(sweep) + "\n")
    paths["table"] = os.path.join(out_dir, "table.txt")
    return paths
