#!/usr/bin/env python3
"""Parallel bots benchmark: wall time of one selection with --parallel 1 and 2.

The selection (default: main, replication_basic, cluster_basic, cluster_sst)
runs once in each of two workdirs untimed, so that both have their caches
(pristine datadir, cluster snapshot) and test timings; then the timed runs
alternate between ``--parallel 1`` and ``--parallel 2``.  It prints the table,
the ratio of the medians, and the target (ratio at most 0.65 on 2 cores;
print only).  Exit status 0 when both configurations have a successful run, 2
otherwise.

Usage::

    bench/parallel_bench.py [--runs 1] [--suites main,replication_basic] [--json PATH]
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (KEWPIE_RUN_TIMEOUT, BenchError, Config, Series, Target,  # noqa: E402
                      attempt, bench_parser, bench_workdir, enter_venv, kewpie_command,
                      machine_info, measuring, parse_bench_args, publish, render_report)

enter_venv(__file__)

from lib.platform.logsetup import configure, get_logger  # noqa: E402

DEFAULT_SUITES = "main,replication_basic,cluster_basic,cluster_sst"
TARGET_RATIO = 0.65
CONFIGS = (Config("p1", "kewpie --parallel 1"), Config("p2", "kewpie --parallel 2"))


def run_selection(workdir: str, parallel: int, suites: str, base_port: int, verbose: bool) -> float:
    """Wall ms of one kewpie run of the selection; BenchError unless it exits 0."""
    argv = kewpie_command(workdir, base_port, [f"--suite={suites}", f"--parallel={parallel}",
                                               "--force"])
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=KEWPIE_RUN_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise BenchError(f"kewpie --parallel {parallel} took over {KEWPIE_RUN_TIMEOUT:.0f}s") from None
    elapsed = (time.monotonic() - start) * 1000.0
    if verbose:
        sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-15:])
        raise BenchError(f"kewpie --parallel {parallel} exited {proc.returncode}:\n{tail}")
    return elapsed


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the report."""
    parser = bench_parser("bench/parallel_bench.py", __doc__ or "", runs=1, base_port=9800,
                          base_port_help="where kewpie's port leases start")
    parser.add_argument("--suites", default=DEFAULT_SUITES, help=f"the selection (default: {DEFAULT_SUITES})")
    args = parse_bench_args(parser, argv)
    configure(args.verbose)
    log = get_logger()
    series = {c.key: Series(c.label) for c in CONFIGS}
    with measuring() as outcome:
        with bench_workdir(None, "kewpie-bench-p1-") as wd1, \
                bench_workdir(None, "kewpie-bench-p2-") as wd2:
            dirs = {"p1": wd1, "p2": wd2}
            for key, parallel in (("p1", 1), ("p2", 2)):
                log.info(f"bench: warm-up run with --parallel {parallel} (untimed)")
                run_selection(dirs[key], parallel, args.suites, args.base_port, args.verbose)
            for run in range(args.runs):
                for key, parallel in (("p1", 1), ("p2", 2)):
                    ms = attempt(series[key], run, args.runs,
                                 lambda: run_selection(dirs[key], parallel, args.suites,
                                                       args.base_port, args.verbose))
                    if ms is not None:
                        series[key].samples_ms.append(ms)
                        log.info(f"{series[key].label}: run {run + 1}/{args.runs}: {ms:.0f} ms")
    if outcome.status is not None:
        return outcome.status
    p1, p2 = series["p1"].stats()["median"], series["p2"].stats()["median"]
    ratio = p2 / p1 if p1 and p2 else None
    target = Target("--parallel 2 / --parallel 1", ratio, TARGET_RATIO, unit="ratio", inclusive=True)
    info = machine_info()
    report = render_report("kewpie parallel bots benchmark", info,
                           [f"selection: {args.suites}",
                            f"runs:      {args.runs} per configuration, after one untimed warm-up each"],
                           list(series.values()), [target], name_width=30)
    doc = {"info": info, "selection": args.suites,
           "series": [s.to_json() for s in series.values()], "targets": [target.to_json()]}
    return publish(report, list(series.values()), args.json, doc)


if __name__ == "__main__":
    sys.exit(main())
