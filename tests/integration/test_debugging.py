"""Debugging a failure through the CLI (issue 17): --valgrind, --keep-failed, the
error-log warnings check, combinations in rows and JUnit, selection, --rr, --mysqld.

Covers: lib/run/filters.py, lib/run/debugging.py, lib/run/postchecks.py,
lib/servers/wrappers.py, lib/checks/errorlog.py, lib/checks/valgrind.py,
lib/suites/combinations.py
"""
import glob
import os
import re
import xml.etree.ElementTree as ET

import pymysql

from tests.conftest import FIXTURE_SUITES, tagged

ROW = re.compile(r"^\d{8}-\d{6} INFO (\S+(?: '[^']+')?)\s+\[ (\w+) \]\s+(\d+)$", re.M)


def _rows(out):
    return {name: status for name, status, _ in ROW.findall(out)}


def _errors(out):
    return [line for line in out.splitlines() if " ERROR " in line]


def test_valgrind_clean_run_and_log_in_evidence(kewpie):
    """One query passes under memcheck; a failing test's evidence has the valgrind log."""
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=debugging", "--valgrind",
                      "--do-test=debugging.query", "--do-test=debugging.fails", "--force",
                      timeout=600)
    assert proc.returncode == 1, proc.stdout[-4000:]
    assert _rows(proc.stdout) == {"debugging.query_test": "pass", "debugging.fails_test": "fail"}
    s0 = os.path.join(kewpie.workdir, "failed", "latest", "debugging.fails_test", "s0")
    logs = glob.glob(os.path.join(s0, "valgrind.*.log"))
    assert logs, os.listdir(s0)
    text = open(logs[0]).read()
    assert "Memcheck" in text and re.search(r"ERROR SUMMARY: 0 errors", text), text[-2000:]
    cnf = open(os.path.join(s0, "stdout.log")).read()
    assert "valgrind" not in cnf.lower() or "Memcheck" not in cnf  # valgrind writes its own log


def test_keep_failed_leaves_a_reachable_server_and_cleanup_stops_it(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=debugging", "fails",
                      "--keep-failed", "--mysqld=--max-connections=77")
    assert proc.returncode == 1, proc.stdout[-4000:]
    assert "--keep-failed: debugging.fails_test failed; its servers are left running" in proc.stdout
    port = int(re.search(r"INFO MASTER_PORT: (\d+)", proc.stdout).group(1))
    assert os.path.exists(os.path.join(kewpie.workdir, "cluster.json"))
    assert os.path.exists(os.path.join(kewpie.workdir, "failed", "latest", "debugging.fails_test",
                                       "s0", "error.log"))  # the evidence too
    assert len(tagged(kewpie.workdir)) == 1
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", ssl_disabled=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*), @@max_connections FROM test.kept")
            assert cur.fetchone() == (3, 77)  # the failed test's data, --mysqld applied
    finally:
        conn.close()
    cleanup = kewpie.run("--mode=cleanup")
    assert cleanup.returncode == 0, cleanup.stdout
    assert tagged(kewpie.workdir) == []


def test_unsuppressed_error_fails_and_suppressed_passes(kewpie):
    """A real [ERROR] (CHECK TABLE on a truncated MyISAM file) fails the test that
    provoked it; the same test with self.suppress_warning passes."""
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=debugging", "--do-test=corrupt",
                      "--force")
    assert proc.returncode == 1, proc.stdout[-4000:]
    assert _rows(proc.stdout) == {"debugging.corrupt_myisam_test": "fail",
                                  "debugging.corrupt_suppressed_test": "pass"}
    failure = open(os.path.join(kewpie.workdir, "failed", "latest", "debugging.corrupt_myisam_test",
                                "failure.txt")).read()
    assert failure.startswith("error log warnings"), failure
    assert re.search(r"\[ERROR\] Got an error from thread_id=\d+, .*ha_myisam\.cc", failure)
    assert "[Warning] 'user' entry" not in failure  # global suppressions
    quiet = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=debugging",
                       "corrupt_myisam", "--no-check-warnings")
    assert quiet.returncode == 0, quiet.stdout[-3000:]


def test_combinations_and_disabled_in_rows_and_junit(kewpie, tmp_path):
    report = tmp_path / "junit.xml"
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=combos",
                      f"--junit-xml={report}")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert _rows(proc.stdout) == {
        "combos.broken_test 'small'": "skipped", "combos.broken_test 'large'": "skipped",
        "combos.variables_test 'small'": "pass", "combos.variables_test 'large'": "pass"}
    assert "disabled: fails on purpose, see kewpie issue 17" in proc.stdout
    cases = ET.parse(report).getroot().iter("testcase")
    by_name = {c.get("name"): c for c in cases}
    assert set(by_name) == {"variables_test 'small'", "variables_test 'large'",
                            "broken_test 'small'", "broken_test 'large'"}
    skipped = by_name["broken_test 'small'"].find("skipped")
    assert skipped is not None and "fails on purpose" in (skipped.get("message") or skipped.text or "")


def test_selection_options_pick_as_documented(kewpie):
    def listed(*args):
        proc = kewpie.run("--list", f"--suitepath={FIXTURE_SUITES}", *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return [line.strip() for line in proc.stdout.splitlines() if line.strip()]

    assert listed("--suite=main,combos", "--do-test=main.b", "--do-test=variables",
                  "--skip-test=large") == ["main.basic_test", "combos.variables_test 'small'"]
    assert listed("--suite=main", "--skip-test=^main\\.(crash|legacy)", "--start-from=main.restart") \
        == ["main.restart_test"]
    assert listed("--suite=combos", "--combination=large", "--do-test=broken") == [
        "combos.broken_test 'large'  # disabled: fails on purpose, see kewpie issue 17"]
    assert listed("--suite=combos", "--combination=large", "--do-test=broken",
                  "--enable-disabled") == ["combos.broken_test 'large'"]
    bad = kewpie.run("--list", "--suite=main", "--start-from=nope")
    assert bad.returncode == 2 and len(_errors(bad.stdout)) == 1


def test_rr_records_or_says_why_not(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=debugging", "fails", "--rr",
                      timeout=600)
    if proc.returncode == 2:  # this machine: no hardware performance counters
        errors = _errors(proc.stdout)
        assert len(errors) == 1, proc.stdout
        assert "--rr: this machine cannot record with rr: " in errors[0]
        assert "perf" in errors[0]
        assert tagged(kewpie.workdir) == []
    else:
        assert proc.returncode == 1, proc.stdout[-4000:]
        traces = glob.glob(os.path.join(kewpie.workdir, "failed", "latest", "debugging.fails_test",
                                        "s0", "rr", "s0-start*"))
        assert traces, proc.stdout[-3000:]


def test_mysqld_options_go_through_the_unsafe_option_check(kewpie):
    for option in ("--mysqld=--log-bin=/tmp/elsewhere", "--mysqld=--port=3306"):
        proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=debugging", "query", option)
        assert proc.returncode == 2, proc.stdout[-3000:]
        errors = _errors(proc.stdout)
        assert len(errors) == 1 and "--mysqld" in errors[0], proc.stdout
    assert tagged(kewpie.workdir) == []
