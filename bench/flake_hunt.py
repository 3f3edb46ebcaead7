#!/usr/bin/env python3
"""The flake hunt: run chosen tests many times, under a CPU load like CI's, and keep
the evidence of every failure.

Targets are pytest node ids or files (``tests/integration/test_galera.py``,
``tests/integration/test_signals.py::test_harness_killed_takes_servers_down``)
or kewpie runs (``kewpie:--suite=cluster_partitions`` -- the words after
``kewpie:`` are kewpie's arguments, split on spaces).  Each of ``--runs`` rounds
runs every target once, in the order given.  ``--load K`` starts K busy
processes (a CPU load like a CI machine shared with other jobs) for the rounds
chosen by ``--loaded-runs M`` (default: all of them; M of N spreads them evenly,
so ``--runs 10 --loaded-runs 5`` loads every other round); the hunt starts and
stops them itself, by pid.

Every target run gets a folder ``run-<round>-<target>/`` in the hunt's
directory (``--out``, by default ``bench/results/flake-hunt/<time>/``): its
output (``output.txt``), its JUnit XML, and, when it failed, its evidence: for
pytest the kewpie workdirs' ``failed/`` and logs of each failed test
(``evidence/<test>/``, copied by tests/conftest.py) and pytest's temporary
directories (``tmp/``); for kewpie the run's ``failed/<run>/`` folder and
``kewpie.log``.  A run that passed keeps only its output and JUnit file.
Nothing is ever removed by a later round or a later hunt.  ``results.jsonl``
holds one line per test and round.

At the end it prints a failure rate per test (and how many failures were
under load), then each distinct failure (the test and the first line of its
message) with the rounds it happened in.  Exit status: 0 when nothing failed,
1 when something did, 2 on bad usage.

Usage::

    scripts/flake-hunt --runs 10 --load 2 --loaded-runs 5 \\
        tests/integration/test_galera.py tests/integration/test_signals.py
    scripts/flake-hunt --runs 6 kewpie:--suite=cluster_partitions,cluster_isolation
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Iterator, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
KEWPIE = os.path.join(ROOT, "kewpie.py")
KEWPIE_PREFIX = "kewpie:"
RUN_TIMEOUT = 3600.0  # seconds one target run may take
STOP_WAIT = 10.0


@dataclass
class TestResult:
    """One test's outcome in one round."""

    test: str
    outcome: str  # passed, failed, error, skipped
    message: str = ""
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """failed or error."""
        return self.outcome in ("failed", "error")


@dataclass
class TargetRun:
    """One run of one target: its round, load, folder, exit status and tests."""

    round: int
    target: str
    loaded: bool
    folder: str
    returncode: int
    seconds: float
    tests: list[TestResult] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """A test failed, or the run itself did (no test reported, bad exit status)."""
        return any(t.failed for t in self.tests) or (self.returncode not in (0, 5)
                                                     and not self.tests)


# ---------------------------------------------------------------- plan
def loaded_rounds(runs: int, loaded: int) -> set[int]:
    """Which rounds (1-based) run under load: ``loaded`` of ``runs``, spread evenly
    (5 of 10: rounds 2, 4, 6, 8, 10)."""
    loaded = max(0, min(loaded, runs))
    return {i for i in range(1, runs + 1) if (i * loaded) // runs > ((i - 1) * loaded) // runs}


def slug(target: str, limit: int = 60) -> str:
    """A folder-name form of a target."""
    text = target[len(KEWPIE_PREFIX):] if target.startswith(KEWPIE_PREFIX) else target
    text = text.replace("tests/integration/", "").replace(".py::", "-").replace(".py", "")
    text = re.sub(r"[^\w.+-]+", "-", text).strip("-.")
    return (("kewpie-" if target.startswith(KEWPIE_PREFIX) else "") + text)[:limit] or "target"


def first_line(message: str) -> str:
    """The first non-empty line of a failure message (whitespace squeezed, cut)."""
    for line in message.splitlines():
        line = " ".join(line.split())
        if line:
            return line[:200]
    return "(no message)"


# ---------------------------------------------------------------- results
def parse_junit(path: str) -> list[TestResult]:
    """The test cases of a JUnit XML file (pytest's or kewpie's)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return []
    results = []
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        test = _test_name(classname, name, case.get("file"))
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                message = found.get("message") or (found.text or "")
                break
        results.append(TestResult(test, outcome, first_line(message) if message else "",
                                  float(case.get("time") or 0)))
    return results


def _test_name(classname: str, name: str, file: str | None) -> str:
    """pytest's ``tests.integration.test_x`` + ``test_y[p]`` -> a node id; kewpie's
    names as they are."""
    if classname.startswith("tests."):
        parts = classname.split(".")
        for cut in range(len(parts), 0, -1):
            path = os.path.join(*parts[:cut]) + ".py"
            if os.path.exists(os.path.join(ROOT, path)):
                return "::".join([path, *parts[cut:], name])
    return f"{classname}.{name}" if classname and not name.startswith(classname) else name


@dataclass
class Tally:
    """One test's runs and failures across the hunt."""

    runs: int = 0
    failures: int = 0
    loaded_failures: int = 0
    skipped: int = 0


def summarize(runs: Sequence[TargetRun]) -> tuple[dict[str, Tally], dict[tuple[str, str], list[str]]]:
    """Per test: its tally; per distinct failure (test, first line): the rounds it
    happened in (``3`` or ``3L`` under load)."""
    tallies: dict[str, Tally] = {}
    distinct: dict[tuple[str, str], list[str]] = {}
    for run in runs:
        tests = run.tests or [TestResult(run.target, "error", f"the run reported no test "
                                                              f"(exit {run.returncode})")]
        for result in tests:
            tally = tallies.setdefault(result.test, Tally())
            if result.outcome == "skipped":
                tally.skipped += 1
                continue
            tally.runs += 1
            if result.failed:
                tally.failures += 1
                tally.loaded_failures += run.loaded
                distinct.setdefault((result.test, result.message or "(no message)"), []).append(
                    f"{run.round}{'L' if run.loaded else ''}")
    return tallies, distinct


def report(runs: Sequence[TargetRun], rounds: int, load: int, loaded: set[int], out: str,
           seconds: float) -> str:
    """The hunt's printed summary."""
    tallies, distinct = summarize(runs)
    load_text = f"{len(loaded)} under a {load}-process CPU load" if load and loaded else "no load"
    lines = [f"flake hunt: {rounds} round(s) ({load_text}), {len({r.target for r in runs})} "
             f"target(s), {seconds / 60:.0f} min; evidence in {out}"]
    width = max([len(t) for t in tallies] + [4])
    lines.append(f"{'test'.ljust(width)}  runs  failed  loaded  rate")
    for test in sorted(tallies):
        t = tallies[test]
        rate = f"{100.0 * t.failures / t.runs:.0f}%" if t.runs else "-"
        skipped = f"  ({t.skipped} skipped)" if t.skipped else ""
        lines.append(f"{test.ljust(width)}  {t.runs:4d}  {t.failures:6d}  {t.loaded_failures:6d}"
                     f"  {rate:>4}{skipped}")
    total_runs = sum(t.runs for t in tallies.values())
    total_failed = sum(t.failures for t in tallies.values())
    if distinct:
        lines.append("distinct failures (test: first line [rounds; L = under load]):")
        for (test, message), where in sorted(distinct.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"  {test}: {message} [{', '.join(where)}]")
    lines.append(f"TOTAL: {total_failed} failure(s) in {total_runs} test runs")
    return "\n".join(lines)


# ---------------------------------------------------------------- running
@contextmanager
def cpu_load(count: int) -> Iterator[list[int]]:
    """count busy processes (pids yielded) for the duration of the block; stopped by pid."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                              stdin=subprocess.DEVNULL, start_new_session=True)
             for _ in range(count)]
    try:
        yield [p.pid for p in procs]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(STOP_WAIT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def command(target: str, folder: str, kewpie_workdir: str) -> list[str]:
    """The command line of one target run, writing its JUnit XML into folder."""
    junit = os.path.join(folder, "junit.xml")
    if target.startswith(KEWPIE_PREFIX):
        return [PYTHON, KEWPIE, f"--workdir={kewpie_workdir}", *shlex.split(target[len(KEWPIE_PREFIX):]),
                "--force", f"--junit-xml={junit}"]
    return [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
            f"--basetemp={os.path.join(folder, 'tmp')}", f"--junitxml={junit}",
            "-o", "junit_family=xunit1", target]


def run_target(target: str, round_no: int, loaded: bool, out: str, timeout: float) -> TargetRun:
    """Run target once; keep its output, JUnit file and (when it failed) its evidence."""
    folder = os.path.join(out, f"run-{round_no:03d}-{slug(target)}")
    os.makedirs(folder, exist_ok=True)
    kewpie_workdir = os.path.join(out, "kewpie-workdirs", slug(target))
    env = dict(os.environ, KEWPIE_TEST_EVIDENCE=os.path.join(folder, "evidence"))
    env.pop("CI", None)  # the evidence goes to the hunt's folder, not to the clone's workdir
    started = time.monotonic()
    with open(os.path.join(folder, "output.txt"), "w") as output:
        proc = subprocess.Popen(command(target, folder, kewpie_workdir), cwd=ROOT, env=env,
                                stdout=output, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            returncode = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)  # the group this hunt started
            try:
                proc.wait(STOP_WAIT * 6)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            output.write(f"\nflake-hunt: no result within {timeout:.0f}s: stopped\n")
            returncode = -1
    run = TargetRun(round_no, target, loaded, folder, returncode, time.monotonic() - started,
                    parse_junit(os.path.join(folder, "junit.xml")))
    if target.startswith(KEWPIE_PREFIX) and run.failed:
        _keep_kewpie_evidence(kewpie_workdir, folder)
    if not run.failed:
        shutil.rmtree(os.path.join(folder, "tmp"), ignore_errors=True)
        shutil.rmtree(os.path.join(folder, "evidence"), ignore_errors=True)
    return run


def _keep_kewpie_evidence(workdir: str, folder: str) -> None:
    """Copy a failed kewpie run's evidence folder and log into the hunt's folder."""
    latest = os.path.join(workdir, "failed", "latest")
    if os.path.isdir(latest):
        shutil.copytree(os.path.realpath(latest), os.path.join(folder, "failed"), symlinks=True,
                        dirs_exist_ok=True)
    log = os.path.join(workdir, "kewpie.log")
    if os.path.exists(log):
        shutil.copy2(log, folder)


def load_average() -> str:
    """The 1-minute load average now."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def hunt(targets: Sequence[str], rounds: int, load: int, loaded: set[int], out: str,
         timeout: float) -> list[TargetRun]:
    """Run every target once per round; return every run (results.jsonl as they go)."""
    runs: list[TargetRun] = []
    with open(os.path.join(out, "results.jsonl"), "a") as results:
        for round_no in range(1, rounds + 1):
            under = bool(load) and round_no in loaded
            for target in targets:
                with cpu_load(load if under else 0):
                    run = run_target(target, round_no, under, out, timeout)
                runs.append(run)
                for test in run.tests:
                    results.write(json.dumps({"round": round_no, "loaded": under,
                                              "target": target, **asdict(test)}) + "\n")
                results.flush()
                failed = [t for t in run.tests if t.failed]
                state = (f"{len(failed)} failed: {failed[0].test}: {failed[0].message}"
                         if failed else "FAILED (no test reported)" if run.failed else "ok")
                print(f"round {round_no}/{rounds}{' [load]' if under else ''} {target}: "
                      f"{len(run.tests)} tests, {state} ({run.seconds:.0f}s, load average "
                      f"{load_average()})", flush=True)
                if run.failed:
                    print(f"  evidence: {run.folder}", flush=True)
    return runs


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(prog="scripts/flake-hunt", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("targets", nargs="+", metavar="TARGET",
                   help="a pytest node id or file, or kewpie:ARGS (a kewpie run)")
    p.add_argument("--runs", type=int, default=10, help="rounds (each runs every target once)")
    p.add_argument("--load", type=int, default=0, metavar="K",
                   help="busy processes started for the loaded rounds (CI-like CPU load)")
    p.add_argument("--loaded-runs", type=int, default=None, metavar="M",
                   help="how many rounds run under --load (spread evenly; default: all)")
    p.add_argument("--out", default="", help="the hunt's folder (default: "
                                              "bench/results/flake-hunt/<time>/)")
    p.add_argument("--timeout", type=float, default=RUN_TIMEOUT,
                   help="seconds one target run may take before it is stopped")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the hunt and print its summary; 0 when nothing failed."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    for target in args.targets:
        path = target.split("::")[0]
        if not target.startswith(KEWPIE_PREFIX) and not os.path.exists(os.path.join(ROOT, path)):
            print(f"flake-hunt: ERROR no such test file: {path}", file=sys.stderr)
            return 2
    if args.runs < 1 or args.load < 0:
        print("flake-hunt: ERROR --runs must be at least 1 and --load at least 0", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out or os.path.join(
        ROOT, "bench", "results", "flake-hunt", time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(out, exist_ok=True)
    loaded = loaded_rounds(args.runs, args.runs if args.loaded_runs is None else args.loaded_runs)
    started = time.monotonic()
    print(f"flake hunt: {args.runs} round(s) of {len(args.targets)} target(s), rounds under a "
          f"{args.load}-process load: {sorted(loaded) if args.load else 'none'}; folder {out}; "
          f"{os.cpu_count()} CPUs, load average {load_average()}", flush=True)
    runs = hunt(args.targets, args.runs, args.load, loaded if args.load else set(), out,
                args.timeout)
    text = report(runs, args.runs, args.load, loaded if args.load else set(), out,
                  time.monotonic() - started)
    print(text, flush=True)
    with open(os.path.join(out, "summary.txt"), "w") as fh:
        fh.write(text + "\n")
    return 1 if any(r.failed for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
