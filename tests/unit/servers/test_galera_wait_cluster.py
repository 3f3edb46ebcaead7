"""wait_cluster restarts a joiner whose state transfer failed, once (the one join-failure
handling of native and mysql-test formations: with a reset of its datadir when given).

Covers: lib/servers/galera_cluster.py (wait_cluster, join_failed), lib/servers/galera.py
(JoinWatch)
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
