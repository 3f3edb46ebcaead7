#!/usr/bin/env python3
"""Fleet benchmark: one suite list through buildbot (examples/buildbot/master.cfg, a real
master and real workers on this machine, tests/fixtures/fleet.py) with 1 and with 2
workers, side by side with the same shards run as plain ``--shard K/N`` commands.
Prints figures; asserts nothing.

For each N (``--workers 1,2``):

- **plain**: the N shards as N plain ``kewpie --shard K/N --timings-file`` commands at
  once (each its workdir and base port): the wall time, each shard's wall time and the
  time its tests took (their JUnit times);
- **buildbot**: a forced build of ``kewpie-fleet`` over N workers (no hunts): its wall
  time (forced to complete), and per shard the build's own time, the kewpie step's, and
  buildbot's overhead: the shard build's time less its kewpie step's, plus the wait from
  the trigger to the build's start.

Then a calculation for N workers (one machine each) from the measured costs: a shard
costs the fleet's fixed part (the timings step and the trigger), buildbot's per-shard
overhead, kewpie's fixed cost per shard (start-up, servers, teardown: a plain shard's
wall less its tests' time) and its share of the tests' work (total / N).  On this 2-core
machine two workers share the cores, so the measured N=2 speed-up is bounded; the
calculation is what N machines would give.  The load (``uptime``) is printed beside the
figures.

Run (one command; about 3 minutes on 2 idle cores with the defaults)::

    nice -n 10 bench/fleet_bench.py [--suite fleet] [--suitepath tests/fixtures/suites]
                                    [--repeat 10] [--workers 1,2] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from lib.platform.ports import PortLeaser, default_lock_dir  # noqa: E402
from tests.fixtures.fleet import Fleet  # noqa: E402

KEWPIE = os.path.join(ROOT, "kewpie.py")
PASSWORD = "bench-s3cret"


def _uptime() -> str:
    with open("/proc/loadavg", encoding="utf-8") as fh:
        return "load average " + " ".join(fh.read().split()[:3])


def _kewpie(*args: str, env: dict[str, str] | None = None,
            timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, KEWPIE, *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, KEWPIE_NO_VENV="1", **(env or {})))


def start_store(base: str, suitepath: str) -> tuple[int, str]:
    """A MariaDB store kewpie starts (--start-and-exit), a user with a password: (port,
    DSN)."""
    proc = _kewpie(f"--workdir={base}/store", f"--suitepath={suitepath}", "--suite=fleet",
                   "--start-and-exit")
    if proc.returncode:
        raise SystemExit(f"the store did not start: {proc.stdout[-2000:]}")
    port = int(re.findall(r"INFO MASTER_PORT: (\d+)", proc.stdout)[0])
    import pymysql
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root")
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE kewpie_fleet")
        cur.execute(f"CREATE USER 'fleet'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'")
        cur.execute("GRANT ALL ON kewpie_fleet.* TO 'fleet'@'127.0.0.1'")
    conn.close()
    return port, f"mysql://fleet:{PASSWORD}@127.0.0.1:{port}/kewpie_fleet"


def junit_seconds(path: str) -> float:
    """The tests' time in a JUnit file (the sum of its testcases' times)."""
    return sum(float(case.get("time") or 0) for case in ET.parse(path).iter("testcase"))


def plain(base: str, n: int, suite: list[str], dsn: str) -> dict[str, Any]:
    """The N shards as plain kewpie commands at once: wall time, per shard wall and tests."""
    timings = os.path.join(base, f"plain-{n}-timings.json")
    _kewpie("history", "timings", timings, env={"KEWPIE_HISTORY_DSN": dsn})
    started = time.monotonic()
    procs = []
    for k in range(1, n + 1):
        wd = os.path.join(base, f"plain-{n}-{k}")
        cmd = [sys.executable, KEWPIE, f"--workdir={wd}", f"--base-port={26000 + 400 * k}",
               *suite, f"--shard={k}/{n}", f"--timings-file={timings}", "--history", "off",
               f"--junit-xml={wd}.xml"]
        procs.append((k, wd, time.monotonic(), subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=dict(os.environ, KEWPIE_NO_VENV="1"))))
    shards = []
    for k, wd, t0, proc in procs:
        proc.wait()
        shards.append({"shard": k, "exit": proc.returncode, "wall": time.monotonic() - t0,
                       "tests": junit_seconds(f"{wd}.xml")})
    return {"wall": time.monotonic() - started, "shards": shards}


def _steps(fleet: Fleet, build_id: int) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in fleet.api(f"builds/{build_id}/steps")["steps"]}


def through_buildbot(base: str, n: int, suite: list[str], dsn: str) -> dict[str, Any]:
    """A forced kewpie-fleet build over N workers: wall time and per-shard overhead."""
    lease = PortLeaser(default_lock_dir(), 24700).lease()
    workers = [f"worker-{k}" for k in range(1, n + 1)]
    settings = {"KEWPIE_FLEET_CHECKOUT": ROOT, "KEWPIE_FLEET_SUITES": suite[1].split("=", 1)[1],
                "KEWPIE_FLEET_SUITE_ARGS": " ".join([suite[0], *suite[2:]]),
                "KEWPIE_FLEET_HUNT_ARGS": "none", "KEWPIE_FLEET_JOB": f"bench-{n}",
                "KEWPIE_FLEET_BASE_PORTS": ",".join(f"{w}={27000 + 400 * i}"
                                                    for i, w in enumerate(workers))}
    folder = os.path.join(base, f"fleet-{n}")
    os.mkdir(folder, 0o755)
    fleet = Fleet(folder, workers, dsn, settings, lease.port(0), lease.port(1))
    try:
        fleet.start()
        forced = time.monotonic()
        build = fleet.wait_build(3600)
        wall = time.monotonic() - forced
        steps = _steps(fleet, build["buildid"])
        trigger = steps["shards"]["started_at"]
        shards = []
        for b in fleet.builds("kewpie-shard"):
            step = _steps(fleet, b["buildid"])["shard"]
            kewpie = step["complete_at"] - step["started_at"]
            own = b["complete_at"] - b["started_at"]
            shards.append({"shard": b["properties"]["shard"][0], "build": own, "kewpie": kewpie,
                           "queued": b["started_at"] - trigger, "overhead": own - kewpie +
                           b["started_at"] - trigger, "result": b["results"]})
        last = max(b["complete_at"] for b in fleet.builds("kewpie-shard"))
        fixed = (trigger - build["started_at"]) + (build["complete_at"] - last)
        return {"wall": wall, "build": build["complete_at"] - build["started_at"],
                "fixed": fixed, "shards": shards, "result": build["results"]}
    finally:
        fleet.stop()
        lease.release()


def model(figures: dict[int, dict[str, Any]]) -> dict[str, float]:
    """The costs the calculation for N workers uses, from the measured runs: the fleet's
    fixed part, buildbot's overhead per shard, kewpie's fixed cost per shard, and the
    tests' total work (seconds)."""
    fleet = [f["buildbot"] for f in figures.values()]
    shards = [s for f in figures.values() for s in f["plain"]["shards"]]
    one = figures[min(figures)]["plain"]["shards"]
    return {"fleet_fixed": statistics.median(f["fixed"] for f in fleet),
            "buildbot_per_shard": statistics.median(s["overhead"] for f in fleet
                                                    for s in f["shards"]),
            "kewpie_per_shard": statistics.median(s["wall"] - s["tests"] for s in shards),
            "work": sum(s["tests"] for s in one)}


def predicted(costs: dict[str, float], n: int) -> float:
    """A build's wall time over N workers, one machine each (shards in parallel)."""
    return costs["fleet_fixed"] + costs["buildbot_per_shard"] + costs["kewpie_per_shard"] + \
        costs["work"] / n


def report(figures: dict[int, dict[str, Any]], costs: dict[str, float]) -> None:
    """The figures, side by side, and the calculation for N workers."""
    print(f"\n{'workers':>7}  {'plain wall':>10}  {'buildbot wall':>13}  {'ratio':>6}  "
          f"{'per shard: plain':>16}  {'kewpie step':>11}  {'shard build':>11}  "
          f"{'buildbot overhead':>17}")
    for n, f in sorted(figures.items()):
        p, b = f["plain"], f["buildbot"]
        print(f"{n:>7}  {p['wall']:>9.1f}s  {b['wall']:>12.1f}s  {b['wall'] / p['wall']:>6.2f}  "
              f"{statistics.median(s['wall'] for s in p['shards']):>15.1f}s  "
              f"{statistics.median(s['kewpie'] for s in b['shards']):>10.1f}s  "
              f"{statistics.median(s['build'] for s in b['shards']):>10.1f}s  "
              f"{statistics.median(s['overhead'] for s in b['shards']):>16.2f}s")
    print(f"\ncosts: fleet fixed {costs['fleet_fixed']:.2f}s, buildbot per shard "
          f"{costs['buildbot_per_shard']:.2f}s, kewpie per shard {costs['kewpie_per_shard']:.2f}s,"
          f" tests' work {costs['work']:.1f}s")
    print(f"{'N workers':>9}  {'predicted wall':>14}  {'speed-up':>8}  {'buildbot share':>14}")
    for n in (1, 2, 4, 8, 16, 32, 64):
        wall = predicted(costs, n)
        share = (costs["fleet_fixed"] + costs["buildbot_per_shard"]) / wall
        print(f"{n:>9}  {wall:>13.1f}s  {predicted(costs, 1) / wall:>8.2f}  {share:>13.0%}")


def main() -> int:
    """Run the benchmark (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="fleet")
    parser.add_argument("--suitepath", default=os.path.join(ROOT, "tests", "fixtures", "suites"))
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    suite = [f"--suitepath={args.suitepath}", f"--suite={args.suite}", "--force",
             f"--repeat={args.repeat}"]
    base = tempfile.mkdtemp(prefix="kewpie-fleet-bench-", dir="/tmp")
    os.chmod(base, 0o755)
    figures: dict[int, dict[str, Any]] = {}
    try:
        _, dsn = start_store(base, os.path.join(ROOT, "tests", "fixtures", "suites"))
        seeded = _kewpie(f"--workdir={base}/seed", *suite, env={"KEWPIE_HISTORY_DSN": dsn})
        print(f"store seeded by one whole run (exit {seeded.returncode}; {_uptime()})", flush=True)
        for n in [int(w) for w in args.workers.split(",")]:
            print(f"{n} worker(s): plain --shard runs ({_uptime()})", flush=True)
            figures[n] = {"plain": plain(base, n, suite, dsn)}
            print(f"{n} worker(s): through buildbot ({_uptime()})", flush=True)
            figures[n]["buildbot"] = through_buildbot(base, n, suite, dsn)
            figures[n]["load"] = _uptime()
        costs = model(figures)
        report(figures, costs)
        print(f"({_uptime()})")
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump({"figures": figures, "costs": costs}, fh, indent=2)
    finally:
        _kewpie(f"--workdir={base}/store", "--mode=cleanup")
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
