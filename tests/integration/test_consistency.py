"""Consistency checks through the CLI: the shipped suites are valid, broken setups are not.

The detection-power fixtures (tests/fixtures/suites/broken_*) each break
consistency on purpose and assert validity, so each must fail, and its
failure must name the rows or operations and count ok / fail / unknown.

Covers: lib/consistency/, lib/suites/consistency_checks.py
"""
import os
import re

from tests.conftest import FIXTURE_SUITES

OPS = re.compile(r"\(ops: \d+ ok, \d+ fail, \d+ unknown\)")


def _rows(out):
    return dict(re.findall(r"INFO (\S+)\s+\[ (\w+) \]\s+\d+$", out, re.M))


# crash_recovery's kill -9 can hit a MariaDB bug its known_bugs.txt lists (kewpie-1: InnoDB
# asserts while recovering; docs/consistency.md).  --allow-known lets that one failure, and
# no other, leave the exit status 0; the tests below accept the failure only when the
# report names that bug.
KNOWN_KILL9 = "crash_recovery.kill9_test (kewpie-1 (open)"


def _passed_or_known(out, rows):
    """Every row passed, or failed on crash_recovery's known bug (and said so)."""
    known = re.findall(r"FAILED ON KNOWN BUGS: (.*)$", out, re.M)
    for name, status in rows.items():
        if status != "pass":
            assert name == "crash_recovery.kill9_test" and known and KNOWN_KILL9 in known[0], \
                (name, status, out[-6000:])
    return bool(known)


def test_disk_suite_in_a_workdir_mysql_cannot_enter_uses_the_lock_dir(kewpie):
    proc = kewpie.run("--suite=crash_recovery", "--allow-known")  # pytest's tmp dirs are 0700
    assert proc.returncode == 0, proc.stdout[-3000:]
    if not _passed_or_known(proc.stdout, _rows(proc.stdout)):
        assert "STATUS: PASS, 1/1" in proc.stdout  # and the test checked its datadir is on disk
    assert "crash_recovery needs its datadir on disk" not in proc.stdout


def _failure(workdir, name):
    with open(os.path.join(workdir, "failed", "latest", name, "failure.txt")) as fh:
        return fh.read()


def test_consistency_suites_are_valid(kewpie_reachable):
    kewpie = kewpie_reachable  # crash_recovery keeps its server on disk
    proc = kewpie.run("--suite=cluster_consistency,replication_consistency,crash_recovery",
                      "--allow-known", timeout=900)
    assert proc.returncode == 0, proc.stdout[-6000:]
    rows = _rows(proc.stdout)
    assert len(rows) == 6, rows
    _passed_or_known(proc.stdout, rows)
    for checker in ("bank", "append", "read-your-writes", "checksums", "pt-table-checksum"):
        assert re.search(rf"INFO {re.escape(checker)}: VALID", proc.stdout), checker
    assert OPS.search(proc.stdout)
    assert "INVALID" not in proc.stdout
    assert re.search(r"fault schedule: killed s\d", proc.stdout)
    assert "restarting the cluster from" in proc.stdout  # quorum loss healed
    assert re.search(r"fault schedule: partition in [\d.]+s: isolated s1", proc.stdout)


def test_detection_power(kewpie_reachable):
    kewpie = kewpie_reachable  # broken_durability keeps its server on disk
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}",
                      "--suite=broken_replication,broken_cluster,broken_durability",
                      "--force", timeout=600)
    assert proc.returncode == 1, proc.stdout[-6000:]
    assert _rows(proc.stdout) == {"broken_durability.unsafe_kill9_test": "fail",
        "broken_replication.drift_test": "fail", "broken_replication.lost_writes_test": "fail",
        "broken_replication.skip_errors_test": "fail", "broken_cluster.stale_read_test": "fail"}

    drift = _failure(kewpie.workdir, "broken_replication.drift_test")
    assert "checksums: INVALID" in drift
    assert "`append`.`rows` id=10000002: node='s0' on s0 but 'tampered' on s1" in drift
    assert "pt-table-checksum: INVALID" in drift
    assert re.search(r"pt-table-checksum: append\.rows chunk \d+ .* differs on s1", drift)
    assert OPS.search(drift)

    lost = _failure(kewpie.workdir, "broken_replication.lost_writes_test")
    assert "append: INVALID" in lost and OPS.search(lost)
    for key in ("10000003", "20000005"):
        assert re.search(rf"lost on s0: acknowledged insert id={key} is missing: #\d+ a\d "
                         rf"insert {key} on s0 .* ok", lost), key
        assert f"lost on s1: acknowledged insert id={key}" in lost

    skipped = _failure(kewpie.workdir, "broken_replication.skip_errors_test")
    assert "bank: INVALID" in skipped and OPS.search(skipped)
    assert "final balances on s2: 7 accounts instead of 8" in skipped
    assert re.search(r"read #\d+ b\d read .* on s2 .* ok", skipped)
    assert "`bank`.`accounts` id=3: on s0 but missing on s2" in skipped

    stale = _failure(kewpie.workdir, "broken_cluster.stale_read_test")
    assert "read-your-writes: INVALID" in stale and OPS.search(stale)
    assert re.search(r"stale read: register \d+ = \d+ but \d+ was acknowledged .* read #\d+ r\d "
                     r"read .* on s1 .* ok; write #\d+ r\d write .* ok", stale)
    unsafe = _failure(kewpie.workdir, "broken_durability.unsafe_kill9_test")
    assert re.search(r"append: INVALID \(ops: \d+ ok, \d+ fail, \d+ unknown\): [1-9]\d* lost", unsafe)
    assert re.search(r"lost on s0: acknowledged insert id=\d+ is missing: #\d+ a\d insert", unsafe)

    histories = os.path.join(kewpie.workdir, "failed", "latest", "broken_cluster.stale_read_test",
                             "tool_logs", "histories")
    assert any(n.endswith("-ryw.jsonl") for n in os.listdir(histories))
