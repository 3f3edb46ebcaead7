"""wait_cluster restarts a joiner whose state transfer failed, once (the one join-failure
handling of native and mysql-test formations: with a reset of its datadir when given).

and wait_applied waits for every node to apply what its cluster committed, failing at
once when one cannot.

Covers: lib/servers/galera_cluster.py (wait_cluster, join_failed, committed_positions,
wait_applied), lib/servers/galera.py (JoinWatch)
"""
from __future__ import annotations

import pytest

from lib.servers import galera_cluster
from lib.servers.galera_cluster import GaleraJoinError, wait_cluster


class _Node:
    """A node as wait_cluster sees it: its join fails `failures` times, then it syncs."""

    def __init__(self, name: str, failures: int = 0) -> None:
        self.name = name
        self.failures = failures
        self.starts = 0
        self.kills = 0

    def is_alive(self) -> bool:
        return True

    @property
    def joining(self) -> "_Node":
        return self  # its log "says" node restart required while failures remain

    def failed(self) -> bool:
        return self.failures > 0

    def synced(self) -> bool:
        return not self.failed()

    def inconsistent(self) -> bool:
        return False

    def error_line(self) -> str:
        return ""

    def kill(self) -> None:
        self.kills += 1
        self.failures -= 1

    def start(self, wait: bool = True) -> None:
        assert wait is False
        self.starts += 1

    def is_synced(self, size: int | None = None) -> bool:
        return not self.failed()


def test_a_failed_join_is_restarted_once_and_the_cluster_forms():
    nodes = [_Node("s0"), _Node("s1"), _Node("s2", failures=1)]
    wait_cluster(nodes, timeout=5)  # type: ignore[arg-type]
    assert [(n.kills, n.starts) for n in nodes] == [(0, 0), (0, 0), (1, 1)]


def test_a_reset_gives_the_node_its_datadir_back_before_its_relaunch():
    resets = []
    nodes = [_Node("s0"), _Node("s1", failures=1)]
    wait_cluster(nodes, timeout=5, reset=lambda n: resets.append((n.name, n.kills, n.starts)))  # type: ignore[arg-type]
    assert resets == [("s1", 1, 0)] and nodes[1].starts == 1


def test_a_second_failure_of_the_same_node_fails_the_wait(monkeypatch):
    monkeypatch.setattr(galera_cluster, "cluster_evidence", lambda nodes, **kw: "evidence")
    nodes = [_Node("s0"), _Node("s2", failures=2)]
    with pytest.raises(GaleraJoinError, match="node s2's state transfer failed again"):
        wait_cluster(nodes, timeout=5)  # type: ignore[arg-type]
    assert nodes[1].starts == 1


class _Inconsistent(_Node):
    """A node whose log says it found itself inconsistent (it leaves its cluster)."""

    def inconsistent(self) -> bool:
        return True

    def error_line(self) -> str:
        return "[ERROR] WSREP: Inconsistency detected: Inconsistent by consensus"


def test_an_inconsistent_node_fails_the_wait_at_once_quoting_its_log(monkeypatch):
    monkeypatch.setattr(galera_cluster, "cluster_evidence", lambda nodes, **kw: "evidence")
    nodes = [_Node("s0"), _Inconsistent("s1", failures=1)]
    with pytest.raises(GaleraJoinError, match="node s1 is inconsistent and leaves its cluster: "
                                              r"\[ERROR\] WSREP: Inconsistency detected"):
        wait_cluster(nodes, timeout=600)  # type: ignore[arg-type]


class _Applier(_Node):
    """A Synced node that applies one write set per look at its position (and leaves
    its cluster as inconsistent when told to fail at a seqno)."""

    def __init__(self, name: str, uuid: str, seqno: int, fails_at: int | None = None) -> None:
        super().__init__(name)
        self.uuid, self.seqno, self.fails_at, self.looks = uuid, seqno, fails_at, 0
        self.left = False

    def inconsistent(self) -> bool:
        return self.left

    def wsrep_status(self, keys: tuple[str, ...]) -> dict[str, str]:
        self.looks += 1
        if self.fails_at is not None and self.seqno + 1 >= self.fails_at:
            self.left = True
        else:
            self.seqno += 1 if self.looks > 1 else 0
        return {"wsrep_local_state_uuid": self.uuid, "wsrep_last_committed": str(self.seqno)}


def test_the_wait_for_applied_write_sets_reads_each_clusters_target():
    nodes = [_Applier("s0", "a", 10), _Applier("s1", "a", 7), _Applier("s2", "b", 3)]
    targets = galera_cluster.committed_positions(nodes)  # type: ignore[arg-type]
    assert targets == {"a": 10, "b": 3}
    galera_cluster.wait_applied(nodes, targets, timeout=5)  # type: ignore[arg-type]
    assert nodes[1].seqno >= 10   # s1 was waited for until it had applied s0's writes


def test_a_node_that_cannot_apply_fails_the_wait_at_once(monkeypatch):
    monkeypatch.setattr(galera_cluster, "cluster_evidence", lambda nodes, **kw: "evidence")
    nodes = [_Applier("s0", "a", 10), _Applier("s1", "a", 8, fails_at=10)]
    targets = galera_cluster.committed_positions(nodes)  # type: ignore[arg-type]
    with pytest.raises(GaleraJoinError, match="node s1 is inconsistent and leaves its cluster"):
        galera_cluster.wait_applied(nodes, targets, timeout=600)  # type: ignore[arg-type]
