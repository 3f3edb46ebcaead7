"""The servers a hunt's trials run on: one server, a primary and replicas, a Galera
cluster, or two servers to compare.

From the command line (:func:`parse_topology`)::

    single                 one server (the default)
    replication[:N]        a primary and N replicas (default 1)
    galera[:N]             a Galera cluster of N nodes (default 3)
    compare                two independent servers: s1 may run another code tree (the
                           second --basedir) and extra options (--compare-mysqld)

or from a suite's ``suite_config.py`` (:meth:`Topology.from_requirements`): a
Galera suite is ``galera``, a suite whose servers replicate is
``replication``, two or more servers that do not is ``compare`` (s0 against
each other one), one server is ``single``.  The load always runs on s0.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

from ..errors import SuiteError
from ..servers.options import Option, parse_options
from ..servers.requirements import Requirements
from .errors import HuntError

KINDS = ("single", "replication", "galera", "compare")
MAX_SERVERS = 9


@dataclass(frozen=True)
class Topology:
    """A kind of server set and the Requirements that start it."""

    kind: str
    requirements: Requirements
    source: str = "command line"   # or the suite's name

    @classmethod
    def from_requirements(cls, reqs: Requirements, source: str) -> "Topology":
        """The topology of a suite's servers (see the module docstring)."""
        if reqs.server_type == "galera":
            kind = "galera" if reqs.count > 1 else "single"
        elif reqs.pairs:
            kind = "replication"
        elif reqs.count > 1:
            kind = "compare"
        else:
            kind = "single"
        return cls(kind, reqs, source)

    @property
    def count(self) -> int:
        """How many servers."""
        return self.requirements.count

    @property
    def replicated(self) -> bool:
        """True when servers should hold the same data after a trial (replicas, nodes)."""
        return self.kind in ("replication", "galera") and self.count > 1

    def with_options(self, extra: Sequence[Option]) -> Requirements:
        """The Requirements with extra options (a trial's random ones) added to every
        server (after the topology's own, so they win)."""
        if not extra:
            return self.requirements
        return replace(self.requirements, servers=tuple(
            tuple(opts) + tuple(extra) for opts in self.requirements.servers))

    def describe(self) -> dict[str, Any]:
        """Kind, server type, per-server options and code trees, pairs (for finding.json)."""
        reqs = self.requirements
        return {"kind": self.kind, "source": self.source, "server_type": reqs.server_type,
                "servers": [{"name": f"s{i}", "options": [o.as_arg() for o in opts],
                             "basedir": reqs.basedir_of(i) or "default"}
                            for i, opts in enumerate(reqs.servers)],
                "pairs": [list(p) for p in reqs.pairs]}


def parse_topology(spec: str, compare_options: Sequence[str] = (),
                   compare_basedir: str = "") -> Topology:
    """A topology from ``--topology`` (HuntError for an unknown one)."""
    kind, _, count_text = (spec or "single").strip().partition(":")
    if kind not in KINDS:
        raise HuntError(f"unknown --topology {spec!r} (known: single, replication[:N], "
                        f"galera[:N], compare)")
    if count_text and kind in ("single", "compare"):
        raise HuntError(f"--topology {kind} takes no count (got {spec!r})")
    default = {"single": 1, "replication": 1, "galera": 3, "compare": 2}[kind]
    try:
        number = int(count_text) if count_text else default
    except ValueError:
        raise HuntError(f"--topology {spec!r}: the count after ':' must be a number") from None
    if (compare_options or compare_basedir) and kind != "compare":
        raise HuntError("--compare-mysqld and a second --basedir for s1 need --topology compare")
    if kind == "replication":
        if not 1 <= number <= MAX_SERVERS - 1:
            raise HuntError(f"--topology {spec!r}: 1 to {MAX_SERVERS - 1} replicas")
        servers: list[list[Option]] = [[] for _ in range(number + 1)]
        reqs = Requirements.declared("mysql", servers, [(0, i) for i in range(1, number + 1)])
    elif kind == "galera":
        if not 2 <= number <= MAX_SERVERS:
            raise HuntError(f"--topology {spec!r}: 2 to {MAX_SERVERS} nodes")
        reqs = Requirements.declared("galera", [[] for _ in range(number)],
                                     [(0, i) for i in range(1, number)])
    elif kind == "compare":
        try:
            other = parse_options(list(compare_options))
        except SuiteError as exc:
            raise HuntError(f"--compare-mysqld: {exc}") from None
        reqs = Requirements.declared("mysql", [[], other],
                                     basedirs=("", compare_basedir) if compare_basedir else ())
    else:
        reqs = Requirements.declared("mysql", [[]])
    return Topology(kind, reqs)
