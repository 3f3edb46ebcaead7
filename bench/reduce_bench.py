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

Each case is reduced twice, side by side: with the parallel check on
(``--reduce-parallel N``, ``--parallel``, default 2: candidates and a sporadic
candidate's tries on N bots at once) and off (``--reduce-parallel 1``: one at a
time).  For each: statements in and out, candidate runs (tries), server starts,
wall time, whether the case is present in each code tree, each pass's figures,
and the ratio off/on of the wall times.  The load (``uptime``) is printed with
the figures.

Run (one command; about 15 minutes on 2 idle cores)::

    nice -n 10 bench/reduce_bench.py [--statements 10000] [--connections 4] [--trials 8]
                          [--cases crash,wrong,sporadic] [--parallel 2] [--sides on,off]
                          [--json out.json]
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
    parser.add_argument("--parallel", type=int, default=2,
                        help="--reduce-parallel of the 'on' side (default: 2)")
    parser.add_argument("--sides", default="on,off", help="on, off or both (default: on,off)")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    sides = [c.strip() for c in args.sides.split(",") if c.strip() in ("on", "off")]
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
            for side in sides:
                width = args.parallel if side == "on" else 1
                print(f"{name} parallel {side}: reducing {folder} ({_uptime()})", flush=True)
                row = reduce_case(f"{name}-{side}", folder, base,
                                  [*extra, f"--reduce-parallel={width}"])
                row.update(side=side, name=name)
                rows.append(row)
                print(f"    {row.get('statements_out', '-')} statements out, "
                      f"{row.get('candidate_runs', '-')} runs, {row['wall']:.1f} s "
                      f"({_uptime()})", flush=True)
    finally:
        remove_plugin_dir(plugin_dir)
    print()
    print(f"{'case':<18} {'in':>7} {'out':>4} {'runs':>5} {'starts':>6} {'wall s':>7}  "
          f"present / absent  (load)")
    for row in rows:
        if "error" in row:
            print(f"{row['case']:<18} ERROR {row['error']}")
            continue
        trees = "present: " + ", ".join(p.split(" ")[0] for p in row["present"]) + \
            ("; absent: " + ", ".join(a.split(" ")[0] for a in row["absent"]) if row["absent"] else "")
        print(f"{row['case']:<18} {row['statements_in']:>7} {row['statements_out']:>4} "
              f"{row['candidate_runs']:>5} {row.get('server_starts', 0):>6} {row['wall']:>7.1f}  "
              f"{trees}  ({row['load']})")
        for p in row["passes"]:
            print(f"    {p['name']:<17} {p['before']:>6} -> {p['after']:<6} "
                  f"{p['runs']:>4} runs {p['seconds']:>6.1f} s")
    print()
    print(f"{'case':<10} {'out on/off':>10} {'runs on/off':>12} {'wall on s':>10} "
          f"{'wall off s':>10} {'off/on':>7}")
    for name in cases:
        on = next((r for r in rows if r.get("name") == name and r.get("side") == "on"), None)
        off = next((r for r in rows if r.get("name") == name and r.get("side") == "off"), None)
        if not on or not off or "error" in on or "error" in off:
            continue
        print(f"{name:<10} {on['statements_out']:>4} / {off['statements_out']:<3} "
              f"{on['candidate_runs']:>5} / {off['candidate_runs']:<5} {on['wall']:>10.1f} "
              f"{off['wall']:>10.1f} {off['wall'] / max(on['wall'], 0.001):>7.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
