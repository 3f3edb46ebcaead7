"""SIGINT/SIGTERM stop every server; a SIGKILLed harness takes its servers with it.

Covers: lib/cli.py, lib/platform/process.py, lib/run/environment.py
"""
import signal
import time

import pytest

from tests.conftest import FIXTURE_SUITES, tagged


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_replication_suite(kewpie, sig):
    # replication_basic's three servers; the test says MID-RUN once its replicas applied
    # a write and then waits: the signal provably lands mid-run, whatever the speed
    proc = kewpie.popen(f"--suitepath={FIXTURE_SUITES}", "--suite=replication_midrun")
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "MID-RUN" in line:
            break
    assert seen and "MID-RUN" in seen[-1], "".join(seen[-40:])
    assert len(tagged(kewpie.workdir)) >= 3  # the primary and its two replicas run
    sent = time.monotonic()
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == 128 + sig
    assert took < 15
    assert tagged(kewpie.workdir) == []


def test_harness_killed_takes_servers_down(kewpie):
    proc = kewpie.popen(f"--suitepath={FIXTURE_SUITES}", "--suite=slow")
    for line in proc.stdout:
        if "SLEEPING" in line:
            break
    assert tagged(kewpie.workdir), "the server should be running"
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while tagged(kewpie.workdir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tagged(kewpie.workdir) == []
    # The next run in the same workdir starts cleanly.
    again = kewpie.run("--suite=main", "basic")
    assert again.returncode == 0, again.stdout
