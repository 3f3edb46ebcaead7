"""Galera clusters through the CLI: the suites, --start-and-exit, failures that explain.

Covers: lib/servers/galera.py, lib/servers/galera_cluster.py
"""
import json
import os
import re
import subprocess
import time

import psutil

from tests.conftest import FIXTURE_SUITES, tagged


def test_cluster_suites_pass(kewpie):
    proc = kewpie.run("--suite=cluster_basic,cluster_sst", timeout=900)
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert "STATUS: PASS, 8/8 test cases" in proc.stdout
    assert "wsrep_provider: /usr/lib/galera/libgalera_smm.so" in proc.stdout


def test_start_and_exit_cluster_then_cleanup(kewpie):
    proc = kewpie.run("--default-server-type=galera", "--suite=cluster_basic", "--start-and-exit")
    assert proc.returncode == 0, proc.stdout[-5000:]
    ports = [int(p) for p in re.findall(r"INFO MASTER_PORT: (\d+)", proc.stdout)]
    assert len(ports) == 3
    for key in ("GALERA_LISTEN_PORT", "GALERA_RECV_PORT", "GALERA_SST_PORT", "SOCKET_FILE",
                "VARDIR", "STATUS: running (pid ", "Started 3 server(s) (galera; a Galera "
                "cluster of 3), left running:", "STATUS: STARTED, 3 server(s) running"):
        assert key in proc.stdout
    desc = json.load(open(os.path.join(kewpie.workdir, "cluster.json")))
    assert desc["type"] == "galera" and len(desc["servers"]) == 3
    try:
        def client(port, sql):
            return subprocess.run(["mariadb", "-h127.0.0.1", f"-P{port}", "-uroot", "-N", "-e", sql],
                                  capture_output=True, text=True, check=True).stdout
        for port in ports:
            assert client(port, "SHOW STATUS LIKE 'wsrep_local_state_comment'").split() == \
                ["wsrep_local_state_comment", "Synced"]
        client(ports[0], "CREATE TABLE test.t1 (a INT NOT NULL AUTO_INCREMENT PRIMARY KEY); "
                         "INSERT INTO test.t1 VALUES (),(),(),(),()")
        for port in ports[1:]:
            out = client(port, "SET SESSION wsrep_sync_wait = 1; SELECT COUNT(*) FROM test.t1")
            assert out.split() == ["5"]
        use = desc["servers"][1]["scripts"]["use"]
        assert subprocess.run([use, "-N", "-e", "SELECT @@port"], capture_output=True,
                              text=True).stdout.split() == [str(ports[1])]
    finally:
        clean = kewpie.run("--mode=cleanup")
    assert clean.returncode == 0
    assert tagged(kewpie.workdir) == []


def test_wrong_provider_path_is_one_error_line_and_quick(kewpie):
    started = time.monotonic()
    proc = kewpie.run("--suite=cluster_basic", "--wsrep-provider-path=/nonexistent/libgalera.so")
    took = time.monotonic() - started
    assert proc.returncode == 2
    errors = [l for l in proc.stdout.splitlines() if " ERROR " in l]
    assert len(errors) == 1 and "/nonexistent/libgalera.so" in errors[0]
    assert took < 10


def test_failed_sst_is_reported_with_sst_log(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=sst_fails", timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:]
    out = proc.stdout
    assert "could not join the cluster" in out
    assert "--- joiner s1 error log" in out and "--- donor s0 error log" in out
    assert "SST log ---" in out
    assert "Access denied" in out  # what the donor's mariabackup said
    assert tagged(kewpie.workdir) == []


def wait_for_sst(kewpie, proc, timeout=180):
    """Return once a joiner's SST script runs (a state transfer is under way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "kewpie ended before any SST began"
        for child in tagged(kewpie.workdir):
            try:
                if any("wsrep_sst_" in part and "joiner" in " ".join(child.cmdline())
                       for part in child.cmdline()):
                    return
            except psutil.Error:
                pass
        time.sleep(0.05)
    raise AssertionError("no SST began")


def test_sigint_during_sst_leaves_nothing(kewpie):
    import signal
    proc = kewpie.popen("--suite=cluster_basic", "--no-cluster-snapshot")
    wait_for_sst(kewpie, proc)  # node 0 is up; node 1 is in the middle of its SST
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert time.monotonic() - sent < 15
    assert tagged(kewpie.workdir) == []
