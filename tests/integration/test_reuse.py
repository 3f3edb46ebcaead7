"""The reuse rule (issue 14) through the CLI: a reset for anything a later test could
see, none for a clean test or for objects left in `test` (emptied instead).

The fixture tests assert pids themselves (kept: same pid as an earlier test;
reset: another); here we read --verbose's per-test "servers reset:" lines and
the summary's count.

Covers: lib/servers/reuse.py, lib/servers/fingerprint.py, lib/servers/manager.py
"""
import re

from tests.conftest import FIXTURE_SUITES


def _resets(out: str) -> dict[str, str]:
    """test name -> why its servers were reset afterwards ('' = kept)."""
    rows: dict[str, str] = {}
    last = None
    for line in out.splitlines():
        row = re.search(r"INFO (\S+)\s+\[ (\w+) \]\s+\d+$", line)
        if row:
            last = row.group(1)
            rows[last] = ""
            continue
        reset = re.search(r"INFO +servers reset: (.*)$", line)
        if reset and last:
            rows[last] = reset.group(1)
    return rows


def _run(kewpie, suite):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", f"--suite={suite}", "--verbose")
    assert proc.returncode == 0, proc.stdout[-6000:]
    return proc.stdout, _resets(proc.stdout)


def test_one_server_reset_only_for_what_the_next_test_would_see(kewpie):
    out, resets = _run(kewpie, "reuse_rule")
    assert resets["reuse_rule.a_clean_test"] == ""  # own tables created and dropped
    assert resets["reuse_rule.b_leaves_test_table_test"] == ""  # `test` emptied instead
    assert "tables (+leftover.t)" in resets["reuse_rule.c_sees_empty_test_test"]
    assert "mysql_global_priv (+localhost.joe)" in resets["reuse_rule.d_user_test"]
    assert "max_connections 151->77" in resets["reuse_rule.e_global_test"]
    assert "restarted" in resets["reuse_rule.f_restart_test"]
    assert "Servers reset 4 times (kept after 3 of 7 tests)" in out


def test_replicating_set_reset_for_replication_changes(kewpie):
    out, resets = _run(kewpie, "reuse_replication")
    assert resets["reuse_replication.a_clean_test"] == ""
    assert "slave_running ON->OFF" in resets["reuse_replication.b_stop_slave_test"]
    assert "com_change_master" in resets["reuse_replication.c_change_master_test"]
    assert "Servers reset 2 times" in out


def test_failed_test_counts_as_a_reset(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=harness_checks", "--force",
                      "--verbose")
    assert proc.returncode == 1
    assert "the test did not pass" in _resets(proc.stdout)["harness_checks.a_dies_test"]
