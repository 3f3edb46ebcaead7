"""Regression-job features through the CLI: parallel bots, JUnit, shards, retries, evidence.

Covers: lib/run/bots.py, lib/platform/workers.py, lib/run/scheduling.py, lib/run/junit.py,
lib/run/evidence.py, lib/run/native.py
"""
import os
import re

import xmlschema

from tests.conftest import FIXTURE_SUITES

SCHEMA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "schemas", "jenkins-junit.xsd")


def _rows(out):
    return dict(re.findall(r"INFO (\S+)\s+(?:bot\d+\s+)?\[ (\w+) \]\s+\d+$", out, re.M))


def test_parallel_run_with_junit_report(kewpie, tmp_path):
    report = tmp_path / "out.xml"
    proc = kewpie.run("--suite=main,replication_basic", "--parallel", "2", "--junit-xml", str(report))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    rows = _rows(proc.stdout)
    assert len(rows) == 7 and set(rows.values()) == {"pass"}
    assert re.search(r"bot1\s+\[ pass \]", proc.stdout), "both bots should have run tests"
    xmlschema.XMLSchema(SCHEMA).validate(str(report))
    text = report.read_text()
    assert text.count("<testcase ") == 7
    assert '<testsuite name="main"' in text and '<testsuite name="replication_basic"' in text
    assert os.path.exists(os.path.join(kewpie.workdir, "timings.json"))


def test_shards_together_run_each_test_once(kewpie):
    selection = ["--suite=main,replication_basic"]
    listed = kewpie.run("--list", *selection).stdout.split()
    ran = []
    for k in (1, 2, 3):
        proc = kewpie.run(*selection, f"--shard={k}/3", "--force")
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert f"Shard {k}/3" in proc.stdout
        ran += list(_rows(proc.stdout))
    assert sorted(ran) == sorted(listed)
    assert len(ran) == len(set(ran)) == 7


def test_flaky_test_is_flaky_with_retry_and_failed_without(kewpie, tmp_path_factory):
    without = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=flaky")
    assert without.returncode == 1
    assert _rows(without.stdout) == {"flaky.second_try_test": "fail"}
    report = tmp_path_factory.mktemp("junit") / "flaky.xml"
    # A fresh workdir, so the test fails once again before passing.
    from tests.conftest import KewpieRunner, make_workdir
    other = KewpieRunner(make_workdir(tmp_path_factory, "flaky"))
    retried = other.run(f"--suitepath={FIXTURE_SUITES}", "--suite=flaky", "--retry=1",
                        f"--junit-xml={report}")
    assert retried.returncode == 0, retried.stdout[-3000:]
    assert _rows(retried.stdout) == {"flaky.second_try_test": "flaky"}
    assert "STATUS: FLAKY, 1/1" in retried.stdout
    assert "FLAKY TESTS" in retried.stdout
    xmlschema.XMLSchema(SCHEMA).validate(str(report))
    assert "<flakyFailure" in report.read_text()


def test_failure_evidence_and_core_backtrace(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=crashes")
    assert proc.returncode == 1
    match = re.search(r"evidence: (\S+)", proc.stdout)
    assert match, proc.stdout[-3000:]
    evidence = match.group(1)
    run_dir = os.path.realpath(os.path.join(kewpie.workdir, "failed", "latest"))
    assert evidence == os.path.join(run_dir, "crashes.segv_test")  # failed/<run>/<suite.test>
    for name in ("failure.txt", "kewpie.log", "s0/error.log", "s0/my.cnf", "s0/data"):
        assert os.path.exists(os.path.join(evidence, name)), name
    assert "--- backtrace (top frames) ---" in proc.stdout
    assert "handle_fatal_signal" in open(os.path.join(evidence, "s0", "backtrace.txt")).read()
    assert re.search(r"^\d{8}-\d{6} INFO crash signature [0-9a-f]{12}: crash \| signal 11 \| "
                     r"frames: ", proc.stdout, re.M), proc.stdout[-3000:]
    assert "FAILED ON KNOWN BUGS" not in proc.stdout


def test_a_crash_of_a_known_bug_is_named_and_allow_known_passes_it(kewpie):
    """A suite's crash that a known-bugs file lists: the test still fails and its report
    names the bug; with --allow-known that failure does not fail the run."""
    known = os.path.join(os.path.dirname(FIXTURE_SUITES), "known_bugs_segv.txt")
    args = (f"--suitepath={FIXTURE_SUITES}", "--suite=crashes", f"--known-bugs={known}")
    strict = kewpie.run(*args)
    assert strict.returncode == 1, strict.stdout[-3000:]
    assert "known bug FIXTURE-11 (open): the crashes suite sends its server SIGSEGV" in strict.stdout
    assert "FAILED TESTS: crashes.segv_test" in strict.stdout
    assert "FAILED ON KNOWN BUGS: crashes.segv_test (FIXTURE-11 (open)" in strict.stdout
    allowed = kewpie.run(*args, "--allow-known")
    assert allowed.returncode == 0, allowed.stdout[-3000:]
    assert "FAILED ON KNOWN BUGS: crashes.segv_test" in allowed.stdout


def test_sigint_with_parallel_bots_leaves_nothing(kewpie):
    import signal
    import time

    from tests.conftest import tagged
    proc = kewpie.popen("--suite=main,replication_basic", "--parallel=2")
    for line in proc.stdout:
        if "[ pass ]" in line:
            break
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert time.monotonic() - sent < 15
    deadline = time.monotonic() + 5
    while tagged(kewpie.workdir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tagged(kewpie.workdir) == []


def test_start_and_exit_with_parallel_uses_bot0(kewpie):
    proc = kewpie.run("--suite=replication_basic", "--start-and-exit", "--parallel=2")
    try:
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert proc.stdout.count("bot0 server:") == 3
        assert os.path.exists(os.path.join(kewpie.workdir, "servers.json"))
    finally:
        assert kewpie.run("--mode=cleanup").returncode == 0


def test_progress_line_on_a_terminal_only(kewpie):
    import shutil
    import subprocess
    if not shutil.which("script"):
        import pytest
        pytest.skip("script (util-linux) is not installed")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["KEWPIE_NO_VENV"] = "1"
    cmd = " ".join(kewpie.cmd("--suite=main", "basic"))
    tty = subprocess.run(["script", "-qec", f"stty cols 120 rows 30; {cmd}", "/dev/null"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert tty.returncode == 0, tty.stdout[-2000:]
    assert re.search(r"\d/1 tests \|.*\| 0 failed \[", tty.stdout)
    plain = kewpie.run("--suite=main", "basic")
    assert plain.returncode == 0 and "tests |" not in plain.stdout
