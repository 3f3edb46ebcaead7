"""What a pytest test asks kewpie for, as suite_config.py says it for a suite.

``@pytest.mark.kewpie(server_requirements=[[...], ...], server_requests={...},
server_type='galera', storage='disk')`` takes suite_config.py's names and
checks (:mod:`lib.suites.loader`); ``replicas=N`` / ``nodes=N`` size the
shaped fixtures, ``options=[...]`` adds options to every server and
``scope=`` says how long tests share servers (see :func:`declare`).  The
same keys may come as an indirect parameter of the fixture.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from ..errors import SuiteError
from ..run.environment import SERVER_KINDS
from ..servers.requirements import Requirements
from ..suites.loader import (STORAGE_CHOICES, check_arbitrator, validate_requirements,
                             validate_requests)

SINGLE, REPLICATION, CLUSTER = "single", "replication", "cluster"
FIXTURE_SHAPES = MappingProxyType({
    "kewpie": SINGLE, "kewpie_server": SINGLE,
    "kewpie_replication": REPLICATION, "kewpie_cluster": CLUSTER,
})
DEFAULT_REPLICAS = 2
DEFAULT_NODES = 3
SCOPES = ("function", "class", "module", "package", "session")
KEYS = ("server_requirements", "server_requests", "server_type", "storage", "replicas", "nodes",
        "options", "scope")


@dataclass(frozen=True)
class Declared:
    """One test's servers (Requirements) and how long tests may share them (scope)."""

    requirements: Requirements
    scope: str


def shape_of(fixturenames: Iterable[str], where: str) -> str | None:
    """The shape of servers a test's fixtures ask for (None: it uses none of kewpie's);
    SuiteError when it asks for two shapes (a test gets one set of servers)."""
    shapes = {FIXTURE_SHAPES[name] for name in fixturenames if name in FIXTURE_SHAPES}
    shaped = shapes - {SINGLE}
    if len(shaped) > 1:
        raise SuiteError(f"{where}: kewpie_replication and kewpie_cluster are two sets of "
                         f"servers; a test gets one (use the marker to describe it)")
    return shaped.pop() if shaped else (SINGLE if shapes else None)


def _count(values: Mapping[str, Any], key: str, default: int, minimum: int, where: str) -> int:
    value = values.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise SuiteError(f"{where}: {key} must be a whole number of at least {minimum}, "
                         f"got {value!r}")
    return value


def declare(shape: str, values: Mapping[str, Any], default_scope: str, where: str) -> Declared:
    """Requirements and scope from the marker's keyword arguments (values) for a fixture
    of shape; SuiteError naming where (the test) for anything suite_config.py would refuse.

    Without ``server_requirements``: one plain server (single), a primary and
    ``replicas`` replicas (replication, default 2), or ``nodes`` Galera nodes
    (cluster, default 3).  Without ``server_requests``, the replication and
    cluster shapes join every other server to server 0.
    """
    unknown = sorted(set(values) - set(KEYS))
    if unknown:
        raise SuiteError(f"{where}: unknown kewpie marker argument(s) {', '.join(unknown)} "
                         f"(known: {', '.join(KEYS)})")
    default_type = "galera" if shape == CLUSTER else "mysql"
    server_type = values.get("server_type") or default_type
    if not isinstance(server_type, str) or server_type not in SERVER_KINDS:
        raise SuiteError(f"{where}: server_type must be one of {', '.join(SERVER_KINDS)}, "
                         f"got {server_type!r}")
    if shape != SINGLE and server_type != default_type:
        fixture = "kewpie_cluster" if shape == CLUSTER else "kewpie_replication"
        raise SuiteError(f"{where}: {fixture} starts {default_type} servers, not "
                         f"{server_type!r}; use the kewpie fixture for other server types")
    if "server_requirements" in values:
        if "replicas" in values or "nodes" in values:
            raise SuiteError(f"{where}: give either server_requirements or replicas/nodes, "
                             f"not both")
        option_lists: list[Any] = list(values["server_requirements"] or [])
    elif shape == REPLICATION:
        option_lists = [[] for _ in range(1 + _count(values, "replicas", DEFAULT_REPLICAS, 1, where))]
    elif shape == CLUSTER:
        option_lists = [[] for _ in range(_count(values, "nodes", DEFAULT_NODES, 1, where))]
    else:
        option_lists = [[]]
    extra = values.get("options") or []
    if isinstance(extra, str):
        extra = [extra]
    if not isinstance(extra, (list, tuple)) or not all(isinstance(o, str) for o in extra):
        raise SuiteError(f"{where}: options must be a list of option strings such as "
                         f"['--innodb-file-per-table']")
    if extra:
        option_lists = [([item] if isinstance(item, str) else list(item)) + list(extra)
                        if isinstance(item, (str, list, tuple)) else item
                        for item in option_lists]
    servers = validate_requirements(option_lists, where)
    requests = values.get("server_requests")
    if requests is None and shape != SINGLE:
        requests = {"join_cluster": [(0, i) for i in range(1, len(servers))]}
    checked = validate_requests(requests, len(servers), where)
    storage = values.get("storage", "default")
    if storage not in STORAGE_CHOICES:
        raise SuiteError(f"{where}: storage must be one of {', '.join(map(repr, STORAGE_CHOICES))}"
                         f", got {storage!r}")
    scope = values.get("scope") or default_scope
    if scope not in SCOPES:
        raise SuiteError(f"{where}: scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    reqs = Requirements.declared(server_type, servers, checked.get("join_cluster", []),
                                 on_disk=storage == "disk",
                                 arbitrator=check_arbitrator(checked, server_type, where))
    return Declared(reqs, scope)
