#!/usr/bin/env python3
"""Reduce benchmark: planted defects buried in long multi-connection traces, reduced by
``kewpie --mode=reduce``.  Prints figures; asserts nothing.

1. **crash**: the planted UDF crash (tests/fixtures/hunt/planted_udf.c) -- a
   ``CREATE FUNCTION``, a table, three INSERTs, the crashing SELECT -- buried in a
   ``--statements`` trace (default 10,000) on ``--connections`` connections
   (tests/fixtures/reduce/planted.py).  Target: <= 5 statements out (the three
   INSERTs merged into one), <= 3 minutes on 2 cores.
2. **wrong**: a planted wrong result between two servers (s1 with
   ``--div-precision-increment=8``, a compare topology) buried the same way.
3. **sporadic**: the crash when its statement fires 1 time in 3 (``RAND()``),
   reduced with ``--trials`` tries per candidate.

For each: statements in and out, candidate runs, wall time, whether the case is
present in each code tree, and each pass's figures.  The load (``uptime``) is
printed with the figures.  (Candidates are checked one at a time: the parallel
check on several bots, and so its side-by-side column, is not built yet.)

Run (one command; about 10 minutes on 2 idle cores)::

    bench/reduce_bench.py [--statements 10000] [--connections 4] [--trials 8]
                          [--cases crash,wrong,sporadic] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.fixtures.hunt.planted import build_plugin_dir, remove_plugin_dir  # noqa: E402
from tests.fixtures.reduce.planted import (SPORADIC, crash_trace, wrong_result_trace,  # noqa: E402
                                           write_finding, write_wrong_result_finding)


def _uptime() -> str:
    with open("/proc/loadavg", encoding="utf-8") as fh:
        return "load average " + " ".join(fh.read().split()[:3])


def reduce_case(name: str, finding: str, base: str, extra: list[str]) -> dict:
    """One kewpie --mode=reduce run; its figures (reduce.json) and wall time."""
    out = os.path.join(base, f"out-{name}")
    workdir = os.path.join(base, f"wd-{name}")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "kewpie.py"), f"--workdir={workdir}",
                           "--mode=reduce", finding, f"--reduce-out={out}", *extra],
                          capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    path = os.path.join(out, "reduce.json")
    if proc.returncode != 0 or not os.path.exists(path):
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        return {"case": name, "error": f"exit {proc.returncode}: " + " / ".join(tail), "wall": wall}
    figures = json.load(open(path, encoding="utf-8"))
    figures.update(case=name, wall=round(wall, 1), load=_uptime())
    return figures


def main() -> int:
    """Build the planted findings, reduce each, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--statements", type=int, default=10000)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--trials", type=int, default=8, help="tries per candidate (sporadic)")
    parser.add_argument("--cases", default="crash,wrong,sporadic")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    base = tempfile.mkdtemp(prefix="kwreducebench", dir="/tmp")
    os.chmod(base, 0o755)
    plugin_dir = build_plugin_dir()
    rows = []
    try:
        noise = max(1, args.statements - 6)
        plugin = [f"--plugin-dir={plugin_dir}"]
        for name in cases:
            folder = os.path.join(base, f"t0001-1-{name}")
            extra: list[str] = []
            if name == "crash":
                write_finding(folder, crash_trace(noise, args.connections, 11), plugin)
            elif name == "wrong":
                write_wrong_result_finding(folder, wrong_result_trace(args.statements - 3, 5))
            elif name == "sporadic":
                write_finding(folder, crash_trace(noise, args.connections, 13, SPORADIC), plugin)
                extra = [f"--trials={args.trials}"]
            else:
                raise SystemExit(f"unknown case {name} (crash, wrong, sporadic)")
            print(f"{name}: reducing {folder} ({_uptime()})", flush=True)
            rows.append(reduce_case(name, folder, base, extra))
    finally:
        remove_plugin_dir(plugin_dir)
    print()
    print(f"{'case':<18} {'in':>7} {'out':>4} {'runs':>5} {'wall s':>7}  present / absent  (load)")
    for row in rows:
        if "error" in row:
            print(f"{row['case']:<18} ERROR {row['error']}")
            continue
        trees = "present: " + ", ".join(p.split(" ")[0] for p in row["present"]) + \
            ("; absent: " + ", ".join(a.split(" ")[0] for a in row["absent"]) if row["absent"] else "")
        print(f"{row['case']:<18} {row['statements_in']:>7} {row['statements_out']:>4} "
              f"{row['candidate_runs']:>5} {row['wall']:>7.1f}  {trees}  ({row['load']})")
        for p in row["passes"]:
            print(f"    {p['name']:<17} {p['before']:>6} -> {p['after']:<6} "
                  f"{p['runs']:>4} runs {p['seconds']:>6.1f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
