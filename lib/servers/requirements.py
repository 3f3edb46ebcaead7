"""What a test asks for: a server type, one option list per server, join_cluster pairs.

A value type shared by the suite loader (which builds it from suite_config.py
and test modules), the server manager (which starts what it describes), the
option check and the sweep mode. Built in one place: :meth:`Requirements.declared`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from .options import Option


@dataclass(frozen=True)
class Requirements:
    """A set of servers to start together.

    For mysql servers a pair (a, b) makes b a replica of a; for galera servers
    it makes b join a's cluster.  ``on_disk`` keeps the vardirs on disk even
    when the workdir lives in /dev/shm (suites with ``storage = 'disk'``).
    ``network`` is ``'loopback'`` or ``'namespaces'`` (each server in its own
    network namespace, see lib.platform.netns).
    ``basedirs`` names each server's code tree (``'old'``, ``'new'``, a version, a
    path: :mod:`lib.servers.trees`); empty: every server runs the tree under test.
    ``arbitrator``: a Galera arbitrator (garbd, :mod:`lib.servers.garbd`) joins the
    cluster of server 0 as a member without data.
    ``snapshot_formation``: a Galera set may form from the snapshot of an earlier
    formation of its shape (False: the test must see a formation as its reference
    tool makes it, e.g. a mysql-test case that reads the state transfers in its error
    logs); not part of equality -- a set formed by state transfers serves either, and
    the manager resets one formed from a snapshot for a test that may not have it.
    """

    server_type: str
    servers: tuple[tuple[Option, ...], ...]
    pairs: tuple[tuple[int, int], ...] = ()
    on_disk: bool = False
    network: str = "loopback"
    basedirs: tuple[str, ...] = ()
    arbitrator: bool = False
    snapshot_formation: bool = field(default=True, compare=False)

    @classmethod
    def declared(cls, server_type: str, option_lists: Iterable[Sequence[Option]],
                 join_cluster: Iterable[Sequence[int]] = (), on_disk: bool = False,
                 network: str = "loopback", basedirs: Iterable[str] = (),
                 arbitrator: bool = False, snapshot_formation: bool = True) -> "Requirements":
        """Requirements from declarations as suites write them (lists become tuples)."""
        return cls(server_type=server_type, servers=tuple(tuple(o) for o in option_lists),
                   pairs=tuple((int(a), int(b)) for a, b in join_cluster), on_disk=on_disk,
                   network=network, basedirs=tuple(basedirs), arbitrator=bool(arbitrator),
                   snapshot_formation=snapshot_formation)

    @property
    def namespaced(self) -> bool:
        """Each server in its own network namespace."""
        return self.network == "namespaces"

    def basedir_of(self, index: int) -> str:
        """The code-tree label of server index ('' = the tree under test)."""
        return self.basedirs[index] if index < len(self.basedirs) else ""

    @property
    def count(self) -> int:
        """Number of servers."""
        return len(self.servers)
