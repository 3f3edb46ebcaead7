#!/usr/bin/env python3
"""Startup benchmark: how long from ``kewpie.py`` launch to the first passing test.

Measures, on this machine and in one run:

- **bare**: launching ``mariadbd`` on an existing datadir until ``SELECT 1``
  succeeds over the unix socket (the floor no harness can beat);
- **kewpie, 1 server** (suite ``bench_one``) and **kewpie, 3 servers with
  replication** (suite ``bench_repl``), each **cold** (the workdir's bootstrap
  cache deleted before every run, so ``mariadb-install-db`` runs) and **warm**
  (cache present).

Each kewpie figure is the time from just before ``Popen`` to the first output
line containing ``[ pass ]``; the process is then left to finish and must exit 0.
It prints a table (min/median/max in ms), the warm 1-server overhead above the
bare cost and the warm 3-server figure against their targets (PASS/MISS, print
only).  Exit status: 0 when every figure could be measured (whatever PASS/MISS
says), 2 when the benchmark itself cannot run (setup failed, or a configuration
got no successful run).  Individual failed runs are reported and counted.

Usage::

    bench/startup.py [--runs 5] [--json PATH] [--workdir DIR] [--base-port 9500]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import pwd
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")

if (os.path.exists(VENV_PYTHON)
        and os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(ROOT, ".venv"))
        and not os.environ.get("KEWPIE_NO_VENV")):
    os.execv(VENV_PYTHON, [VENV_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])
sys.path.insert(0, ROOT)

import pymysql  # noqa: E402

from lib.logsetup import configure, get_logger  # noqa: E402
from lib.ports import PortLeaser, default_lock_dir  # noqa: E402
from lib.workdir import Workdir  # noqa: E402
from lib.logtail import tail_file  # noqa: E402

KEWPIE = os.path.join(ROOT, "kewpie.py")
SUITES_DIR = os.path.join(ROOT, "bench", "suites")
MARIADBD = "/usr/sbin/mariadbd"
INSTALL_DB = "/usr/bin/mariadb-install-db"
PASS_MARK = "[ pass ]"
POLL_INTERVAL = 0.015          # seconds between SELECT 1 attempts on the bare server
BARE_START_TIMEOUT = 60.0      # seconds a bare mariadbd may take to answer
STOP_TIMEOUT = 60.0            # seconds a SIGTERMed mariadbd may take to exit
KEWPIE_RUN_TIMEOUT = 600.0     # seconds one kewpie run may take in all
TARGET_OVERHEAD_MS = 1000.0    # warm 1-server overhead above bare cost
TARGET_REPL_MS = 3000.0        # warm 3-server replication ready


@dataclass(frozen=True)
class Config:
    """One kewpie configuration to time."""

    key: str
    label: str
    suite: str
    cold: bool


CONFIGS: tuple[Config, ...] = (
    Config("one_cold", "kewpie 1 server, cold", "bench_one", True),
    Config("one_warm", "kewpie 1 server, warm", "bench_one", False),
    Config("repl_cold", "kewpie 3 servers + repl, cold", "bench_repl", True),
    Config("repl_warm", "kewpie 3 servers + repl, warm", "bench_repl", False),
)


@dataclass
class Series:
    """Samples of one configuration (ms) and the errors of failed runs."""

    label: str
    samples_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    total_ms: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when at least one run succeeded."""
        return bool(self.samples_ms)

    def stats(self) -> dict[str, float | None]:
        """min, median and max in ms (None when there is no sample)."""
        if not self.samples_ms:
            return {"min": None, "median": None, "max": None}
        return {"min": min(self.samples_ms), "median": statistics.median(self.samples_ms),
                "max": max(self.samples_ms)}


class BenchError(Exception):
    """The benchmark itself cannot run."""


# ---------------------------------------------------------------- machine
def machine_info() -> dict[str, str]:
    """nproc, mariadbd --version, kernel and date of this run."""
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count() or 0
    try:
        version = subprocess.run([MARIADBD, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BenchError(f"cannot run {MARIADBD} --version: {exc}") from exc
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "nproc": str(nproc),
            "mariadbd": version, "kernel": platform.release(),
            "python": platform.python_version()}


def default_server_user() -> str | None:
    """'mysql' when we run as root (like kewpie), else None (servers run as us)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("mysql")
    except KeyError as exc:
        raise BenchError("running as root but there is no 'mysql' user") from exc
    return "mysql"


# ---------------------------------------------------------------- bare cost
def install_datadir(base: str, user: str | None) -> tuple[str, float]:
    """mariadb-install-db into base/data; return (datadir, seconds it took)."""
    data = os.path.join(base, "data")
    argv = [INSTALL_DB, "--no-defaults", f"--datadir={data}",
            "--auth-root-authentication-method=normal", "--skip-test-db"]
    if user:
        argv.insert(3, f"--user={user}")
    log = os.path.join(base, "install-db.log")
    start = time.monotonic()
    with open(log, "wb") as out:
        rc = subprocess.run(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                            cwd=base, timeout=300).returncode
    took = time.monotonic() - start
    if rc != 0:
        raise BenchError(f"{' '.join(argv)} failed (exit {rc}):\n{tail_file(log)}")
    return data, took


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM a server we started and wait for it; SIGKILL if it hangs."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


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
        _stop(proc)


def measure_bare(runs: int, base_port: int, user: str | None) -> tuple[Series, float]:
    """The bare cost, runs times (after one discarded warm-up start).

    Returns the series and the seconds mariadb-install-db took once.
    """
    log = get_logger()
    series = Series("bare mariadbd start -> SELECT 1")
    base = tempfile.mkdtemp(prefix="kewpie-bench-bare-", dir="/dev/shm")
    lease = None
    try:
        os.chmod(base, 0o755)
        if user:
            shutil.chown(base, user, user)
        data, install_s = install_datadir(base, user)
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


# ---------------------------------------------------------------- kewpie runs
def clear_bootstrap_cache(workdir: str) -> None:
    """Delete the contents of the workdir's bootstrap cache (following its symlink)."""
    real = os.path.realpath(os.path.join(workdir, "cache", "bootstrap"))
    if not os.path.isdir(real):
        return
    for name in os.listdir(real):
        path = os.path.join(real, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def kewpie_run(suite: str, workdir: str, base_port: int, verbose: bool) -> tuple[float, float]:
    """Run kewpie on one bench suite; return (ms to first '[ pass ]', ms to exit).

    Raises BenchError (with kewpie's last lines) when no test passed or kewpie
    did not exit 0.
    """
    # Launched exactly as a user does: ./kewpie.py (shebang, then its venv re-exec).
    argv = [KEWPIE, f"--suitepath={SUITES_DIR}", f"--suite={suite}",
            f"--workdir={workdir}", f"--base-port={base_port}"]
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
                sys.stdout.write("    | " + line)
            tail = (tail + [line.rstrip("\n")])[-20:]
        rc = proc.wait()
        total = (time.monotonic() - start) * 1000.0
    finally:
        watchdog.cancel()
        if proc.poll() is None:   # interrupted: let kewpie stop its servers
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if rc != 0 or first_pass is None:
        why = f"exit status {rc}" if rc != 0 else "no '[ pass ]' line"
        raise BenchError(f"kewpie {suite}: {why}; last lines:\n" + "\n".join(tail))
    return first_pass, total


def measure_kewpie(config: Config, runs: int, workdir: str, base_port: int,
                   verbose: bool) -> Series:
    """Time one configuration runs times; failed runs are logged and counted."""
    log = get_logger()
    series = Series(config.label)
    for i in range(runs):
        if config.cold:
            clear_bootstrap_cache(workdir)
        try:
            ms, total = kewpie_run(config.suite, workdir, base_port, verbose)
        except BenchError as exc:
            series.errors.append(str(exc))
            log.error(f"{config.label}: run {i + 1}/{runs} failed: {exc}")
            continue
        series.samples_ms.append(ms)
        series.total_ms.append(total)
        log.info(f"{config.label}: run {i + 1}/{runs}: first pass {ms:.0f} ms, exit {total:.0f} ms")
    return series


def remove_workdir(path: str) -> None:
    """Remove a bench workdir and the /dev/shm directories its links point to."""
    if not os.path.isdir(path):
        return
    for name in os.listdir(path):
        entry = os.path.join(path, name)
        if os.path.islink(entry):
            shutil.rmtree(os.path.realpath(entry), ignore_errors=True)
    shutil.rmtree(path, ignore_errors=True)
    shm = Workdir(path).shm_path
    if os.path.isdir(shm):
        shutil.rmtree(shm, ignore_errors=True)


# ---------------------------------------------------------------- report
def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def render_report(info: dict[str, str], runs: int, install_s: float | None,
                  series: list[Series], targets: list[dict[str, object]]) -> str:
    """The final header, table and target lines as text."""
    width = max(len(s.label) for s in series)
    out = [
        "",
        "kewpie startup benchmark",
        f"date:      {info['date']}",
        f"machine:   nproc {info['nproc']}, kernel {info['kernel']}, python {info['python']}",
        f"server:    {info['mariadbd']}",
        f"runs:      {runs} per configuration (bare: after 1 discarded warm-up start)",
    ]
    if install_s is not None:
        out.append(f"bootstrap: mariadb-install-db once took {install_s * 1000:.0f} ms")
    out.append("")
    header = f"{'configuration':<{width}}  {'ok':>5}  {'min ms':>8}  {'median ms':>9}  {'max ms':>8}"
    out += [header, "-" * len(header)]
    for s in series:
        st = s.stats()
        ok = f"{len(s.samples_ms)}/{len(s.samples_ms) + len(s.errors)}"
        out.append(f"{s.label:<{width}}  {ok:>5}  {_fmt(st['min']):>8}  {_fmt(st['median']):>9}  "
                   f"{_fmt(st['max']):>8}")
    out.append("")
    for t in targets:
        value = t["value_ms"]
        shown = "n/a" if value is None else f"{value:.0f} ms"
        out.append(f"{t['name']:<48} {shown:>8}   target < {t['target_ms']:.0f} ms   {t['verdict']}")
    return "\n".join(out)


def judge(name: str, value: float | None, target: float) -> dict[str, object]:
    """A target line: PASS when value < target, MISS otherwise (or when unmeasured)."""
    verdict = "PASS" if value is not None and value < target else "MISS"
    return {"name": name, "value_ms": value, "target_ms": target, "verdict": verdict}


# ---------------------------------------------------------------- main
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(prog="bench/startup.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5, metavar="N",
                   help="runs per configuration (default: 5)")
    p.add_argument("--json", metavar="PATH", help="also write the figures to PATH as JSON")
    p.add_argument("--workdir", metavar="DIR",
                   help="kewpie workdir to use and keep (default: a fresh one under /tmp, "
                        "removed at the end)")
    p.add_argument("--base-port", type=int, default=9500, metavar="PORT",
                   help="where port leases start, for kewpie and the bare server (default: 9500)")
    p.add_argument("--verbose", action="store_true", help="echo kewpie's own output")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the report; return the exit status."""
    args = parse_args(argv)
    log = configure(verbose=False)
    own_workdir = args.workdir is None
    workdir = os.path.abspath(args.workdir) if args.workdir else \
        tempfile.mkdtemp(prefix="kewpie-bench-workdir-", dir="/tmp")
    os.chmod(workdir, 0o755)
    install_s: float | None = None
    results: dict[str, Series] = {}
    try:
        info = machine_info()
        user = default_server_user()
        log.info(f"bench: {args.runs} run(s) per configuration, workdir {workdir}")
        bare, install_s = measure_bare(args.runs, args.base_port, user)
        results["bare"] = bare
        for config in CONFIGS:
            results[config.key] = measure_kewpie(config, args.runs, workdir, args.base_port,
                                                 args.verbose)
    except BenchError as exc:
        log.error(f"the benchmark cannot run: {exc}")
        return 2
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    finally:
        if own_workdir:
            remove_workdir(workdir)

    bare_med = results["bare"].stats()["median"]
    one_warm = results["one_warm"].stats()["median"]
    repl_warm = results["repl_warm"].stats()["median"]
    overhead = None if bare_med is None or one_warm is None else one_warm - bare_med
    targets = [judge("warm 1-server overhead above bare cost", overhead, TARGET_OVERHEAD_MS),
               judge("warm 3-server replication ready", repl_warm, TARGET_REPL_MS)]
    series = [results["bare"], *(results[c.key] for c in CONFIGS)]
    print(render_report(info, args.runs, install_s, series, targets), flush=True)

    if args.json:
        doc = {"machine": info, "runs": args.runs, "install_db_ms": install_s * 1000.0,
               "series": {k: {**asdict(s), **s.stats()} for k, s in results.items()},
               "targets": targets}
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
        log.info(f"figures written to {args.json}")
    failed = [s.label for s in series if not s.ok]
    if failed:
        log.error(f"no successful run for: {', '.join(failed)}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
