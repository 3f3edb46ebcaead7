"""The pytest plugin's tests go through kewpie's attempt pipeline as kewpie's own tests
do, run as users run them (pytest in a subprocess on tests/fixtures/pytest_checks/, real
servers): an [ERROR] in a server's error log fails a test that passed (at its teardown,
with the warnings check's report), a process a test leaves running is stopped by pid and
fails it, a crash of a bug the folder's known_bugs.txt lists is named (the terminal
summary's "failed on known bugs"; an expected failure with --kewpie-allow-known), and
--kewpie-test-timeout kills a hung test's servers -- the same words as in kewpie's rows
(tests/integration/test_debugging.py, test_security_options.py, test_regression_jobs.py).

Covers: lib/pytest_plugin/, lib/run/attempt.py (the pytest plugin through it),
lib/run/watchdog.py (as a context manager)
"""
import os
import re
import sqlite3
import time

import psutil

from tests.conftest import ROOT, tagged
from tests.integration.test_pytest_plugin import _pytest, workdir  # noqa: F401 - a fixture

FOLDER = os.path.join(ROOT, "tests", "fixtures", "pytest_checks")


def _words(stdout):
    """{test name: the words -rA's short summary gives it} (PASSED and ERROR for a test
    that failed at its teardown)."""
    found = {}
    for line in stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR", "XFAIL") and "::" in rest:
            found.setdefault(rest.split(" ")[0].split("::")[-1], set()).add(word)
    return found


def _gone(pid):
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_warnings_leftovers_and_known_bugs_as_in_kewpie_runs(workdir, tmp_path):  # noqa: F811
    notes = tmp_path / "notes"
    result = _pytest(workdir, FOLDER, notes=str(notes))
    out = result.stdout
    assert result.returncode == 1, out[-3000:]
    assert _words(out) == {"test_a_logs_an_error": {"PASSED", "ERROR"},
                           "test_b_leaves_a_sleep": {"PASSED", "ERROR"},
                           "test_c_segv": {"FAILED"}, "test_d_clean": {"PASSED"}}, out[-3000:]
    failed = os.path.realpath(os.path.join(workdir, "failed", "latest"))
    warnings = open(os.path.join(failed, "test_plugin_checks.test_a_logs_an_error",
                                 "failure.txt")).read()
    assert warnings.startswith("error log warnings"), warnings
    assert re.search(r"\[ERROR\] Got an error from thread_id=\d+, .*ha_myisam\.cc", warnings)
    assert "ERROR at teardown of test_a_logs_an_error" in out
    child = int(dict(line.split() for line in notes.read_text().splitlines())["child"])
    assert (f"the test left 1 process(es) running, stopped by kewpie: pid {child} "
            f"(sleep 1001)") in out
    assert _gone(child)
    assert "server s0 died during the test (killed by signal 11)" in out
    assert re.search(r"crash signature [0-9a-f]{12}: crash \| signal 11 \|", out)
    assert "known bug FIXTURE-12 (open): test_c_segv sends its server SIGSEGV" in out
    assert ("failed on known bugs: test_plugin_checks.test_c_segv (FIXTURE-12 (open): "
            "test_c_segv sends its server SIGSEGV)") in out
    history = sqlite3.connect(os.path.join(workdir, "history.sqlite"))
    assert {t for (t,) in history.execute("SELECT test FROM history_results WHERE failing = 1")} \
        == {"test_plugin_checks.test_a_logs_an_error", "test_plugin_checks.test_b_leaves_a_sleep",
            "test_plugin_checks.test_c_segv"}
    assert tagged(workdir) == []


def test_allow_known_makes_a_known_crash_an_expected_failure(workdir):  # noqa: F811
    result = _pytest(workdir, "--kewpie-allow-known", "-k", "test_c_segv", FOLDER)
    assert result.returncode == 0, result.stdout[-3000:]
    assert _words(result.stdout) == {"test_c_segv": {"XFAIL"}}, result.stdout[-3000:]
    assert "known bug FIXTURE-12 (open)" in result.stdout


def test_test_timeout_kills_a_hung_tests_servers(workdir):  # noqa: F811
    started = time.monotonic()
    result = _pytest(workdir, "--kewpie-test-timeout=8", "-k", "test_e_hangs", FOLDER,
                     extra_env={"KEWPIE_PLUGIN_HANG": "1"})
    assert result.returncode == 1, result.stdout[-3000:]
    assert _words(result.stdout) == {"test_e_hangs": {"FAILED"}}, result.stdout[-3000:]
    assert "test exceeded --kewpie-test-timeout 8s: its servers were killed" in result.stdout
    assert time.monotonic() - started < 120  # not the query's 600 s
    assert tagged(workdir) == []
