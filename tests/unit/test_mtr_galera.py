"""mtr mode's Galera pieces: the Galera suites' skip lists for this machine, the
wsrep part of the reuse rule (each node Synced, Primary, in a cluster of its size) and
mtr's forced restarts (include/force_restart.inc).

Covers: lib/mtr/galera.py (with the retry of a joiner whose state transfer failed), lib/mtr/execute.py (restart_forced), lib/run/mtr_lane.py (spare_runs)
"""
import os
import time

import pytest

from lib.mtr import galera
from lib.servers.logs import LogWatch
from lib.servers.options import Option


class FakeNode:
    """A server whose wsrep status is a dict (no SQL)."""

    def __init__(self, name, status, wsrep=True):
        self.name = name
        self.status = status
        self.user_options = [Option("wsrep-on", "1")] if wsrep else []
        self.sql = self
        self.closed = 0

    def is_alive(self):
        return True

    def execute(self, sql, args=None):
        if sql.startswith("SET"):
            return []
        return list(self.status.items())

    def close(self):
        self.closed += 1


def node(name, state="Synced", component="Primary", size="2"):
    return FakeNode(name, {"wsrep_ready": "ON", "wsrep_local_state_comment": state,
                           "wsrep_cluster_status": component, "wsrep_cluster_size": size})


def test_cluster_sizes_are_those_of_the_galera_nodes():
    servers = [node("s0"), node("s1"), FakeNode("s2", {}, wsrep=False)]
    assert galera.cluster_sizes(servers) == {0: 2, 1: 2}
    assert all(s.closed for s in servers[:2])  # no connection of kewpie's stays open


def test_a_set_as_it_was_is_reusable():
    assert galera.reuse_problem([node("s0"), node("s1")], {0: 2, 1: 2}, timeout=0) == ""


def test_a_node_out_of_its_cluster_or_desynced_is_not():
    problem = galera.reuse_problem([node("s0", size="1"), node("s1", size="1")], {0: 2, 1: 2},
                                   timeout=0)
    assert problem == "s0 is Synced in a Primary component of 1 (was Synced, Primary, 2)"
    assert "Donor/Desynced" in galera.reuse_problem(
        [node("s0"), node("s1", state="Donor/Desynced")], {0: 2, 1: 2}, timeout=0)
    assert "non-Primary" in galera.reuse_problem(
        [node("s0", component="non-Primary")], {0: 2}, timeout=0)


def test_skip_rules_follow_the_tools_found(monkeypatch, tmp_path):
    monkeypatch.setattr(galera, "_which", lambda name: name in ("ss", "pkill"))
    rules = galera.galera_skip_rules(str(tmp_path), {"version-ssl-library": "OpenSSL 3.0.17"})
    g = os.path.join(str(tmp_path), "suite", "galera")
    assert rules[os.path.join(g, "include", "have_stunnel.combinations")] == \
        "Need 'stunnel' utility"
    assert rules[os.path.join(g, "t", "galera_sst_cn_injection.combinations")] == ["rsync"]
    assert rules[os.path.join(g, "include", "have_qpress.combinations")] == "Need 'qpress' utility"
    assert os.path.join(g, "include", "have_pkill.combinations") not in rules
    old = galera.galera_skip_rules(str(tmp_path), {"version-ssl-library": "OpenSSL 1.1.0"})
    assert old[os.path.join(g, "t", "galera_sst_cn_injection.combinations")] == \
        "does not work with OpenSSL <= 1.1.1"


def test_a_forced_restart_is_read_from_the_datadirs(tmp_path):
    from lib.mtr.execute import restart_forced

    class Datadir:
        def __init__(self, path):
            self.datadir = str(path)
    first, second = tmp_path / "d1", tmp_path / "d2"
    for d in (first, second):
        (d / "mtr").mkdir(parents=True)
    servers = [Datadir(first), Datadir(second)]
    assert not restart_forced(servers)
    (second / "mtr" / "force_restart").write_text("1\n")   # include/force_restart.inc
    assert restart_forced(servers)
    assert not restart_forced(servers, "force_restart_if_skipped")


def test_spare_ports_come_in_runs_of_three_consecutive_ones(tmp_path):
    # Galera listens for IST on its base port + 1: #galera_port and #ist_port must be
    # consecutive leased ports (galera_3nodes.galera-features#119 met a foreign 9324)
    from lib.platform.ports import PortLease
    from lib.run.mtr_lane import spare_runs
    leases = [PortLease(first=first, size=4, lock_path=str(tmp_path / str(first)), fd=-1)
              for first in (9320, 9340, 9360)]
    clients = [9320, 9321, 9322]
    assert spare_runs(leases, clients) == [(9340, 9341, 9342), (9360, 9361, 9362)]
    assert spare_runs(leases[:1], [9320]) == [(9321, 9322, 9323)]


def test_tool_groups_reach_the_servers_cnf(tmp_path):
    """[mariabackup] of a test's .cnf reaches the server's own my.cnf, as under mtr (whose
    server reads the whole my.cnf): galera.galera_sst_mariabackup_use_memory."""
    from lib.mtr.cnf import MtrConfig
    from lib.mtr.server import tool_sections
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld]\nwsrep_sst_method=mariabackup\n\n[mariabackup]\nuse_memory=129m\n"
                   "\n[sst]\nsst_initial_timeout=120\n\n[client]\nuser=root\n\n[xtrabackup]\n")
    sections = tool_sections(MtrConfig.read(str(cnf)))
    assert list(sections) == ["sst", "mariabackup"]
    assert [(o.name, o.value) for o in sections["mariabackup"]] == [("use-memory", "129m")]
    assert [(o.name, o.value) for o in sections["sst"]] == [("sst-initial-timeout", "120")]


class Joiner(FakeNode):
    """A joiner whose state transfer fails the first `failures` times it is launched."""

    def __init__(self, failures):
        super().__init__("s2", {})
        self.failures = failures
        self.events = []

    def wait_ready(self, timeout=None):
        self.events.append("ready")

    def kill(self):
        self.events.append("kill")

    def start(self, wait=True):
        self.events.append("start")


def _failing_sync(monkeypatch):
    def wait_wsrep_ready(server, timeout):
        if server.failures:
            server.failures -= 1
            raise galera.JoinFailedError(f"server {server.name}: state transfer failed")
        server.events.append("synced")
    monkeypatch.setattr(galera, "wait_wsrep_ready", wait_wsrep_ready)


def test_a_joiner_whose_state_transfer_failed_is_reset_and_launched_once_more(monkeypatch):
    _failing_sync(monkeypatch)
    joiner, reset = Joiner(failures=1), []
    galera.wait_joined(joiner, 60, reset.append)
    assert joiner.events == ["ready", "kill", "start", "ready", "synced"]
    assert reset == [joiner]   # its datadir given back between the kill and the launch


def test_a_second_failure_or_no_reset_is_the_formations_failure(monkeypatch):
    _failing_sync(monkeypatch)
    joiner = Joiner(failures=2)
    with pytest.raises(galera.JoinFailedError):
        galera.wait_joined(joiner, 60, lambda s: None)
    assert joiner.events == ["ready", "kill", "start", "ready"]
    once = Joiner(failures=1)
    with pytest.raises(galera.JoinFailedError):
        galera.wait_joined(once, 60)
    assert once.events == ["ready"]


def test_the_join_failure_is_seen_in_the_joiners_log(tmp_path, monkeypatch):
    """wait_wsrep_ready fails at once on Galera's line, not after its timeout."""
    log = tmp_path / "mysqld.3.err"
    log.write_text("2026-11-26 13:43:59 2 [ERROR] WSREP: Receiving IST failed, node restart "
                   "required: IST receiver reported failure: 'IST didn't contain all write "
                   "sets, expected last: 6 last received: 5' (71)\n")

    class Failed(FakeNode):
        def log_watch(self, needle):
            return LogWatch(str(log), needle, 0)

        def error_log_tail(self, lines):
            return log.read_text()
    monkeypatch.setattr(galera, "MtrServer", Failed)  # the watch is made for mtr servers
    joining = Failed("s2", {"wsrep_ready": "OFF", "wsrep_local_state_comment": "Joining"})
    started = time.monotonic()
    with pytest.raises(galera.JoinFailedError, match="node restart required"):
        galera.wait_wsrep_ready(joining, 30)
    assert time.monotonic() - started < 5


class Launched(FakeNode):
    """A node that records its launch in a shared list of events."""

    def __init__(self, name, events, address):
        super().__init__(name, {})
        self.events = events
        self.user_options = [Option("wsrep-on", "1"), Option("wsrep-cluster-address", address)]
        self.settings = type("Settings", (), {"start_timeout": 10})()

    def start(self, wait=True):
        self.events.append(f"start {self.name}")

    def wait_ready(self, timeout=None):
        pass

    def kill(self):
        self.events.append(f"kill {self.name}")


def _set_of_three(monkeypatch, in_group):
    events = []
    nodes = [Launched("s1", events, "gcomm://"), Launched("s2", events, "gcomm://a"),
             Launched("s3", events, "gcomm://a")]
    monkeypatch.setattr(galera, "wait_wsrep_ready", lambda s, t: None)
    monkeypatch.setattr(galera, "in_group", lambda s, t: events.append(f"group {s.name} {t:g}")
                        or in_group)
    monkeypatch.setattr(galera, "wait_joined",
                        lambda s, t, reset=None: events.append(f"joined {s.name}"))
    return nodes, events


def test_ordered_joiners_wait_for_the_one_before_however_long(monkeypatch):
    """From a snapshot each joiner's saved position is its group's at its turn: the next
    is launched only once the one before is in the group (Synced when its log cannot say)."""
    nodes, events = _set_of_three(monkeypatch, in_group=False)
    galera.start_in_mtr_order(nodes, 60, ordered=True)
    assert events == ["start s1", "start s2", "group s2 60", "joined s2", "start s3",
                      "joined s2", "joined s3"]
    nodes, events = _set_of_three(monkeypatch, in_group=False)
    galera.start_in_mtr_order(nodes, 60)   # as mtr: a bounded stagger, then on
    assert events == ["start s1", "start s2", f"group s2 {galera.JOIN_STAGGER:g}", "start s3",
                      "joined s2", "joined s3"]
