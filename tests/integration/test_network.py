"""Servers in network namespaces: the network suites through the CLI, the detection
fixtures, and nothing of kewpie's left in `ip netns list` / `ip link` after a normal
run, an interrupted run (SIGINT) and a SIGKILLed run plus --mode=cleanup.

Skipped, with the reason, where namespaces cannot be made (not root, no iproute2
or nftables).

Covers: lib/platform/netns.py, lib/platform/netrules.py, lib/platform/nsenter.py,
lib/consistency/netfaults.py
"""
import os
import re
import signal
import subprocess
import time

import pytest

from lib.platform.netns import prefix_for, unavailable_reason
from tests.conftest import FIXTURE_SUITES, tagged

WHY = unavailable_reason()
pytestmark = pytest.mark.skipif(bool(WHY), reason=f"network namespaces: {WHY}")


def _rows(out):
    return dict(re.findall(r"INFO (\S+)\s+\[ (\w+) \]\s+\d+$", out, re.M))


def _ours(workdir):
    """Namespaces and host links whose names carry the workdir's prefix."""
    prefix = prefix_for(workdir)
    spaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return ([line.split()[0] for line in spaces.splitlines() if line.startswith(prefix)],
            [line for line in links.splitlines() if prefix in line or "10.77.0." in line])


def test_network_suites_ci_subset(kewpie_reachable):
    kewpie = kewpie_reachable
    proc = kewpie.run("--suite=cluster_partitions,cluster_isolation,replication_network",
                      "cluster_partitions.partitions_test", "cluster_isolation.isolation_test",
                      "replication_network.partition_test", timeout=600)
    out = proc.stdout
    assert proc.returncode == 0, out[-6000:]
    assert _rows(out) == {"cluster_partitions.partitions_test": "pass",
                          "cluster_isolation.isolation_test": "pass",
                          "replication_network.partition_test": "pass"}, out[-3000:]
    # every fault in the log with its timing
    assert re.search(r"fault schedule: partition in [\d.]+s: s0 \| s1, s2 \(primary s1, s2", out)
    assert re.search(r"fault schedule: healed partition s0 \| s1, s2 in [\d.]+s", out)
    assert re.search(r"minority: VALID .*were refused while it was cut off", out)
    assert re.search(r"isolation default .*: (VALID|INVALID) \(\d+ ok", out)
    for checker in ("bank", "append", "checksums"):
        assert re.search(rf"INFO {re.escape(checker)}: VALID", out), checker
    assert _ours(kewpie.workdir) == ([], [])


def test_detection_fixtures(kewpie_reachable):
    kewpie = kewpie_reachable
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=broken_network,broken_isolation",
                      "--force", timeout=600)
    out = proc.stdout
    assert proc.returncode == 1, out[-6000:]
    assert _rows(out) == {"broken_network.split_brain_test": "fail",
                          "broken_isolation.g_single_test": "fail"}
    assert re.search(r"fault schedule: split brain in [\d.]+s: s0 \| s1, s2, both halves", out)
    with open(os.path.join(kewpie.workdir, "failed", "latest", "broken_network.split_brain_test",
                           "failure.txt")) as fh:
        split = fh.read()
    assert "append: INVALID" in split and re.search(r"\d+ diverged", split)
    assert "checksums: INVALID" in split
    assert re.search(r"account \d: balance \d+ on s0 but \d+ on s1", split)
    assert "list-append: INVALID (ops: 5 ok, 1 fail, 0 unknown): 1 G-single" in out
    assert "G-single: T#4 -rw-> T#3 -wr-> T#4" in out
    assert _ours(kewpie.workdir) == ([], [])


def _start_and_wait_for_namespaces(kewpie, count=4, timeout=120):
    """kewpie running replication_network once its namespaces exist and a server has
    started inside one (the state both tests interrupt)."""
    proc = kewpie.popen("--suite=replication_network", "partition_test")
    deadline = time.monotonic() + timeout
    while len(_ours(kewpie.workdir)[0]) < count or not tagged(kewpie.workdir):
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        assert time.monotonic() < deadline, "the namespaces and servers never appeared"
        time.sleep(0.1)
    return proc


def test_interrupted_and_killed_runs_leave_nothing(kewpie_reachable):
    kewpie = kewpie_reachable
    proc = _start_and_wait_for_namespaces(kewpie)
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, out[-3000:]
    assert _ours(kewpie.workdir) == ([], []), out[-3000:]

    proc = _start_and_wait_for_namespaces(kewpie)
    proc.kill()
    proc.communicate(timeout=60)
    left, _ = _ours(kewpie.workdir)
    assert len(left) == 4, left  # a SIGKILLed kewpie cannot clean up: cleanup must
    cleanup = kewpie.run("--mode=cleanup")
    assert cleanup.returncode == 0, cleanup.stdout[-3000:]
    assert "removed network namespaces left by an earlier run" in cleanup.stdout
    assert _ours(kewpie.workdir) == ([], [])
