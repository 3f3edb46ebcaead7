"""The Galera arbitrator of native suites (server_requests = {'arbitrator': True}): two
data nodes and garbd keep the quorum when one data node dies; garbd listens on
127.0.0.1 only, is recorded in the state file, and nothing of it is left after a
SIGTERM of the harness, nor after a SIGKILL followed by --mode=cleanup.

Covers: lib/servers/garbd.py, lib/servers/galera_cluster.py, lib/servers/manager.py,
lib/suites/loader.py (the arbitrator request), lib/servers/state.py
"""
import json
import os
import re
import signal

import psutil

from tests.conftest import FIXTURE_SUITES, tagged

SUITE = (f"--suitepath={FIXTURE_SUITES}", "--suite=arbitrator")


def hold(kewpie):
    """Start the hold test; return (the kewpie process, garbd's pid) once garbd runs."""
    proc = kewpie.popen(*SUITE, "hold")
    seen = []
    for line in proc.stdout:
        seen.append(line)
        found = re.search(r"ARBITRATOR UP pid=(\d+)", line)
        if found:
            return proc, int(found.group(1))
    proc.wait()
    raise AssertionError("the arbitrator never came up:\n" + "".join(seen[-40:]))


def listening(pid):
    """What pid listens on (address, port)."""
    return {(c.laddr.ip, c.laddr.port) for c in psutil.Process(pid).net_connections("inet")
            if c.status == psutil.CONN_LISTEN}


def gone(pid):
    """pid has exited (a zombie not yet reaped by init counts as gone)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_two_nodes_and_garbd_keep_quorum_when_a_node_dies(kewpie):
    proc = kewpie.run(*SUITE, "quorum", timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert "arbitrator.quorum_test" in proc.stdout and "[ pass ]" in proc.stdout


def test_garbd_gone_after_sigterm(kewpie):
    proc, pid = hold(kewpie)
    try:
        assert psutil.Process(pid).name() == "garbd"
        assert listening(pid) and {ip for ip, _ in listening(pid)} == {"127.0.0.1"}
        state = json.load(open(os.path.join(kewpie.workdir, "servers.json")))
        assert [s["pid"] for s in state["servers"] if s["type"] == "garbd"] == [pid]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert gone(pid)
    assert tagged(kewpie.workdir) == []


def test_garbd_gone_after_sigkill_and_cleanup(kewpie):
    proc, pid = hold(kewpie)
    proc.kill()
    proc.communicate(timeout=30)
    clean = kewpie.run("--mode=cleanup")
    assert clean.returncode == 0, clean.stdout[-3000:]
    assert gone(pid)
    assert tagged(kewpie.workdir) == []
    assert not os.path.exists(os.path.join(kewpie.workdir, "servers.json"))
