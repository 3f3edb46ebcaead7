"""SIGINT/SIGTERM stop every server; a SIGKILLed harness takes its servers with it.

Covers: lib/cli.py, lib/platform/process.py, lib/run/environment.py
"""
import signal
import time

import pytest

from tests.conftest import FIXTURE_SUITES, tagged


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_replication_suite(kewpie, sig):
    # --repeat keeps the run going for seconds after the first result line on a fast
    # machine (the signal must land mid-run, not after the last test)
    proc = kewpie.popen("--suite=replication_basic", "--repeat=3")
    for line in proc.stdout:
        if "[ pass ]" in line or "Taking clean db snapshot" in line:
            break
    time.sleep(0.3)
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
