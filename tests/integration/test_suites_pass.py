"""The shipped suites pass through the real CLI with rows and a summary.

Covers: lib/modes/dispatch.py, lib/run/native.py, lib/run/report.py, lib/testcase.py,
lib/run/selection.py, lib/suites/testcase.py, lib/checks/dbcompare.py, lib/servers/replication.py,
percona_tests/main/, percona_tests/replication_basic/
"""
import re


def test_main_and_replication_basic_pass(kewpie):
    proc = kewpie.run("--suite=main,replication_basic")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    rows = re.findall(r"^\d{8}-\d{6} INFO (\S+)\s+\[ (\w+) \]\s+(\d+)$", out, re.M)
    names = {name for name, _, _ in rows}
    assert {"main.basic_test", "main.restart_test", "main.crash_test", "main.legacy_test",
            "replication_basic.replicate_test", "replication_basic.replica_restart_test",
            "replication_basic.legacy_checksum_test"} <= names
    assert all(status == "pass" for _, status, _ in rows)
    assert "Executed 7/7 test cases, 100.00 percent" in out
    assert "STATUS: PASS, 7/7 test cases" in out
    assert "server_version: 10." in out and "basedir: /usr" in out


def test_list_prints_tests_and_starts_nothing(kewpie):
    proc = kewpie.run("--list", "--suite=main,replication_basic")
    assert proc.returncode == 0
    lines = proc.stdout.split()
    assert "main.basic_test" in lines and "replication_basic.replicate_test" in lines


def test_repeat_and_named_test(kewpie):
    proc = kewpie.run("--suite=main", "basic", "--repeat", "2")
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.count("main.basic_test") >= 2
    assert "Executed 2/2 test cases" in proc.stdout
