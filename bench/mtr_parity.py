#!/usr/bin/env python3
"""Parity and speed: one list of mysql-test cases under mysql-test-run and under kewpie.

Runs the same tests (a suite such as ``main``, or the names in a file) twice,
with the same parallelism: under MariaDB's own ``mysql-test-run.pl`` (mtr,
``--force --max-test-fail=0``, its vardir in the bench's directory) and under
``kewpie.py --mode=mtr --force`` (its workdir in the bench's directory, its
verdicts from ``--junit-xml``, or from its progress lines when it wrote no JUnit
file).  mtr runs first, then kewpie; each wall time is measured from launch to
exit of the tool's process.  ``--mtr-user=mysql`` runs mtr as that user (mtr's
galera tests fail as root: rsync SST).

It prints, per tool: tests run (passed + failed), passed, failed, skipped and
disabled; the wall times and their ratio (kewpie / mtr); how many of the tests
mtr passes kewpie passes too; every test whose verdict differs, with both
reasons; and the targets of issue 15 as PASS/MISS (``main``: parity >= 98%,
wall <= 0.8x mtr's; ``mariabackup``, ``rpl``: parity >= 90%).  The load average
before and after each run is shown: the machine may be shared.

Verdicts: ``pass`` (a flaky pass counts as a pass), ``fail`` (a timeout too),
``skipped``, ``disabled`` (mtr's ``[ disabled ]``; kewpie's skips whose reason
says disabled), ``absent`` (the tool did not report the test).  A test's name
is ``suite.test`` plus ``,combination`` for each combination, in the order the tool
printed them (mtr's ``main.t 'a,b'`` is ``main.t,a,b``): never re-ordered, so the
names match only when kewpie names combinations in mtr's order.

For iteration on one side: ``--mtr-only`` or ``--kewpie-only`` run one tool;
``--save-dir DIR`` writes each side's per-test verdicts, reasons and wall time
(``<label>.mtr.json``, ``<label>.kewpie.json``); ``--mtr-results FILE`` (or
``--kewpie-results FILE``) reads such a file instead of running that tool (the
report says so: figures for a note must come from one run doing both).

``--sample N`` takes a stratified sample of mtr's default suite list (what
``mysql-test-run.pl`` runs with no suite named: its DEFAULT_SUITES and the plugin
suites that say so): mtr's own list of the cases (``--dry-run``) grouped by suite,
and in each suite every N-th test (by name, from the first), with all of its
combinations -- the unit is the test, as mtr cannot be given every combination it
computes by name (binlog's ``mix,row``).  Tests the default run leaves out as big
(``Test needs --big-test``, from ``kewpie.py --mode=mtr --list``) are not sampled:
named, both tools would run them.  Both tools then run the named tests; mtr runs
as the server user ``mysql`` (as kewpie's servers and mariadb-test do; root's mtr
skips the tests that source ``include/not_as_root.inc``) unless ``--mtr-user``
says otherwise.  A test kewpie does not list (an overlay suite's) is reported
absent.  The report adds one row per suite.  Target: parity >= 99% and wall <= 0.8x.

Exit status: 0 when every side needed was measured (whatever the parity); 1
when a tool's run produced no verdicts or timed out (its output tail is
shown); 2 when mtr is missing or usage is bad.

Usage::

    bench/mtr_parity.py --suite=main [--parallel 2] [--keep] [--save-dir DIR]
    bench/mtr_parity.py --tests-file names.txt [--suite=main]
    bench/mtr_parity.py --suite=main --mtr-results main.mtr.json
    bench/mtr_parity.py --tests-file galera.txt --mtr-user=mysql
    bench/mtr_parity.py --sample 10 --parallel 2 [--save-dir DIR]

Everything lives in one temporary directory, removed at the end unless
``--keep`` (kept: mtr's stdout and vardir, kewpie's output, JUnit file and
workdir).  Only the standard library is used.
"""
from __future__ import annotations

import argparse
import json
import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from typing import Iterable, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtr_overhead import (  # noqa: E402
    KEWPIE, MTR_DIR, MTR_PACKAGE, MTR_SCRIPT, ROOT, BenchError,
    interrupt, python_for_kewpie, remove_kewpie_shm_tree, stop_group, stop_leftovers)
from lib.mtr.reference import lease_reference_ports, reference_mtr_env  # noqa: E402
from lib.platform.ports import default_lock_dir  # noqa: E402

RUN_TIMEOUT = 4 * 3600.0   # seconds one tool's run of a whole suite may take
TAIL_LINES = 25            # lines of a failed run's output shown
OUTLIER_MS = 5000.0   # a test's own time differing this much between the tools is listed
REASON_CHARS = 160         # a reason's length in the differences table
COMMAND_ARGS = 24          # a command's arguments shown (the names of a sample are many)
DETAIL_CHARS = 4000        # a failure text's length kept in the saved JSON
DEFAULT_SUITE = "main"
PASS, FAIL, SKIPPED, DISABLED, ABSENT = "pass", "fail", "skipped", "disabled", "absent"
# Targets of issue 15: suite -> (least parity, largest kewpie/mtr wall ratio or None).
TARGETS: dict[str, tuple[float, float | None]] = {
    "main": (0.98, 0.8), "mariabackup": (0.90, None), "rpl": (0.90, None),
    "sample": (0.99, 0.8),   # issue 34: --sample N of mtr's default list
    # issue 34: the Galera suites whole (mtr as the user it needs: --mtr-user=mysql)
    **{suite: (0.98, 0.8) for suite in ("galera", "galera_3nodes", "galera_sr",
                                        "galera_3nodes_sr", "wsrep")}}
SAMPLE_USER = "mysql"      # mtr's user for --sample (kewpie's server user)
BIG_TEST = "Test needs --big-test"

# mtr's per-test line: "main.alias 'innodb'   w2 [ pass ]     23" (worker and combination optional)
MTR_LINE = re.compile(r"^(?P<name>[\w./#-]+)(?: '(?P<comb>[^']*)')?\s+(?:w\d+\s+)?"
                      r"\[ (?P<tag>(?:retry-)?(?:pass|fail|exp-fail)|skipped|disabled) \]"
                      r"\s*(?P<rest>.*)$")
# kewpie's progress line: "20261123-230322 INFO main.alias   bot1  [ pass ]   1220"
KEWPIE_LINE = re.compile(r"^\d{8}-\d{6} \w+ (?P<name>\S+)\s+bot\d+\s+\[ (?P<tag>\w+) \]\s+\d+\s*$")
KEWPIE_LOG = re.compile(r"^\d{8}-\d{6} \w+ ?")
KEWPIE_BLOCK_END = re.compile(r"^\d{8}-\d{6} \w+ (?:=====|Test execution)")
MTR_BLOCK_END = re.compile(r"^(?:- saving |Retrying test |-{20,}|The servers were restarted"
                           r"|Completed: |Failing test\(s\)|Spent [\d.]+ of )")
REASON_HINTS = (
    re.compile(r"^mysqltest: .*"),
    re.compile(r"^(?:Failed to start|Could not|Server \S+ failed|.*timeout after).*", re.I),
    re.compile(r"^.*(?:Found warnings|check-testcase|result content mismatch|"
               r"Result length mismatch|Test ended|died|crash|core).*", re.I),
)


@dataclass
class Verdict:
    """One test's outcome under one tool: pass/fail/skipped/disabled, why, and how long."""

    verdict: str
    reason: str = ""
    time_ms: float | None = None
    detail: str = ""


@dataclass
class ToolRun:
    """One tool's run of the test list: its command, wall time, load, and per-test verdicts."""

    tool: str
    command: list[str]
    cwd: str
    wall: float
    exit_status: int
    load_before: str
    load_after: str
    started: str
    tests: dict[str, Verdict] = field(default_factory=dict)
    source: str = "this run"

    def count(self, verdict: str) -> int:
        """How many tests got this verdict."""
        return sum(1 for v in self.tests.values() if v.verdict == verdict)

    def to_json(self) -> dict[str, object]:
        """Everything, for --save-dir."""
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, object], source: str) -> "ToolRun":
        """The run saved by to_json (source says where it was read from)."""
        tests = {name: Verdict(**v)  # type: ignore[arg-type]
                 for name, v in dict(data.pop("tests")).items()}  # type: ignore[call-overload]
        data.pop("source", None)
        return ToolRun(tests=tests, source=source, **data)  # type: ignore[arg-type]


# ---------------------------------------------------------------- names
def test_key(suite: str, test: str, combinations: Iterable[str] = ()) -> str:
    """``suite.test`` plus ``,comb`` per combination, in the order the tool printed them:
    the key both tools share.  The combinations are not sorted here: mtr prints them
    sorted (My::Test::fullname), and a kewpie that names them in another order shows up
    as tests each tool reports and the other does not."""
    combs = [c.strip() for c in combinations if c.strip()]
    return f"{suite}.{test}" + "".join(f",{c}" for c in combs)


def normalize_name(name: str) -> str:
    """A name as read from mtr (``main.t 'a,b'``) or kewpie (``main.t,a,b``) as a test_key:
    mtr's quoted list becomes ``,``-separated, in its order."""
    name = name.strip()
    match = re.fullmatch(r"(\S+?)(?:\s+'([^']*)')?", name)
    base, quoted = (match.group(1), match.group(2)) if match else (name, None)
    parts = base.split(",")
    combs = parts[1:] + (quoted.split(",") if quoted else [])
    suite, _, test = parts[0].partition(".")
    return test_key(suite, test, combs)


def read_tests_file(path: str, suite: str) -> list[str]:
    """Test names from a file, one per line (``#`` comments at a line's start or after a
    blank, blank lines ignored); a name
    without a suite gets suite."""
    names = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = re.sub(r"(?:^|\s)#.*", "", line).strip()  # galera.galera#500 is a name
            if line:
                names.append(line if "." in line.split(",")[0] else f"{suite}.{line}")
    if not names:
        raise BenchError(f"no test names in {path}")
    return names


# ---------------------------------------------------------------- the sample
def parse_dry_run(out: str) -> tuple[list[str], list[str]]:
    """(the suites mtr uses, its cases as test_keys) from ``mysql-test-run.pl --dry-run``."""
    suites: list[str] = []
    cases: list[str] = []
    collecting = False
    for line in out.splitlines():
        if line.startswith("Using suites: "):
            suites = [name for name in line[len("Using suites: "):].strip().split(",") if name]
        elif line.startswith("Collecting tests"):
            collecting = True
        elif collecting and re.fullmatch(r"[\w./#+-]+\.[\w#+-]+(?: '[^']*')?", line.strip()):
            cases.append(normalize_name(line))
    return suites, cases


def mtr_default_cases(base: str, user: str | None) -> tuple[list[str], list[str]]:
    """mtr's default suite list and its cases (``--dry-run``, as user)."""
    vardir = os.path.join(base, "dry_var")
    make_vardir(vardir, user)
    argv = [MTR_SCRIPT, "--dry-run", f"--vardir={vardir}"]
    argv = ["runuser", "-u", user, "--", *argv] if user else argv
    _, status, out = run_reference(base, user, 1, "mtr --dry-run", argv, "dry_run.out")
    suites, cases = parse_dry_run(out)
    if not cases:
        raise BenchError(f"mtr --dry-run: exit status {status}, no case listed; last lines:\n"
                         f"{tail(out)}")
    return suites, cases


def kewpie_listing(base: str) -> dict[str, str]:
    """kewpie's default list (``--mode=mtr --list``): test_key -> why it is skipped ('')."""
    argv = [python_for_kewpie(), KEWPIE, "--mode=mtr", "--list",
            f"--workdir={os.path.join(base, 'list_workdir')}"]
    _, status, out = run_tool("kewpie --list", argv, ROOT, os.path.join(base, "kewpie_list.out"))
    listed: dict[str, str] = {}
    for line in out.splitlines():
        name, _, reason = line.partition("  # skipped: ")
        if re.fullmatch(r"[\w./#+-]+\.[\w#+,.-]+", name.strip()):
            listed[normalize_name(name)] = reason.strip()
    if not listed:
        raise BenchError(f"kewpie --list: exit status {status}, no case listed; last lines:\n"
                         f"{tail(out)}")
    return listed


@dataclass
class Sample:
    """The tests of a stratified sample and what was left out of it."""

    names: list[str]                       # suite.test, as both tools take them
    suites: dict[str, list[str]]           # suite -> its sampled tests
    big: int = 0                           # tests left out as big (default run skips them)
    unlisted: list[str] = field(default_factory=list)   # sampled tests kewpie does not list
    total_tests: int = 0


def suite_of(key: str) -> str:
    """The suite of a test_key (suite names may hold '/', never '.')."""
    return key.split(".", 1)[0]


def stratified_sample(mtr_cases: Sequence[str], kewpie: dict[str, str], every: int) -> Sample:
    """Every N-th test (by name, from the first) of each suite of mtr's list, big tests
    left out; tests kewpie does not list are noted (they cannot be named to it)."""
    tests: dict[str, set[str]] = {}
    for key in mtr_cases:
        tests.setdefault(suite_of(key), set()).add(base_name(key))
    big_tests = {base_name(k) for k, reason in kewpie.items() if reason == BIG_TEST}
    kewpie_tests = {base_name(k) for k in kewpie}
    sample = Sample([], {})
    for suite in sorted(tests):
        names = sorted(tests[suite])
        sample.total_tests += len(names)
        runnable = [n for n in names if n not in big_tests]
        sample.big += len(names) - len(runnable)
        chosen = runnable[::every]
        if chosen:
            sample.suites[suite] = chosen
        for name in chosen:
            (sample.names if name in kewpie_tests else sample.unlisted).append(name)
    return sample


def run_reference(base: str, user: str | None, parallel: int, tool: str, argv: Sequence[str],
                  log: str) -> tuple[float, int, str]:
    """run_tool for mtr: on a span of kewpie-leased ports, its temporary files (the SST
    scripts' mktemp) under base (lib/mtr/reference.py), never /tmp's top level."""
    tmpdir = os.path.join(base, "mtr_tmp")
    make_vardir(tmpdir, user)
    with lease_reference_ports(default_lock_dir(), parallel) as span:
        return run_tool(tool, argv, MTR_DIR, os.path.join(base, log),
                        env=reference_mtr_env(span, tmpdir))


def make_vardir(path: str, user: str | None) -> None:
    """A directory user may write (mtr's vardir)."""
    os.makedirs(path, mode=0o755, exist_ok=True)
    if user:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def suite_rows(mtr: ToolRun, kewpie: ToolRun) -> list[str]:
    """Per suite: cases, mtr's passes, kewpie's passes of those, differences."""
    suites = sorted({suite_of(n) for n in mtr.tests} | {suite_of(n) for n in kewpie.tests})
    rows = ["", f"  {'suite':<24} {'cases':>6} {'mtr pass':>9} {'kewpie of those':>16}"
                f" {'differ':>7}"]
    differ = {name for name, _, _ in differences(mtr, kewpie)}
    for suite in suites:
        cases = [n for n in set(mtr.tests) | set(kewpie.tests) if suite_of(n) == suite]
        passed = [n for n in cases if n in mtr.tests and mtr.tests[n].verdict == PASS]
        both = [n for n in passed if n in kewpie.tests and kewpie.tests[n].verdict == PASS]
        rows.append(f"  {suite:<24} {len(cases):>6} {len(passed):>9} {len(both):>16}"
                    f" {sum(1 for n in cases if n in differ):>7}")
    return rows


# ---------------------------------------------------------------- reasons
def short_reason(text: str) -> str:
    """The line of a failure text that says most: mysqltest's error (with the included
    file's ``At line``), a start failure, a warnings or check-testcase report, else a
    result diff's first removed and added lines, else the first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("mysqltest: In included file"):
            at = next((x for x in lines[i + 1:i + 4] if x.startswith("At line")), "")
            return f"{line} {at}"[:REASON_CHARS]
    if any(line.startswith(("+++ ", "@@ ")) for line in lines):
        removed = next((x for x in lines if x.startswith("-") and not x.startswith("---")), "")
        added = next((x for x in lines if x.startswith("+") and not x.startswith("+++")), "")
        return f"result differs: {removed} / {added}"[:REASON_CHARS]
    for hint in REASON_HINTS:
        for line in lines:
            if hint.match(line) and not line.startswith("Test ended"):
                return line[:REASON_CHARS]
    return lines[0][:REASON_CHARS] if lines else ""


# ---------------------------------------------------------------- mtr
def mtr_command(vardir: str, suite: str, names: Sequence[str], parallel: int,
                user: str | None = None, big_test: bool = False) -> list[str]:
    """argv of the mtr run: every named test, or the whole suite when names is empty; run as
    user (through runuser) when given -- mtr's galera suites fail as root (rsync SST)."""
    argv = [MTR_SCRIPT, "--force", "--max-test-fail=0", f"--parallel={parallel}",
            f"--vardir={vardir}", *(["--big-test"] if big_test else [])]
    argv += list(names) if names else ([f"--suite={suite}"] if suite else [])
    return ["runuser", "-u", user, "--", *argv] if user else argv


def parse_mtr_output(out: str) -> dict[str, Verdict]:
    """Per-test verdicts from mtr's stdout: its result lines and, after a ``[ fail ]``, the
    report block up to the next result line (the failure's reason)."""
    tests: dict[str, Verdict] = {}
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        match = MTR_LINE.match(lines[i])
        i += 1
        if not match:
            continue
        key = normalize_name(match.group("name") + (f" '{match.group('comb')}'"
                                                    if match.group("comb") else ""))
        tag, rest = match.group("tag"), match.group("rest").strip()
        if tag.endswith("pass"):
            ms = float(rest) if re.fullmatch(r"\d+", rest) else None
            tests[key] = Verdict(PASS, "retried" if tag.startswith("retry") else "", ms)
        elif tag in (SKIPPED, DISABLED):
            tests[key] = Verdict(tag, rest)
        else:
            block = [rest] if rest else []
            while i < len(lines) and not MTR_LINE.match(lines[i]) \
                    and not MTR_BLOCK_END.match(lines[i]):
                block.append(lines[i])
                i += 1
            text = "\n".join(block).strip()
            if tag.startswith("retry") and key in tests:   # a later attempt decides
                continue
            tests[key] = Verdict(FAIL, short_reason(text), None, text[:DETAIL_CHARS])
    return tests


# ---------------------------------------------------------------- kewpie
def kewpie_command(workdir: str, junit: str, suite: str, names: Sequence[str],
                   parallel: int, big_test: bool = False) -> list[str]:
    """argv of the kewpie run (mtr mode, --force, the same parallelism, JUnit to junit)."""
    return [python_for_kewpie(), KEWPIE, "--mode=mtr", *([f"--suite={suite}"] if suite else []),
            "--force", f"--parallel={parallel}", f"--workdir={workdir}", f"--junit-xml={junit}",
            *(["--big-test"] if big_test else []), *names]


def parse_junit(path: str) -> dict[str, Verdict]:
    """Per-test verdicts from kewpie's JUnit file (classname = suite, name = test[,comb])."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise BenchError(f"cannot read kewpie's JUnit file {path}: {exc}") from exc
    tests: dict[str, Verdict] = {}
    for case in root.iter("testcase"):
        key = normalize_name(f"{case.get('classname', '')}.{case.get('name', '')}")
        ms = float(case.get("time") or 0) * 1000.0
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            text = (failure.text or "").strip() or failure.get("message", "")
            reason = short_reason(text) or failure.get("message", "") or "failed"
            tests[key] = Verdict(FAIL, reason, ms, text[:DETAIL_CHARS])
        elif skipped is not None:
            message = skipped.get("message", "") or (skipped.text or "").strip()
            kind = DISABLED if message.lower().startswith("disabled") else SKIPPED
            tests[key] = Verdict(kind, message, ms)
        else:
            flaky = len(case.findall("flakyFailure"))
            tests[key] = Verdict(PASS, f"flaky ({flaky} failed attempts)" if flaky else "", ms)
    return tests


def parse_kewpie_output(out: str) -> dict[str, Verdict]:
    """Per-test verdicts from kewpie's progress lines, for a run that wrote no JUnit file
    (the lines after a test's row, up to the next row, are its message)."""
    tests: dict[str, Verdict] = {}
    current: tuple[str, str, list[str]] | None = None

    def close() -> None:
        """Store the test being read."""
        if current is None:
            return
        key, tag, text_lines = current
        text = "\n".join(text_lines).strip()
        if tag == PASS or tag == "flaky":
            tests[key] = Verdict(PASS, "flaky" if tag == "flaky" else "")
        elif tag in (SKIPPED, DISABLED):
            tests[key] = Verdict(DISABLED if text.lower().startswith("disabled") else SKIPPED,
                                 text.splitlines()[0] if text else "")
        else:
            tests[key] = Verdict(FAIL, short_reason(text) or tag, None, text[:DETAIL_CHARS])

    for line in out.splitlines():
        match = KEWPIE_LINE.match(line)
        if match:
            close()
            current = (normalize_name(match.group("name")), match.group("tag"), [])
        elif KEWPIE_BLOCK_END.match(line):
            close()
            current = None
        elif current is not None:
            current[2].append(KEWPIE_LOG.sub("", line, count=1))
    close()
    return tests


# ---------------------------------------------------------------- runs
def load_average() -> str:
    """The 1, 5 and 15 minute load averages."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def run_tool(tool: str, argv: Sequence[str], cwd: str, log: str,
             env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Run argv to its end (in env when given), its output to log; (wall seconds, exit
    status, output).

    Raises BenchError on a timeout (the run is stopped first).
    """
    start = time.monotonic()
    with open(log, "w+", encoding="utf-8", errors="replace") as out:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        try:
            proc.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            raise BenchError(f"{tool}: still running after {RUN_TIMEOUT:.0f} s; stopped")
        except BaseException:   # Ctrl-C: the run must not outlive the bench
            stop_group(proc)
            raise
        wall = time.monotonic() - start
        out.seek(0)
        text = out.read()
    return wall, proc.returncode, text


def tail(text: str) -> str:
    """The last lines of an output, indented."""
    return "\n".join("    | " + line for line in text.splitlines()[-TAIL_LINES:])


def run_mtr(base: str, suite: str, names: Sequence[str], parallel: int,
            user: str | None = None, big_test: bool = False) -> ToolRun:
    """mtr's run of the list (as user when given: its vardir is made theirs); raises
    BenchError when it reports no test at all."""
    vardir = os.path.join(base, "mtr_var")
    make_vardir(vardir, user)
    argv = mtr_command(vardir, suite, names, parallel, user, big_test)
    started, before = time.strftime("%Y-%m-%d %H:%M:%S %Z"), load_average()
    wall, status, out = run_reference(base, user, parallel, "mtr", argv, "mtr.out")
    tests = parse_mtr_output(out)
    if not tests:
        raise BenchError(f"mtr: exit status {status}, no test reported; last lines:\n{tail(out)}")
    return ToolRun("mtr", argv, MTR_DIR, wall, status, before, load_average(), started, tests)


def run_kewpie(base: str, suite: str, names: Sequence[str], parallel: int,
               big_test: bool = False) -> ToolRun:
    """kewpie's run of the list; raises BenchError when it wrote no JUnit file."""
    junit = os.path.join(base, "kewpie.xml")
    workdir = os.path.join(base, "kewpie_workdir")
    os.makedirs(workdir, mode=0o755, exist_ok=True)
    argv = kewpie_command(workdir, junit, suite, names, parallel, big_test)
    started, before = time.strftime("%Y-%m-%d %H:%M:%S %Z"), load_average()
    wall, status, out = run_tool("kewpie", argv, ROOT, os.path.join(base, "kewpie.out"))
    if os.path.exists(junit):
        return ToolRun("kewpie", argv, ROOT, wall, status, before, load_average(), started,
                       parse_junit(junit))
    tests = parse_kewpie_output(out)
    if not tests:
        raise BenchError(f"kewpie: exit status {status}, no JUnit file; last lines:\n{tail(out)}")
    print(f"mtr_parity: kewpie wrote no JUnit file (exit status {status}); verdicts read from its"
          f" output; last lines:\n{tail(out)}", file=sys.stderr)
    return ToolRun("kewpie", argv, ROOT, wall, status, before, load_average(), started, tests,
                   source="this run (no JUnit file: verdicts from kewpie's output)")


def load_saved(path: str) -> ToolRun:
    """A side saved by --save-dir."""
    try:
        with open(path, encoding="utf-8") as fh:
            return ToolRun.from_json(json.load(fh), f"saved: {path}")
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise BenchError(f"cannot read saved results {path}: {exc}") from exc


def save(run: ToolRun, save_dir: str, label: str) -> str:
    """Write run as <save_dir>/<label>.<tool>.json; return the path."""
    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, f"{label}.{run.tool}.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(run.to_json(), fh, indent=1, sort_keys=True)
    return path


# ---------------------------------------------------------------- report
def verdict_word(ok: bool) -> str:
    """PASS or MISS."""
    return "PASS" if ok else "MISS"


def cell(v: Verdict | None) -> str:
    """A verdict and its reason, for the differences table."""
    if v is None:
        return ABSENT
    return f"{v.verdict}: {v.reason}" if v.reason else v.verdict


def comparable(verdict: str) -> str:
    """disabled and skipped are the same verdict for the comparison."""
    return SKIPPED if verdict == DISABLED else verdict


def base_name(name: str) -> str:
    """``suite.test`` without its combinations."""
    return name.split(",", 1)[0]


def lookup(run: ToolRun, name: str) -> Verdict | None:
    """The run's verdict for name; else, for a test the run reported without (or with other)
    combinations -- mtr lists a skipped test once per combination, kewpie once -- the verdict
    all of that test's entries share, if they share one."""
    if name in run.tests:
        return run.tests[name]
    base = base_name(name)
    same = [v for n, v in run.tests.items() if base_name(n) == base]
    if same and len({comparable(v.verdict) for v in same}) == 1 and same[0].verdict != PASS:
        return same[0]
    return None


def differences(mtr: ToolRun, kewpie: ToolRun) -> list[tuple[str, Verdict | None, Verdict | None]]:
    """Tests whose verdicts differ (a test one tool did not report counts), mtr passes first."""
    rows = []
    for name in sorted(set(mtr.tests) | set(kewpie.tests)):
        m, k = lookup(mtr, name), lookup(kewpie, name)
        base = base_name(name)
        if (m is None and any(base_name(n) == base for n in mtr.tests)) or \
                (k is None and any(base_name(n) == base for n in kewpie.tests)):
            continue   # one tool listed it per combination: those rows say it
        if m is None or k is None or comparable(m.verdict) != comparable(k.verdict):
            rows.append((name, m, k))
    rows.sort(key=lambda r: (r[1] is None or r[1].verdict != PASS, r[0]))
    return rows


def render_side(run: ToolRun) -> list[str]:
    """The command line and the circumstances of one side."""
    command = run.command if len(run.command) <= COMMAND_ARGS else [
        *run.command[:COMMAND_ARGS], f"... {len(run.command) - COMMAND_ARGS} more"]
    return [f"  {run.tool}: (cd {run.cwd} && {shlex.join(command)})",
            f"    {run.source}; started {run.started}; exit status {run.exit_status};"
            f" load average before {run.load_before}, after {run.load_after}"]


def counts_row(label: str, run: ToolRun) -> str:
    """One row of the counts table."""
    ran = run.count(PASS) + run.count(FAIL)
    return (f"  {label:<8} {len(run.tests):>7} {ran:>6} {run.count(PASS):>7} {run.count(FAIL):>7}"
            f" {run.count(SKIPPED):>8} {run.count(DISABLED):>9} {run.wall:>10.1f}")


def render(title: str, parallel: int, runs: Sequence[ToolRun], target_key: str) -> str:
    """The report: commands, counts, wall times and ratio, parity, differences, targets."""
    lines = [f"mtr_parity: {title}, --parallel={parallel}; machine shared with other engineers"
             f" ({os.cpu_count()} CPUs; load averages 1/5/15 min below)"]
    for run in runs:
        lines += render_side(run)
    lines += ["", f"  {'tool':<8} {'listed':>7} {'run':>6} {'passed':>7} {'failed':>7}"
                  f" {'skipped':>8} {'disabled':>9} {'wall (s)':>10}"]
    lines += [counts_row(run.tool, run) for run in runs]
    if len(runs) < 2:
        return "\n".join(lines)
    mtr, kewpie = runs
    ratio = kewpie.wall / mtr.wall if mtr.wall else float("nan")
    lines.append(f"  {'ratio':<8} {'':>7} {'':>6} {'':>7} {'':>7} {'':>8} {'':>9} {ratio:>10.2f}"
                 "   (kewpie / mtr wall)")
    mtr_passed = [n for n, v in mtr.tests.items() if v.verdict == PASS]
    both = [n for n in mtr_passed if n in kewpie.tests and kewpie.tests[n].verdict == PASS]
    parity = len(both) / len(mtr_passed) if mtr_passed else float("nan")
    kewpie_only = [n for n, v in kewpie.tests.items()
                   if v.verdict == PASS and (n not in mtr.tests or mtr.tests[n].verdict != PASS)]
    lines += ["", f"  parity: kewpie passes {len(both)} of the {len(mtr_passed)} tests mtr passes"
                  f" ({parity * 100:.1f}%); kewpie passes {len(kewpie_only)} that mtr does not"]
    rows = differences(mtr, kewpie)
    lines += ["", f"  verdicts that differ: {len(rows)}"]
    if rows:
        width = min(max(len(r[0]) for r in rows), 60)
        lines.append(f"    {'test':<{width}}  {'mtr':<40}  kewpie")
        for name, m, k in rows:
            lines.append(f"    {name:<{width}}  {cell(m)[:40]:<40}  {cell(k)[:REASON_CHARS]}")
    lines += time_outliers(mtr, kewpie)
    if target_key == "sample":
        lines += suite_rows(mtr, kewpie)
    target = TARGETS.get(target_key)
    lines.append("")
    if target:
        least, ratio_max = target
        lines.append(f"  target {target_key}: kewpie passes >= {least * 100:.0f}% of what mtr"
                     f" passes: {parity * 100:.1f}%  {verdict_word(parity >= least)}")
        if ratio_max is not None:
            lines.append(f"  target {target_key}: kewpie wall <= {ratio_max}x mtr's: {ratio:.2f}x"
                         f"  {verdict_word(ratio <= ratio_max)}")
    else:
        lines.append(f"  no target for {target_key or 'a test list'}"
                     " (issue 15 sets them for whole suites: main, mariabackup, rpl)")
    if any(run.source.startswith("saved") for run in runs):
        lines.append("  NOTE: one side was read from a saved run, not measured in this one")
    return "\n".join(lines)


def time_outliers(mtr: ToolRun, kewpie: ToolRun, least_ms: float = OUTLIER_MS,
                  most: int = 5) -> list[str]:
    """Tests both tools passed whose own times differ by least_ms or more (a test with a
    race or a timeout can take a minute longer in one run of either tool), largest first."""
    rows = []
    for name, m in mtr.tests.items():
        k = kewpie.tests.get(name)
        if (k is None or m.verdict != PASS or k.verdict != PASS or m.time_ms is None
                or k.time_ms is None or abs(k.time_ms - m.time_ms) < least_ms):
            continue
        rows.append((abs(k.time_ms - m.time_ms), name, m.time_ms, k.time_ms))
    if not rows:
        return []
    lines = ["", f"  test times that differ by {least_ms / 1000:g} s or more (kewpie's include its"
                 f" checks and server starts; mtr's do not): {len(rows)}"]
    for _, name, m_ms, k_ms in sorted(rows, reverse=True)[:most]:
        lines.append(f"    {name:<40}  mtr {m_ms / 1000:7.1f} s  kewpie {k_ms / 1000:7.1f} s")
    return lines


# ---------------------------------------------------------------- clean-up
def clean_up(base: str, keep: bool) -> list[str]:
    """Stop any process our runs left behind (by pid), then remove base unless keep.

    Returns one warning per process that had to be stopped.
    """
    warnings = stop_leftovers(base, os.path.join(base, "kewpie_workdir"), 30.0)
    if not keep:
        remove_kewpie_shm_tree(os.path.join(base, "kewpie_workdir"))
        shutil.rmtree(base, ignore_errors=True)
    return warnings


# ---------------------------------------------------------------- main
def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="bench/mtr_parity.py",
                                     description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default=None,
                        help=f"the suite to run whole (default: {DEFAULT_SUITE}); with"
                             " --tests-file, the suite of names given without one")
    parser.add_argument("--tests-file", metavar="FILE",
                        help="run these tests (one name a line, as mtr takes them) instead")
    parser.add_argument("--sample", type=int, metavar="N",
                        help="every N-th test of each suite of mtr's default list (with all"
                             " its combinations; big tests left out); mtr runs as"
                             f" {SAMPLE_USER} unless --mtr-user")
    parser.add_argument("--parallel", type=int, default=2, help="workers of each tool (default: 2)")
    side = parser.add_mutually_exclusive_group()
    side.add_argument("--mtr-only", action="store_true", help="run mtr only")
    side.add_argument("--kewpie-only", action="store_true", help="run kewpie only")
    parser.add_argument("--mtr-results", metavar="FILE",
                        help="read mtr's side from a file written by --save-dir instead of"
                             " running it")
    parser.add_argument("--kewpie-results", metavar="FILE",
                        help="read kewpie's side from a file written by --save-dir instead of"
                             " running it")
    parser.add_argument("--save-dir", metavar="DIR",
                        help="write each side's verdicts as DIR/<label>.<tool>.json")
    parser.add_argument("--label", help="the label of the saved files (default: the suite,"
                                        " or the tests file's name)")
    parser.add_argument("--mtr-user", metavar="USER",
                        help="run mtr as USER (runuser; e.g. mysql for galera, whose rsync SST"
                             " fails as root); kewpie runs as usual")
    parser.add_argument("--big-test", action="store_true",
                        help="both tools run big tests too (mtr's --big-test; galera_3nodes'"
                             " garbd tests are big)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary directory (outputs, vardir, JUnit, workdir)")
    args = parser.parse_args(argv)
    if args.mtr_user:
        try:
            pwd.getpwnam(args.mtr_user)
        except KeyError:
            parser.error(f"--mtr-user: no such user {args.mtr_user!r}")
    if args.parallel < 1:
        parser.error("--parallel must be at least 1")
    if args.sample is not None and (args.sample < 1 or args.tests_file or args.suite):
        parser.error("--sample N: N of at least 1, without --tests-file or --suite")
    if (args.mtr_results and args.mtr_only) or (args.kewpie_results and args.kewpie_only):
        parser.error("--mtr-results with --mtr-only (or --kewpie-results with --kewpie-only):"
                     " nothing to run")
    return args


def main(argv: Sequence[str]) -> int:
    """Run the bench; the exit status (see the module docstring)."""
    args = parse_args(argv)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)
    need_mtr = not args.kewpie_only and not args.mtr_results
    if need_mtr and not os.path.isfile(MTR_SCRIPT):
        print(f"mtr_parity: mysql-test-run is missing ({MTR_SCRIPT}): install Debian's"
              f" {MTR_PACKAGE} package (apt-get install {MTR_PACKAGE}, or scripts/setup.sh)",
              file=sys.stderr)
        return 2
    suite = args.suite or DEFAULT_SUITE
    try:
        names = read_tests_file(args.tests_file, suite) if args.tests_file else []
    except (OSError, BenchError) as exc:
        print(f"mtr_parity: {exc}", file=sys.stderr)
        return 2
    suites = {name.split(".", 1)[0] for name in names}
    if not args.suite and len(suites) == 1:
        suite = suites.pop()   # kewpie's --suite: the one suite the names share
    label = args.label or (os.path.splitext(os.path.basename(args.tests_file))[0]
                           if args.tests_file else suite)
    title = (f"{len(names)} tests from {args.tests_file}" if names else f"suite {suite}")
    target_key = suite if not names else ""
    mtr_user = args.mtr_user
    if args.sample is not None:
        suite, target_key, label = "", "sample", args.label or f"sample{args.sample}"
        if mtr_user is None and os.geteuid() == 0:
            mtr_user = SAMPLE_USER
    # No '-' in the path: mtr splits --suite=<name> at '-'; the server user must pass through.
    base = tempfile.mkdtemp(prefix="kewpie_mtr_parity_", dir="/tmp")
    os.chmod(base, 0o755)
    status = 0
    runs: list[ToolRun] = []
    unlisted: list[str] = []
    try:
        if args.sample is not None:
            print("mtr_parity: listing mtr's default suites (mtr --dry-run, kewpie --list) ...",
                  flush=True)
            used, mtr_cases = mtr_default_cases(base, mtr_user)
            sample = stratified_sample(mtr_cases, kewpie_listing(base), args.sample)
            names, unlisted = sample.names, sample.unlisted
            title = (f"every {args.sample}th test of each of the {len(sample.suites)} suites of"
                     f" mtr's default list ({len(names) + len(unlisted)} of {sample.total_tests}"
                     f" tests; {sample.big} big tests not sampled)")
            print(f"mtr_parity: {title}; mtr's suites: {','.join(used)}", flush=True)
            if unlisted:
                print(f"mtr_parity: not listed by kewpie (reported absent): {' '.join(unlisted)}",
                      flush=True)
            names = names + unlisted   # mtr runs them all
        if args.mtr_results and not args.kewpie_only:
            runs.append(load_saved(args.mtr_results))
        elif need_mtr:
            print(f"mtr_parity: running mtr ({title}) ...", flush=True)
            runs.append(run_mtr(base, suite, names, args.parallel, mtr_user, args.big_test))
            print(f"mtr_parity: mtr done in {runs[-1].wall:.1f} s", flush=True)
            if args.save_dir:   # now: a failed kewpie run must not lose mtr's side
                print(f"saved: {save(runs[-1], args.save_dir, label)}", flush=True)
        if args.kewpie_results and not args.mtr_only:
            runs.append(load_saved(args.kewpie_results))
        elif not args.mtr_only:
            print(f"mtr_parity: running kewpie ({title}) ...", flush=True)
            runs.append(run_kewpie(base, suite, [n for n in names if n not in unlisted],
                                   args.parallel, args.big_test))
            for name in unlisted:
                runs[-1].tests.setdefault(name, Verdict(ABSENT, "not listed by kewpie"))
            print(f"mtr_parity: kewpie done in {runs[-1].wall:.1f} s", flush=True)
        if args.save_dir and runs and runs[-1].tool == "kewpie" \
                and not runs[-1].source.startswith("saved"):
            print(f"saved: {save(runs[-1], args.save_dir, label)}")
        print()
        print(render(title, args.parallel, runs, target_key))
    except BenchError as exc:
        print(f"mtr_parity: {exc}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        print("mtr_parity: interrupted", file=sys.stderr)
        status = 130
    finally:
        for warning in clean_up(base, args.keep):
            print(f"mtr_parity: {warning}", file=sys.stderr)
        if args.keep:
            print(f"kept: {base}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
