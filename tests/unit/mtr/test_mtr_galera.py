"""mtr mode's Galera pieces: the Galera suites' skip lists for this machine, the
wsrep part of the reuse rule (each node Synced, Primary, in a cluster of its size), an mtr
set's nodes as nodes of the one node type formed in mtr's order by the one formation, and
mtr's forced restarts (include/force_restart.inc).

Covers: lib/mtr/galera.py, lib/mtr/server.py (MtrGaleraServer, mtr_server),
lib/servers/galera_cluster.py (ClusterFormation's start order),
lib/run/environment.py (the mtr kind), lib/mtr/execute.py (restart_forced),
lib/modes/mtr/lane.py (spare_runs)
"""
import os
from types import SimpleNamespace

import pytest

from lib.mtr import galera
from lib.mtr.server import MtrGaleraServer, MtrServer, mtr_server
from lib.platform.ports import PortLease
from lib.servers import galera_cluster
from lib.servers.codetree import CodeTree
from lib.servers.options import Option
from lib.servers.requirements import Requirements
from lib.servers.server import ServerSettings


def _mtr(tmp_path, name, options, cls=None):
    """A server of the mtr kind (no process): a Galera node when its options say wsrep_on."""
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd"})
    lease = PortLease(first=47400, size=4, lock_path=str(tmp_path / f"{name}.lock"), fd=-1)
    settings = ServerSettings(user=None, env={}, die_with_parent=True, start_timeout=10)
    make = cls or mtr_server
    return make(name, 0, tree, str(tmp_path / f"var_{name}"), lease, options, settings)


def node(tmp_path, name, state="Synced", component="Primary", size="2"):
    """An mtr Galera node whose wsrep status is a dict (its SQL faked); it counts the
    times kewpie closed its connection."""
    server = _mtr(tmp_path, name, [Option("wsrep-on", "1")])
    status = {"wsrep_ready": "ON", "wsrep_local_state_comment": state,
              "wsrep_cluster_status": component, "wsrep_cluster_size": size}
    server.execute = lambda sql, args=None, db=None: [] if sql.startswith("SET") else \
        [(k, v) for k, v in status.items() if k in args]
    server.is_alive = lambda: True
    server.closed = 0

    def close():
        server.closed += 1
    server.sql.close = close
    return server


def test_mtr_servers_with_wsrep_on_are_galera_nodes(tmp_path):
    from lib.servers.galera import GaleraServer
    assert isinstance(_mtr(tmp_path, "s0", [Option("wsrep-on", "ON")]), GaleraServer)
    assert isinstance(_mtr(tmp_path, "s1", [Option("wsrep-on", "1")]), MtrGaleraServer)
    plain = _mtr(tmp_path, "s2", [Option("wsrep-on", "OFF")])
    assert type(plain) is MtrServer and not galera.is_wsrep(plain)


def test_the_mtr_kind_makes_galera_nodes_of_wsrep_servers(tmp_path):
    from lib.run.environment import SERVER_KINDS
    node = _mtr(tmp_path, "s0", [Option("wsrep-on", "1")], SERVER_KINDS["mtr"].server_class)
    plain = _mtr(tmp_path, "s1", [], SERVER_KINDS["mtr"].server_class)
    assert type(node) is MtrGaleraServer and type(plain) is MtrServer


def test_an_mtr_node_takes_its_configs_wsrep_options_not_kewpies(tmp_path):
    server = _mtr(tmp_path, "s0", [Option("wsrep-on", "1"), Option("wsrep-provider", "/x.so"),
                                   Option("wsrep-cluster-address", "gcomm://")])
    names = [o.name for o in server.effective_options()]
    assert "wsrep-cluster-name" not in names and "wsrep-sst-auth" not in names
    assert names.count("wsrep-provider") == 1 and "datadir" in names
    assert server._start_args() == []   # no --wsrep-new-cluster: its gcomm:// bootstraps


def test_cluster_sizes_are_those_of_the_galera_nodes(tmp_path):
    servers = [node(tmp_path, "s0"), node(tmp_path, "s1"),
               _mtr(tmp_path, "s2", [Option("wsrep-on", "0")])]
    assert galera.cluster_sizes(servers) == {0: 2, 1: 2}
    assert all(s.closed for s in servers[:2])  # no connection of kewpie's stays open


def test_a_set_as_it_was_is_reusable(tmp_path):
    assert galera.reuse_problem([node(tmp_path, "s0"), node(tmp_path, "s1")], {0: 2, 1: 2},
                                timeout=0) == ""


def test_a_node_out_of_its_cluster_or_desynced_is_not(tmp_path):
    problem = galera.reuse_problem([node(tmp_path, "s0", size="1"),
                                    node(tmp_path, "s1", size="1")], {0: 2, 1: 2}, timeout=0)
    assert problem == "s0 is Synced in a Primary component of 1 (was Synced, Primary, 2)"
    assert "Donor/Desynced" in galera.reuse_problem(
        [node(tmp_path, "s0"), node(tmp_path, "s1", state="Donor/Desynced")], {0: 2, 1: 2},
        timeout=0)
    assert "non-Primary" in galera.reuse_problem(
        [node(tmp_path, "s0", component="non-Primary")], {0: 2}, timeout=0)


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
            self.paths = SimpleNamespace(datadir=str(path))
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
    from lib.modes.mtr.lane import spare_runs
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


def test_an_mtr_node_is_synced_only_once_its_log_says_ready_too(tmp_path):
    """No SQL of kewpie's before mysqld says ready for connections (connection ids as
    under mtr): the watch of its log waits for both lines."""
    log = tmp_path / "mysqld.1.err"
    log.write_text("")
    server = _mtr(tmp_path, "s1", [Option("wsrep-on", "1"), Option("log-error", str(log))])
    watch = server._join_watch(server._mysqld_log(), 0)
    log.write_text("[Note] WSREP: Synchronized with group\n")
    assert not watch.synced()
    with open(log, "a") as fh:
        fh.write("/usr/sbin/mariadbd: ready for connections.\n")
    assert watch.synced()


class Launched(MtrGaleraServer):
    """A node that records its launch in a shared list of events."""

    events: list

    def start(self, timeout=None, wait=True, extra_args=(), new_cluster=False):
        self.events.append(f"start {self.name}")

    def kill(self):
        self.events.append(f"kill {self.name}")


def _set_of_three(tmp_path, monkeypatch, in_group):
    from lib.servers import galera_cluster
    events = []
    nodes = []
    for name, address in (("s1", "gcomm://"), ("s2", "gcomm://a"), ("s3", "gcomm://a")):
        launched = _mtr(tmp_path, name, [Option("wsrep-on", "1"),
                                         Option("wsrep-cluster-address", address)], Launched)
        launched.events = events
        nodes.append(launched)
    monkeypatch.setattr(galera_cluster, "in_group", lambda s, t: events.append(
        f"group {s.name} {t:g}") or in_group)
    monkeypatch.setattr(galera_cluster, "wait_cluster", lambda nodes, t, reset=None, size=-1:
                        events.append(f"synced {','.join(n.name for n in nodes)}"))
    reqs = Requirements.declared("mtr", [[], [], []], snapshot_formation=False)
    return galera.MtrFormation(None, nodes, reqs), events


def test_joiners_start_in_mtr_order_at_the_formations_pace(tmp_path, monkeypatch):
    """Cold, as mtr (staggered: a bounded wait for each joiner to be in the group); from a
    snapshot each joiner's saved position is its group's at its turn: the next is
    launched only once the one before is in the group (Synced when its log cannot say)."""
    formation, events = _set_of_three(tmp_path, monkeypatch, in_group=False)
    formation.start(warm=False, reset=lambda n: None)
    assert events == ["start s1", "synced s1", "start s2",
                      f"group s2 {galera_cluster.JOIN_STAGGER:g}", "start s3",
                      "synced s1,s2,s3"]
    formation, events = _set_of_three(tmp_path, monkeypatch, in_group=False)
    formation.start(warm=True, reset=lambda n: None)
    assert events == ["start s1", "synced s1", "start s2", "group s2 60", "synced s2",
                      "start s3", "synced s1,s2,s3"]


def test_a_failed_formation_kills_every_server(tmp_path, monkeypatch):
    formation, events = _set_of_three(tmp_path, monkeypatch, in_group=True)

    def fail(nodes, t, reset=None, size=-1):
        raise galera_cluster.GaleraJoinError("no")
    monkeypatch.setattr(galera_cluster, "wait_cluster", fail)
    with pytest.raises(galera_cluster.GaleraJoinError):
        formation.start(warm=False, reset=lambda n: None)
    assert events == ["start s1", "kill s1", "kill s2", "kill s3"]
