#!/usr/bin/env python3
"""Results history benchmark: the cost of writing a result, and the page's search over a
store of a million results, on SQLite and on a MariaDB server kewpie starts.

Measures, in one run (figures only, no assertion):

- **write cost per result**: ``HistoryWriter.record_result`` with ``background=False``
  (each result its own transaction, as a run writes them one by one when tests finish
  apart): the median and mean of ``--writes`` calls, and the background writer's
  throughput (``--writes`` results queued, then ``close()``), per result.  Targets:
  <= 1 ms on SQLite (the default store, a file on disk in the bench's workdir), <= 5 ms
  on MariaDB (a server started by ``./kewpie.py --start-and-exit``, vardir where kewpie
  puts it: /dev/shm unless --no-shm).
- **the page's search** over ``--results`` generated results (1,000,000 by default:
  1,000 runs of 1,000 results over 180 days, 2,000 tests, 5 branches, 3 trees, 4
  platforms, about 3% failing, failure texts from a dozen templates): eight searches
  the page makes (recent failures; failure text ``*timeout*``; a test prefix over every
  status; a branch with a rare failure text; a tree and platform; a date range; a
  test's page; a failure text no result has), each ``--repeat`` times through the
  Flask application (query plus rendering), the median of all of them against the
  target <= 200 ms, per store.  The generated store is reused when ``--workdir`` is
  given and it is already there.

Usage::

    bench/history_bench.py [--results 1000000] [--writes 2000] [--repeat 5]
                           [--no-mariadb] [--no-shm] [--workdir DIR] [--json PATH]

Validate at a small scale first (``--results 20000``); the full run takes a few
minutes (generating a million rows on MariaDB is the long part).  Exit status 0
when every figure was measured, 2 otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (KEWPIE, BenchError, Target, bench_workdir, enter_venv,  # noqa: E402
                      machine_info, measuring)

enter_venv(__file__)   # before anything the venv provides

from sqlalchemy import func, select  # noqa: E402

from lib.history.records import RunInfo, new_run_uuid  # noqa: E402
from lib.history.schema import results, runs  # noqa: E402
from lib.history.store import open_engine  # noqa: E402
from lib.history.target import StoreTarget  # noqa: E402
from lib.history.web import create_app  # noqa: E402
from lib.history.writer import HistoryWriter  # noqa: E402
from lib.platform.logsetup import configure  # noqa: E402

BRANCHES = ("main", "10.11", "11.4", "11.8", "bb-11.8-feature")
TREES = ("10.11.18", "10.11.19", "11.4.5")
PLATFORMS = ("debian-12-x86_64", "debian-12-aarch64", "ubuntu-24.04-x86_64", "rhel-9-x86_64")
FAILURES = (
    "AssertionError: Lock wait timeout exceeded; try restarting transaction",
    "AssertionError: replica s1 did not catch up within 60 s (timeout)",
    "QueryError: (1213) Deadlock found when trying to get lock; try restarting transaction",
    "ServerDiedError: s0 is gone (signal 11)\n#0 row_search_mvcc\n#1 ha_innobase::index_read",
    "AssertionError: checksums differ between s0 and s1 (table test.t1)",
    "TestTimeoutError: the test ran longer than --test-timeout 300 s",
    "mysqltest: At line 42: query 'SELECT * FROM t1' failed: 2013: Lost connection",
    "AssertionError: 3 != 4 : rows after failover",
    "ReplicationError: Last_IO_Error: error connecting to master",
    "valgrind: definitely lost: 64 bytes in 1 blocks",
    "galera: WSREP: SST failed: 1 (Operation not permitted)",
    "AssertionError: the warnings check found [ERROR] InnoDB: Page corruption",
)
SEARCHES = (
    ("recent failures", {}),
    ("failure *timeout*", {"failure": "*timeout*"}),
    ("test prefix, all statuses", {"test": "suite3.test_1*", "status": "all"}),
    ("branch + rare text", {"branch": "11.4", "failure": "*signal 11*"}),
    ("tree + platform", {"tree": "10.11.*", "platform": "debian-12*"}),
    ("date range (30d..20d)", {"since": "30d", "until": "20d"}),
    ("a test's page", None),
    ("text nobody has", {"failure": "*no such failure text*"}),
)


def generate(engine: Any, count: int, seed: int = 7) -> float:
    """Fill the store with count results (1,000 a run); returns seconds taken."""
    rng = random.Random(seed)
    per_run = 1000
    total_runs = max(1, count // per_run)
    start = datetime(2026, 1, 1)
    tests = [f"suite{i % 20}.test_{i}" for i in range(2000)]
    began = time.monotonic()
    for r in range(total_runs):
        at = start + timedelta(minutes=r * 180 * 24 * 60 // total_runs)
        with engine.begin() as conn:
            run_id = conn.execute(runs.insert().values(
                uuid=new_run_uuid(), started_at=at, ended_at=at + timedelta(hours=1),
                host=f"agent{r % 8}", platform=PLATFORMS[r % 4], kewpie_version="0.1.0",
                mode="native", selection="--suite=all", shard="", options="{}",
                tree_version=TREES[r % 3], tree_path="/usr", trees="[]",
                branch=BRANCHES[r % 5], revision=f"{r:040x}"[:40], job="kewpie-nightly",
                build=r, build_url="", labels="{}", exit_code=1)).inserted_primary_key[0]
            rows = []
            for i in range(per_run):
                roll = rng.random()
                status = ("fail" if roll < 0.02 else "flaky" if roll < 0.03 else
                          "timeout" if roll < 0.035 else "skipped" if roll < 0.04 else "pass")
                failing = status in ("fail", "flaky", "timeout")
                failure = (f"{tests[i]}:\n{rng.choice(FAILURES)}" if failing else "")
                rows.append({"run_id": run_id, "bot": f"bot{i % 4}", "seq": i + 1,
                             "test": tests[(i + r) % len(tests)], "combination": "",
                             "status": status, "failing": int(failing),
                             "duration_ms": rng.randint(200, 60000),
                             "attempts": 2 if status == "flaky" else 1,
                             "finished_at": at + timedelta(seconds=i * 3), "failure": failure,
                             "signature": "", "evidence": f"/wd/failed/{i}" if failing else ""})
            conn.execute(results.insert(), rows)
        if (r + 1) % 100 == 0:
            print(f"  generated {(r + 1) * per_run:,} results "
                  f"({time.monotonic() - began:.0f} s)", flush=True)
    return time.monotonic() - began


def write_costs(target: StoreTarget, workdir: str, writes: int) -> dict[str, float]:
    """Per-result ms: one transaction each (median, mean), and the background writer."""
    log = configure()
    spool = os.path.join(workdir, "bench-spool")
    sync = HistoryWriter(target, RunInfo(new_run_uuid(), mode="bench"), spool, log,
                         background=False)
    sync.record_result("bench.warmup", "pass", 1)  # opens the store, inserts the run
    samples = []
    for i in range(writes):
        began = time.perf_counter()
        sync.record_result(f"bench.test_{i}", "fail" if i % 50 == 0 else "pass", i,
                           failure="AssertionError: timeout" if i % 50 == 0 else "")
        samples.append((time.perf_counter() - began) * 1000)
    sync.close(0)
    queued = HistoryWriter(target, RunInfo(new_run_uuid(), mode="bench"), spool, log)
    queued.record_result("bench.warmup", "pass", 1)
    began = time.perf_counter()
    for i in range(writes):
        queued.record_result(f"bench.test_{i}", "pass", i)
    queued.close(0)
    background = (time.perf_counter() - began) * 1000 / writes
    if sync.warned or queued.warned:
        raise BenchError(f"the store could not be written: {sync.warned or queued.warned}")
    return {"median": statistics.median(samples), "mean": statistics.fmean(samples),
            "p95": sorted(samples)[int(len(samples) * 0.95)], "background": background}


def search_times(engine: Any, repeat: int) -> dict[str, list[float]]:
    """ms of each search of SEARCHES through the page, repeat times."""
    app = create_app(engine)
    client = app.test_client()
    with engine.connect() as conn:
        busiest = conn.execute(select(results.c.test).where(results.c.failing == 1)
                               .limit(1)).scalar()
    times: dict[str, list[float]] = {}
    for _ in range(repeat):
        for name, params in SEARCHES:
            began = time.perf_counter()
            if params is None:
                response = client.get("/test", query_string={"name": busiest})
            else:
                response = client.get("/", query_string=params)
            took = (time.perf_counter() - began) * 1000
            if response.status_code != 200:
                raise BenchError(f"search {name}: HTTP {response.status_code}")
            times.setdefault(name, []).append(took)
    return times


def start_mariadb(workdir: str, shm: bool) -> tuple[int, Callable[[], None]]:
    """A MariaDB server started by kewpie (--start-and-exit); its port and its stop."""
    argv = [KEWPIE, "--suite=main", "--start-and-exit", f"--workdir={workdir}",
            "--mysqld=--innodb-buffer-pool-size=1G", *([] if shm else ["--no-shm"])]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    ports = re.findall(r"INFO MASTER_PORT: (\d+)", proc.stdout)
    if proc.returncode != 0 or not ports:
        raise BenchError(f"kewpie --start-and-exit failed:\n{proc.stdout[-2000:]}{proc.stderr}")

    def stop() -> None:
        subprocess.run([KEWPIE, "--mode=cleanup", f"--workdir={workdir}"], capture_output=True,
                       timeout=300)

    return int(ports[0]), stop


def measure(label: str, target: StoreTarget, workdir: str, args: argparse.Namespace,
            doc: dict[str, Any]) -> list[Target]:
    """Write costs and searches on one store; its targets."""
    print(f"{label}: {target.display}", flush=True)
    costs = write_costs(target, workdir, args.writes)
    engine = open_engine(target, writer=True, create=True)
    try:
        with engine.connect() as conn:
            have = conn.execute(select(func.count()).select_from(results)
                                .where(results.c.bot != "")).scalar_one()
        generated = 0.0
        if have < args.results:
            print(f"{label}: generating {args.results:,} results...", flush=True)
            generated = generate(engine, args.results)
    finally:
        engine.dispose()
    engine = open_engine(target)  # a reader's engine, as `kewpie history serve` opens
    try:
        times = search_times(engine, args.repeat)
    finally:
        engine.dispose()
    every = [t for samples in times.values() for t in samples]
    doc[label] = {"write_ms": costs, "generate_s": generated,
                  "search_ms": {k: {"median": statistics.median(v), "max": max(v)}
                                for k, v in times.items()},
                  "search_median_ms": statistics.median(every)}
    print(f"\n{label}: write cost per result: median {costs['median']:.3f} ms, mean "
          f"{costs['mean']:.3f} ms, p95 {costs['p95']:.3f} ms (one transaction each); "
          f"background writer {costs['background']:.3f} ms per result")
    if generated:
        print(f"{label}: generated {args.results:,} results in {generated:.0f} s")
    print(f"{label}: the page's searches over {args.results:,} results ({args.repeat} each):")
    for name, samples in times.items():
        print(f"  {name:<28} median {statistics.median(samples):7.1f} ms   max {max(samples):7.1f} ms")
    limit = 1.0 if label == "SQLite" else 5.0
    return [Target(f"{label} write cost per result (median, ms)", costs["median"], limit,
                   unit="ratio", inclusive=True),
            Target(f"{label} search over {args.results:,} (median, ms)",
                   statistics.median(every), 200.0, inclusive=True)]


def main() -> int:
    """Run the benchmark; print the figures."""
    p = argparse.ArgumentParser(prog="bench/history_bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=int, default=1_000_000, metavar="N")
    p.add_argument("--writes", type=int, default=2000, metavar="N")
    p.add_argument("--repeat", type=int, default=5, metavar="N")
    p.add_argument("--no-mariadb", action="store_true", help="SQLite only")
    p.add_argument("--no-shm", action="store_true", help="the MariaDB server's vardir on disk")
    p.add_argument("--workdir", default=None, metavar="DIR", help="keep the stores here")
    p.add_argument("--json", default=None, metavar="PATH")
    args = p.parse_args()
    doc: dict[str, Any] = {"results": args.results, "writes": args.writes}
    targets: list[Target] = []
    with measuring() as outcome, bench_workdir(args.workdir, "kewpie-history-bench-") as work:
        info = machine_info()
        load = os.getloadavg()
        print(f"history bench: {info['date']}, nproc {info['nproc']}, load average "
              f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; {info['mariadbd']}", flush=True)
        doc.update(info=info, load=load)
        sqlite = StoreTarget(sqlite_path=os.path.join(work, "history-bench.sqlite"))
        targets += measure("SQLite", sqlite, work, args, doc)
        if not args.no_mariadb:
            server_dir = os.path.join(work, "server")
            port, stop = start_mariadb(server_dir, not args.no_shm)
            try:
                server = StoreTarget(dsn=f"mysql://root@127.0.0.1:{port}/kewpie_history_bench")
                targets += measure("MariaDB", server, work, args, doc)
            finally:
                stop()
    if outcome.status is not None:
        return outcome.status
    print()
    for t in targets:
        verdict = t.verdict
        print(f"{t.name:<52} {t.value:9.3f}   target <= {t.target:g}   {verdict}")
    doc["targets"] = [t.to_json() for t in targets]
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
