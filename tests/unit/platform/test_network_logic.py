"""Network namespaces and faults: names, nft rules, partition shapes, the minority check.

Covers: lib/platform/netns.py, lib/platform/netrules.py, lib/consistency/netfaults.py,
lib/suites/loader.py (network)
"""
import pytest

from lib.consistency.oplog import FAIL, OK, History
from lib.consistency.netfaults import Partition, check_minority_refused, control_of
from lib.consistency.faults import FaultError
from lib.errors import SuiteError
from lib.platform import netrules
from lib.platform.netns import NetHost, address_of, prefix_for
from lib.platform.netrules import LinkState, NetworkControl, blocked_pairs, render_nft
from lib.servers.requirements import Requirements
from lib.suites import loader


class FakeServer:
    server_type = "mysql"

    def __init__(self, index, network=None):
        self.index = index
        self.name = f"s{index}"
        self.net = NetHost(f"kwtest-bot0-s{index}", address_of(index), index)
        self.network = network

    def __repr__(self):
        return self.name


def servers(n):
    control = NetworkControl([NetHost(f"kwtest-bot0-s{i}", address_of(i), i) for i in range(n)])
    return [FakeServer(i, control) for i in range(n)], control


def pairs(partition):
    return {(a.index, b.index) for a, b in partition.cuts}


def test_prefix_is_stable_short_and_per_workdir():
    assert prefix_for("/tmp/a") == prefix_for("/tmp/a/")
    assert prefix_for("/tmp/a") != prefix_for("/tmp/b")
    assert len(prefix_for("/tmp/a")) == 10 and prefix_for("/tmp/a").startswith("kw")
    assert address_of(0) == "10.77.0.11" and address_of(2) == "10.77.0.13"


def test_render_nft_drops_sources_and_a_share_of_output():
    text = render_nft(LinkState(deaf_to={"10.77.0.12", "10.77.0.11"}, loss=30))
    assert text.startswith("table inet kewpie\ndelete table inet kewpie\n")
    assert "ip saddr { 10.77.0.11, 10.77.0.12 } drop" in text
    assert 'oifname "eth0" numgen random mod 100 < 30 drop' in text
    clean = render_nft(LinkState())
    assert "drop" not in clean and "hook input" in clean and "hook output" in clean


def test_blocked_pairs():
    assert blocked_pairs([[0], [1, 2]], 3) == {(0, 1), (1, 0), (0, 2), (2, 0)}
    assert blocked_pairs([[0, 1]], 3) == {(0, 2), (2, 0), (1, 2), (2, 1)}  # s2 alone
    assert blocked_pairs([[0, 1, 2]], 3) == set()


def test_partition_shapes():
    group, _ = servers(3)
    assert pairs(Partition.halves(group)) == {(0, 1), (1, 0), (0, 2), (2, 0)}
    assert Partition.halves(group).label == "s0 | s1, s2"
    iso = Partition.isolate_one(group[2], group)
    assert pairs(iso) == {(2, 0), (0, 2), (2, 1), (1, 2)} and iso.minority() == []  # not galera
    assert pairs(Partition.bridge(group)) == {(0, 2), (2, 0)}
    assert pairs(Partition.majority_ring(group)) == {(0, 2), (2, 0)}
    one = Partition.one_way(group[1:], group[:1], group)
    assert pairs(one) == {(1, 0), (2, 0)} and "s0 deaf to s1, s2" in one.label
    five, _ = servers(5)
    ring = Partition.majority_ring(five)
    for i in range(5):  # each hears itself and its two ring neighbours: a majority of 5
        heard = {j for j in range(5) if (j, i) not in pairs(ring)}
        assert heard == {i, (i + 1) % 5, (i - 1) % 5}
    assert len({frozenset(j for j in range(5) if (j, i) not in pairs(ring)) for i in range(5)}) == 5


def test_network_control_applies_rules_per_namespace(monkeypatch):
    calls = []
    monkeypatch.setattr(netrules, "in_ns", lambda ns, argv, input=None, check=True:
                        calls.append((ns, argv, input)) or "")
    group, control = servers(3)
    control.cut({(0, 1), (0, 2)})
    assert [c[0] for c in calls] == ["kwtest-bot0-s1", "kwtest-bot0-s2"]
    assert "ip saddr { 10.77.0.11 } drop" in calls[0][2]
    assert "deaf to 10.77.0.11" in control.describe()
    calls.clear()
    control.set_loss([0], 25)
    assert "< 25 drop" in calls[0][2]
    calls.clear()
    control.heal()
    assert sorted(c[0] for c in calls) == ["kwtest-bot0-s0", "kwtest-bot0-s1", "kwtest-bot0-s2"]
    assert control.describe() == "all links clean"
    control.set_delay([1], 50, 5)
    assert ["tc", "qdisc", "add", "dev", "eth0", "root", "netem", "delay", "50ms", "5ms"] in \
        [c[1] for c in calls]


def test_network_faults_need_namespaces():
    plain = FakeServer(0)
    plain.net = None
    with pytest.raises(FaultError, match="network = 'namespaces'"):
        control_of([plain])


def test_minority_refused_check():
    group, _ = servers(3)
    for s in group:
        s.server_type = "galera"
    part = Partition.halves(group)
    history = History()
    history.t0 = 100.0
    part.windows = [(101.0, 103.0)]
    history.add("b0", "s0", "read", {}, FAIL, 1.5, 1.6, "1047 WSREP has not yet prepared node")
    history.add("b1", "s1", "read", {}, OK, 1.5, 1.6)
    history.add("b0", "s0", "read", {}, OK, 0.5, 0.6)   # before the cut
    verdict = check_minority_refused(history, part)
    assert verdict.valid, verdict.report()
    assert "all 1 operations on the minority (s0) were refused" in verdict.summary
    history.add("b0", "s0", "transfer", {"from": 1}, OK, 2.0, 2.1)
    verdict = check_minority_refused(history, part)
    assert verdict.invalid and "acknowledged on the minority: #3 b0 transfer" in verdict.evidence[0]


def test_suite_network_setting(tmp_path):
    suite = tmp_path / "net"
    suite.mkdir()
    (suite / "suite_config.py").write_text("network = 'namespaces'\n")
    assert loader.load_suite_config("net", str(suite)).network == "namespaces"
    (suite / "suite_config.py").write_text("network = 'wifi'\n")
    with pytest.raises(SuiteError, match="network must be one of 'loopback', 'namespaces'"):
        loader.load_suite_config("net", str(suite))
    reqs = Requirements.declared("galera", [[]], network="namespaces")
    assert reqs.namespaced and reqs != Requirements.declared("galera", [[]])
