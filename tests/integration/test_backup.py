"""The xtrabackup_basic suite passes through the real CLI (mariabackup on this machine).

Covers: lib/backup/, lib/data/sqldata.py, lib/data/writeload.py,
percona_tests/xtrabackup_basic/
"""
import os
import re

TESTS = {"basic_test", "incremental_test", "stream_parallel_test", "slave_test", "load_test",
         "failure_test", "legacy_test"}


def test_xtrabackup_basic_passes(kewpie):
    proc = kewpie.run("--suite=xtrabackup_basic", timeout=600)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    rows = re.findall(r"^\d{8}-\d{6} INFO (\S+)\s+\[ (\w+) \]\s+(\d+)$", out, re.M)
    assert {name for name, _, _ in rows} == {f"xtrabackup_basic.{t}" for t in TESTS}
    assert all(status == "pass" for _, status, _ in rows), out
    assert f"Executed {len(TESTS)}/{len(TESTS)} test cases, 100.00 percent" in out
    # every path the backup layer gave a tool is in the bot directory's backups/
    log = "\n".join(line for line in open(os.path.join(kewpie.workdir, "kewpie.log"))
                    if re.search(r"mariadb-backup|mariabackup|xtrabackup|mbstream|xbstream", line))
    paths = re.findall(r"--(?:target-dir|tmpdir|incremental-basedir)=(\S+)|-C (\S+)", log)
    paths = [a or b for a, b in paths]
    assert paths, "no backup command lines in kewpie.log"
    assert all("/bot0/backups/xtrabackup_basic." in p for p in paths), paths


def test_list_shows_the_backup_tests(kewpie):
    proc = kewpie.run("--list", "--suite=xtrabackup_basic")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {f"xtrabackup_basic.{t}" for t in TESTS} <= set(proc.stdout.split())
