"""Crash detection, the reuse rule, test timeouts and --no-shm, through the CLI.

Covers: lib/servers/health.py, lib/servers/manager.py, lib/run/watchdog.py,
lib/platform/workdir.py, lib/servers/server.py (Server.kill), lib/run/attempt.py
"""
import os
import re
import shutil
import stat
import tempfile

from tests.conftest import FIXTURE_SUITES, KewpieRunner


def _rows(out: str) -> dict[str, str]:
    return dict(re.findall(r"INFO (\S+)\s+\[ (\w+) \]\s+\d+$", out, re.M))


def test_dead_server_fails_test_and_next_test_gets_fresh_server(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=harness_checks", "--force")
    rows = _rows(proc.stdout)
    assert proc.returncode == 1, proc.stdout
    assert rows["harness_checks.a_dies_test"] == "fail"
    assert rows["harness_checks.b_fresh_test"] == "pass"
    assert "server s0 died during the test" in proc.stdout
    assert "error log" in proc.stdout


def test_without_force_stops_at_first_failure(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=harness_checks")
    assert proc.returncode == 1
    assert "harness_checks.b_fresh_test" not in _rows(proc.stdout)
    assert "use --force" in proc.stdout


def test_servers_reused_while_the_next_test_would_see_the_same(kewpie):
    # b leaves a table in `test`: c gets the same server with `test` emptied
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=reuse", "--verbose")
    assert proc.returncode == 0, proc.stdout
    assert set(_rows(proc.stdout).values()) == {"pass"}
    assert "fresh servers for the next test" not in proc.stdout
    assert "Servers reset 0 times" in proc.stdout


def test_timeout_kills_and_reports(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=slow", "--test-timeout=3")
    assert proc.returncode == 1
    assert _rows(proc.stdout)["slow.sleep_test"] == "timeout"
    assert "STATUS: TIMEOUT" in proc.stdout


def test_timeout_ends_a_query_on_the_kept_connection(kewpie):
    """The watchdog kills the server while the test's thread reads its kept connection
    (Server.kill closes that connection after the kill, not before: the reader holds it)."""
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=slow_query", "--test-timeout=3",
                      timeout=120)
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert _rows(proc.stdout)["slow_query.sleep_query_test"] == "timeout", proc.stdout[-3000:]
    assert "test exceeded --test-timeout 3s: its servers were killed" in proc.stdout


def test_no_shm_keeps_vardirs_on_disk():
    # pytest's tmp dirs are 0700; servers run as mysql need a path they can enter.
    base = tempfile.mkdtemp(prefix="kewpie-noshm-", dir="/tmp")
    os.chmod(base, 0o755)
    runner = KewpieRunner(os.path.join(base, "wd"))
    try:
        _check_no_shm(runner)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _check_no_shm(runner):
    proc = runner.run("--suite=main", "basic", "--no-shm")
    assert proc.returncode == 0, proc.stdout
    assert "Using --no-shm" in proc.stdout
    bot = os.path.join(runner.workdir, "bot0")
    assert os.path.isdir(bot) and not os.path.islink(bot)
    mode = os.stat(runner.workdir).st_mode
    assert not mode & stat.S_IWOTH
