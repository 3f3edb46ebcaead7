"""Triage as fast as mtr (issue 47): a dead replica (or an inconsistent Galera node)
fails its waits at once with its error, a failure's real error line is said first and stored in the history where
``history failures --failure`` finds it, a run's summary counts add up (native and mtr,
forced and stopped at the first failure), a flaky test links its failed attempt, an
interrupted run is stored with 130, and the cache's size is said and dropped.

Covers: lib/servers/replication.py, lib/suites/testcase.py (assertReplicasInSync),
lib/servers/galera_cluster.py (wait_cluster), lib/servers/galera.py (JoinWatch),
lib/run/failuretext.py, lib/run/attempt.py, lib/run/report.py, lib/run/recording.py,
lib/mtr/execute.py (mysqltest_error), lib/run/runner.py (retries), lib/run/native.py,
lib/servers/ramcache.py, lib/modes/cleanup/
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import FIXTURE_SUITES, KEWPIE, ROOT, KewpieRunner, make_workdir, tagged

MTR_FIXTURES = f"--suitepath={os.path.join(ROOT, 'tests', 'fixtures', 'mtr')}"
HAS_MTR = bool(shutil.which("mariadb-test")) and \
    os.path.isfile("/usr/share/mysql/mysql-test/mysql-test-run.pl")


def _row(out: str, name: str) -> list[str]:
    """The lines reported under the test's row, up to the next row or the summary."""
    lines = [line.split(" INFO ", 1)[-1] for line in out.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith(name + " ")
                 and "[ " in line)
    block = []
    for line in lines[start + 1:]:
        if re.search(r"\[ \w+ \]\s+\d+$", line) or line.startswith("====="):
            break
        block.append(line)
    return block


def _failures(workdir: str, pattern: str) -> str:
    proc = subprocess.run([sys.executable, KEWPIE, "history", "failures", f"--workdir={workdir}",
                           f"--failure={pattern}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _status_lines(out: str) -> list[str]:
    return [line.split(" INFO ", 1)[-1] for line in out.splitlines() if " INFO STATUS: " in line]


def test_a_stopped_sql_thread_fails_every_wait_at_once_with_its_error(kewpie):
    """The replica's SQL thread stops on a duplicate key: wait_for_replicas,
    wait_for_replica and assertReplicasInSync, each given 600 s, fail in under 5 s quoting
    Last_SQL_Error; the failure is said once, its error first, and the history finds it.
    Run twice (--repeat=2) without --force, the run stops at the first failure and its
    counts still add up."""
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=dead_replica", "--repeat=2",
                      timeout=300)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    assert "Executed 1/2 test cases, 50.00 percent; 1 not run (stopped after the first " \
           "failure)" in out, out[-2000:]
    assert _status_lines(out) == ["STATUS: FAIL, 1/2 test cases, 50.00 percent "
                                  "(fail 1, not run 1)"], out[-2000:]
    took = re.search(r"^WAITS TOOK ([\d.]+) ([\d.]+) ([\d.]+)$", out, re.M)
    assert took, out[-3000:]
    assert all(float(t) < 5.0 for t in took.groups()), took.group(0)   # of 600 s each
    block = _row(out, "dead_replica.stopped_sql_thread_test")
    assert block[0].startswith("AssertionError: replica s1 cannot reach s0's position "), block
    assert "the replica's SQL thread stopped: Last_SQL_Error (1062): " in block[0]
    assert "Duplicate entry '1' for key 'PRIMARY'" in block[0]
    assert block[1].startswith("evidence: "), block
    text = "\n".join(block)
    assert "Traceback" not in text and 'File "' not in text, text   # no frames, no internals
    logs = re.findall(r"\(([^()]*/error\.log)\)", text)
    assert len(logs) == len(set(logs)), text                         # each log once
    found = _failures(kewpie.workdir, "Duplicate entry")
    assert "dead_replica.stopped_sql_thread_test" in found, found
    assert "AssertionError: replica s1 cannot reach" in found, found
    assert not tagged(kewpie.workdir)


def test_an_inconsistent_galera_node_fails_the_cluster_s_wait_at_once(kewpie):
    """A node that cannot apply a write set (its row was added behind the cluster's
    back) leaves the cluster: wait_synced, given 600 s, fails in under 5 s quoting the
    node's [ERROR] line and its wsrep state."""
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=dead_node", timeout=300)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    took = re.search(r"^WAIT TOOK ([\d.]+)$", out, re.M)
    assert took and float(took.group(1)) < 5.0, out[-3000:]   # of 600 s
    block = _row(out, "dead_node.inconsistent_node_test")
    assert block[0].startswith("AssertionError: node s1 is inconsistent and leaves its "
                               "cluster: "), block
    # the node's last [ERROR] line: its failed apply, or (logged after it) the consensus
    assert re.search(r"\[ERROR\] WSREP: (Failed to apply write set|Inconsistency detected)",
                     block[0]), block[0]
    assert any(line.strip().startswith("s1: Inconsistent") for line in block), block
    assert not tagged(kewpie.workdir)


@pytest.mark.skipif(not HAS_MTR, reason="mariadb-test (scripts/setup.sh) is not installed")
def test_a_failing_mtr_case_says_mysqltest_s_line_and_the_counts_add_up(tmp_path_factory):
    """A failing case's summary is mysqltest's own line, stored where the history finds
    it; a run with --force prints one STATUS line; one that stops at its first failure
    says what it did not run, and its counts still add up."""
    runner = KewpieRunner(make_workdir(tmp_path_factory, "triage_mtr"))
    cases = ["kw_mtr.plain", "kw_mtr.fails_query", "kw_mtr.differs"]
    forced = runner.run("--mode=mtr", "--force", "--no-reorder", MTR_FIXTURES,
                        "--suite=kw_mtr", *cases, timeout=240)
    out = forced.stdout
    assert forced.returncode == 1, out[-3000:]
    block = _row(out, "kw_mtr.fails_query")
    assert block[0] == ("At line 4: query 'INSERT INTO t1 VALUES (1)' failed: ER_DUP_ENTRY "
                        "(1062): Duplicate entry '1' for key 'PRIMARY'"), block
    assert block[1].startswith("evidence: ") and sum(block[0] in line for line in block) == 1
    assert _row(out, "kw_mtr.differs")[0] == "Result content mismatch"
    assert "Executed 3/3 test cases, 100.00 percent" in out
    assert _status_lines(out) == ["STATUS: FAIL, 2/3 test cases, 66.67 percent "
                                  "(pass 1, fail 2)"], out[-2000:]
    found = _failures(runner.workdir, "Duplicate entry")
    assert "kw_mtr.fails_query" in found and "At line 4: query" in found, found
    stopped = runner.run("--mode=mtr", "--no-reorder", MTR_FIXTURES, "--suite=kw_mtr",
                         "kw_mtr.fails_query", "kw_mtr.plain", timeout=240)
    out = stopped.stdout
    assert stopped.returncode == 1, out[-3000:]
    assert "Executed 1/2 test cases, 50.00 percent; 1 not run (stopped after the first " \
           "failure)" in out, out[-2000:]
    assert _status_lines(out) == ["STATUS: FAIL, 1/2 test cases, 50.00 percent "
                                  "(fail 1, not run 1)"], out[-2000:]
    assert not tagged(runner.workdir)


def test_a_flaky_test_links_its_failed_attempt_and_an_interrupt_is_stored_as_130(
        tmp_path_factory):
    """A test that passed on --retry keeps its failed attempt's evidence in the history;
    a run stopped by SIGINT is stored with the exit it ends with, 130."""
    import signal
    import sqlite3
    runner = KewpieRunner(make_workdir(tmp_path_factory, "triage_flaky"))
    retried = runner.run(f"--suitepath={FIXTURE_SUITES}", "--suite=flaky", "--retry=1")
    assert retried.returncode == 0, retried.stdout[-3000:]
    store = os.path.join(runner.workdir, "history.sqlite")
    with sqlite3.connect(store) as db:
        (status, evidence), = db.execute("SELECT status, evidence FROM history_results")
    assert status == "flaky" and evidence, (status, evidence)
    assert os.path.isfile(os.path.join(evidence, "failure.txt")), evidence
    proc = runner.popen(f"--suitepath={FIXTURE_SUITES}", "--suite=slow")
    for line in proc.stdout:
        if "SLEEPING" in line:
            break
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    with sqlite3.connect(store) as db:
        codes = [c for c, in db.execute("SELECT exit_code FROM history_runs ORDER BY id")]
    assert codes == [0, 130], codes
    assert not tagged(runner.workdir)


def test_the_cache_s_size_is_said_and_cleanup_drops_it():
    """The run's summary says the cache's size and cap; --mode=cleanup --drop-cache
    empties it.  On a --no-shm workdir, whose cache is its own (workdir/cache): the
    user's shared cache in /dev/shm is left alone."""
    import tempfile
    base = tempfile.mkdtemp(prefix="kewpie-cache-", dir="/tmp")  # pytest's are 0700:
    os.chmod(base, 0o755)                                        # mysql must enter it
    try:
        _check_the_cache(KewpieRunner(os.path.join(base, "wd")))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _check_the_cache(runner):
    cache = os.path.join(runner.workdir, "cache")
    proc = runner.run("--no-shm", "--cache-max-mb=1", "--suite=main", "basic", timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:]
    line = re.search(r"INFO (Cache .*)$", proc.stdout, re.M)
    assert line, proc.stdout[-2000:]
    assert re.match(rf"Cache {re.escape(cache)}: \d+ MB \(cap 1 MB; 1 datadir template\(s\), "
                    r"0 cluster snapshot\(s\)\); --mode=cleanup --drop-cache empties it$",
                    line.group(1)), line.group(1)   # the newest entry stays over the cap
    assert runner.run("--drop-cache", timeout=60).returncode == 2
    dropped = runner.run("--mode=cleanup", "--no-shm", "--drop-cache", timeout=60)
    assert dropped.returncode == 0, dropped.stdout
    assert re.search(rf"Dropped the cache {re.escape(cache)}: 1 entries, \d+ MB freed",
                     dropped.stdout), dropped.stdout
    templates = os.path.join(cache, "bootstrap")
    assert not [n for n in os.listdir(templates) if os.path.isdir(os.path.join(templates, n))]
    assert not tagged(runner.workdir)
