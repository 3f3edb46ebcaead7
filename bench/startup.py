#!/usr/bin/env python3
"""Startup benchmark: how long from ``kewpie.py`` launch to the first passing test.

Measures, on this machine and in one run:

- **bare**: launching ``mariadbd`` on an existing datadir until ``SELECT 1``
  succeeds over the unix socket (the floor no harness can beat);
- **bare python**: the venv's ``python -c pass`` (the interpreter's own start, the floor of
  any kewpie command) and **kewpie --help**: ``kewpie.py --help`` to its exit (the fixed
  cost every kewpie command pays: the interpreter and the imports of the command line);
- **kewpie, 1 server** (suite ``bench_one``) and **kewpie, 3 servers with
  replication** (suite ``bench_repl``), each **cold** (the workdir's bootstrap
  cache deleted before every run, so ``mariadb-install-db`` runs) and **warm**
  (cache present).

The tree's lib/ and kewpie.py are byte-compiled first (:func:`compile_tree`), so an
edited tree is measured as a user runs it, not with its compile time.

Each kewpie figure is the time from just before ``Popen`` to the first output
line containing ``[ pass ]``; the process is then left to finish and must exit 0.
It prints a table (min/median/max in ms), the warm 1-server overhead above the
bare cost, ``--help`` and the warm 3-server figure against their targets (PASS/MISS,
print only).  Exit status: 0 when every figure could be measured (whatever PASS/MISS
says), 2 when the benchmark itself cannot run (setup failed, or a configuration
got no successful run).  Individual failed runs are reported and counted.

Usage::

    bench/startup.py [--runs 5] [--json PATH] [--workdir DIR] [--base-port 9500]
"""
from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (KEWPIE, KEWPIE_RUN_TIMEOUT, MARIADBD, ROOT, BenchError, Config,  # noqa: E402
                      Series, Target, attempt, bench_parser, bench_workdir, clear_caches,
                      default_server_user, echo_kewpie, enter_venv, install_db,
                      kewpie_command, machine_info, measuring, parse_bench_args, publish,
                      render_report, stop_process)

enter_venv(__file__)   # before anything the venv provides

import pymysql  # noqa: E402

from lib.platform.logsetup import configure, get_logger  # noqa: E402
from lib.platform.logtail import tail_file  # noqa: E402
from lib.platform.ports import PortLeaser, default_lock_dir  # noqa: E402
from lib.platform.process import wait_exit  # noqa: E402

SUITES_DIR = os.path.join(ROOT, "bench", "suites")
PASS_MARK = "[ pass ]"
POLL_INTERVAL = 0.015          # seconds between SELECT 1 attempts on the bare server
BARE_START_TIMEOUT = 60.0      # seconds a bare mariadbd may take to answer
COMMAND_TIMEOUT = 60.0         # seconds a timed command (python -c pass, --help) may take
TARGET_OVERHEAD_MS = 250.0     # warm 1-server overhead above bare cost (issue 34)
TARGET_HELP_MS = 120.0         # ./kewpie.py --help to its exit (issue 34)
TARGET_REPL_MS = 3000.0        # warm 3-server replication ready


@dataclass(frozen=True)
class KewpieConfig(Config):
    """One kewpie configuration to time: its bench suite, and cold or warm."""

    suite: str
    cold: bool


CONFIGS: tuple[KewpieConfig, ...] = (
    KewpieConfig("one_cold", "kewpie 1 server, cold", "bench_one", True),
    KewpieConfig("one_warm", "kewpie 1 server, warm", "bench_one", False),
    KewpieConfig("repl_cold", "kewpie 3 servers + repl, cold", "bench_repl", True),
    KewpieConfig("repl_warm", "kewpie 3 servers + repl, warm", "bench_repl", False),
)


@dataclass
class StartupSeries(Series):
    """A Series that also keeps, for each successful kewpie run, the ms to its exit."""

    total_ms: list[float] = field(default_factory=list)


# ---------------------------------------------------------------- bare cost
def bare_start_once(base: str, data: str, port: int, user: str | None) -> float:
    """Start mariadbd on data, time until SELECT 1 answers, stop it; return ms."""
    sock = os.path.join(base, "mysql.sock")
    errlog = os.path.join(base, "error.log")
    argv = [MARIADBD, "--no-defaults", f"--datadir={data}", f"--port={port}",
            "--bind-address=127.0.0.1", f"--socket={sock}",
            f"--pid-file={os.path.join(base, 'mariadbd.pid')}", f"--log-error={errlog}"]
    extra: dict[str, str] = {"user": user, "group": user} if user else {}
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=base, **extra)
    try:
        deadline = start + BARE_START_TIMEOUT
        while True:
            try:
                conn = pymysql.connect(unix_socket=sock, user="root", password="",
                                       connect_timeout=2)
                try:
                    with conn.cursor() as cur:
                        cur.execute("SELECT 1")
                        if cur.fetchone() == (1,):
                            return (time.monotonic() - start) * 1000.0
                finally:
                    conn.close()
            except (pymysql.err.MySQLError, OSError):
                pass
            if proc.poll() is not None:
                raise BenchError(f"bare mariadbd exited with {proc.returncode} before answering; "
                                 f"{errlog} ends with:\n{tail_file(errlog)}")
            if time.monotonic() > deadline:
                raise BenchError(f"bare mariadbd did not answer SELECT 1 within "
                                 f"{BARE_START_TIMEOUT:.0f}s; {errlog} ends with:\n{tail_file(errlog)}")
            time.sleep(POLL_INTERVAL)
    finally:
        stop_process(proc)


def measure_bare(runs: int, base_port: int, user: str | None) -> tuple[StartupSeries, float]:
    """The bare cost, runs times (after one discarded warm-up start).

    Returns the series and the seconds mariadb-install-db took once.
    """
    log = get_logger()
    series = StartupSeries("bare mariadbd start -> SELECT 1")
    base = tempfile.mkdtemp(prefix="kewpie-bench-bare-", dir="/dev/shm")
    data = os.path.join(base, "data")
    lease = None
    try:
        os.chmod(base, 0o755)
        if user:
            shutil.chown(base, user, user)
        install_s = install_db(base, user)
        log.info(f"bare: mariadb-install-db took {install_s * 1000:.0f} ms ({data})")
        lease = PortLeaser(default_lock_dir(), base_port=base_port).lease()
        port = lease.port(0)
        warmup = bare_start_once(base, data, port, user)
        log.info(f"bare: warm-up start {warmup:.0f} ms (discarded), port {port}")
        for i in range(runs):
            ms = bare_start_once(base, data, port, user)
            series.samples_ms.append(ms)
            log.info(f"bare: run {i + 1}/{runs}: {ms:.0f} ms")
    finally:
        if lease is not None:
            lease.release()
        shutil.rmtree(base, ignore_errors=True)
    return series, install_s


# ---------------------------------------------------------------- fixed cost
def command_ms(argv: Sequence[str]) -> float:
    """Run argv to its exit (output discarded); its wall time in ms; BenchError unless 0."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=ROOT)
    # wait_exit blocks on a pidfd: subprocess.run(timeout=...) polls in sleeps that
    # double up to 50 ms, which added up to 50 ms to a ~100 ms command (114 -> 164)
    exited = wait_exit(proc, COMMAND_TIMEOUT)
    ms = (time.monotonic() - start) * 1000.0
    if not exited:
        stop_process(proc)
        raise BenchError(f"{' '.join(argv)}: still running after {COMMAND_TIMEOUT:.0f}s")
    rc = proc.returncode
    if rc != 0:
        raise BenchError(f"{' '.join(argv)}: exit status {rc}")
    return ms


def measure_command(label: str, argv: Sequence[str], runs: int) -> StartupSeries:
    """Time argv runs times, after one discarded warm-up run (the page cache)."""
    log = get_logger()
    series = StartupSeries(label)
    command_ms(argv)
    for i in range(runs):
        timed = attempt(series, i, runs, lambda: command_ms(argv))
        if timed is not None:
            series.samples_ms.append(timed)
            log.info(f"{label}: run {i + 1}/{runs}: {timed:.0f} ms")
    return series


# ---------------------------------------------------------------- kewpie runs
def kewpie_run(suite: str, workdir: str, base_port: int, verbose: bool) -> tuple[float, float]:
    """Run kewpie on one bench suite; return (ms to first '[ pass ]', ms to exit).

    Raises BenchError (with kewpie's last lines) when no test passed or kewpie
    did not exit 0.
    """
    argv = kewpie_command(workdir, base_port, [f"--suitepath={SUITES_DIR}", f"--suite={suite}"])
    tail: list[str] = []
    first_pass: float | None = None
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1, cwd=ROOT)
    watchdog = threading.Timer(KEWPIE_RUN_TIMEOUT, proc.terminate)
    watchdog.daemon = True
    watchdog.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if first_pass is None and PASS_MARK in line:
                first_pass = (time.monotonic() - start) * 1000.0
            if verbose:
                echo_kewpie(line)
            tail = (tail + [line.rstrip("\n")])[-20:]
        rc = proc.wait()
        total = (time.monotonic() - start) * 1000.0
    finally:
        watchdog.cancel()
        stop_process(proc)   # interrupted: let kewpie stop its servers
    if rc != 0 or first_pass is None:
        why = f"exit status {rc}" if rc != 0 else "no '[ pass ]' line"
        raise BenchError(f"kewpie {suite}: {why}; last lines:\n" + "\n".join(tail))
    return first_pass, total


def measure_kewpie(config: KewpieConfig, runs: int, workdir: str, base_port: int,
                   verbose: bool) -> StartupSeries:
    """Time one configuration runs times; failed runs are logged and counted."""
    log = get_logger()
    series = StartupSeries(config.label)
    for i in range(runs):
        if config.cold:
            clear_caches(workdir, ["bootstrap"])
        timed = attempt(series, i, runs,
                        lambda: kewpie_run(config.suite, workdir, base_port, verbose))
        if timed is None:
            continue
        ms, total = timed
        series.samples_ms.append(ms)
        series.total_ms.append(total)
        log.info(f"{config.label}: run {i + 1}/{runs}: first pass {ms:.0f} ms, exit {total:.0f} ms")
    return series


# ---------------------------------------------------------------- main
def compile_tree() -> int:
    """Byte-compile lib/ and kewpie.py as any run without PYTHONDONTWRITEBYTECODE leaves
    them (this machine sets it: an edited tree would then recompile its changed modules on
    every run, ~150 ms no user pays twice, and figures would compare compile times); the
    number of modules whose bytecode was missing or older than their source."""
    sources = [os.path.join(d, f) for d, _, files in os.walk(os.path.join(ROOT, "lib"))
               for f in files if f.endswith(".py")] + [KEWPIE]
    stale = 0
    for source in sources:
        cached = importlib.util.cache_from_source(source)
        if not os.path.exists(cached) or os.path.getmtime(cached) < os.path.getmtime(source):
            stale += 1
    compileall.compile_dir(os.path.join(ROOT, "lib"), quiet=1)
    compileall.compile_file(KEWPIE, quiet=1)
    return stale


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = bench_parser("bench/startup.py", __doc__, runs=5, base_port=9500,
                     base_port_help="where port leases start, for kewpie and the bare server")
    return parse_bench_args(p, argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the report; return the exit status."""
    args = parse_args(argv)
    log = configure(verbose=False)
    results: dict[str, StartupSeries] = {}
    stale = 0
    with bench_workdir(args.workdir, "kewpie-bench-workdir-", private_cache=True) as workdir, \
            measuring() as outcome:
        info = machine_info()
        stale = compile_tree()
        user = default_server_user()
        log.info(f"bench: {args.runs} run(s) per configuration, workdir {workdir}")
        bare, install_s = measure_bare(args.runs, args.base_port, user)
        results["bare"] = bare
        results["python"] = measure_command("bare python -c pass",
                                            [sys.executable, "-c", "pass"], args.runs)
        results["help"] = measure_command("kewpie.py --help",
                                          [KEWPIE, "--help"], args.runs)
        for config in CONFIGS:
            results[config.key] = measure_kewpie(config, args.runs, workdir, args.base_port,
                                                 args.verbose)
    if outcome.status is not None:
        return outcome.status

    bare_med = results["bare"].stats()["median"]
    one_warm = results["one_warm"].stats()["median"]
    repl_warm = results["repl_warm"].stats()["median"]
    overhead = None if bare_med is None or one_warm is None else one_warm - bare_med
    targets = [Target("warm 1-server overhead above bare cost", overhead, TARGET_OVERHEAD_MS),
               Target("kewpie.py --help", results["help"].stats()["median"], TARGET_HELP_MS),
               Target("warm 3-server replication ready", repl_warm, TARGET_REPL_MS)]
    series = [results["bare"], results["python"], results["help"],
              *(results[c.key] for c in CONFIGS)]
    details = [f"runs:      {args.runs} per configuration (bare: after 1 discarded warm-up start)",
               f"bootstrap: mariadb-install-db once took {install_s * 1000:.0f} ms",
               f"bytecode:  lib/ and kewpie.py byte-compiled before measuring "
               f"({stale} module(s) were stale)"]
    report = render_report("kewpie startup benchmark", info, details, series, targets,
                           name_width=48)
    doc: dict[str, object] = {
        "machine": info, "runs": args.runs, "install_db_ms": install_s * 1000.0,
        "series": {k: s.to_json() for k, s in results.items()},
        "targets": [t.to_json(ms_keys=True) for t in targets]}
    return publish(report, series, args.json, doc)


if __name__ == "__main__":
    sys.exit(main())
