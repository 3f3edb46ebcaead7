"""Reading a server's final state: causally (wsrep_sync_wait) on Galera nodes, and
as a judging read (lib/servers/judging.py): a lock wait timeout, a deadlock, a
certification failure or a node not ready is retried within a bound, then
:class:`~lib.servers.judging.ReadUnknownError` (the verdict is unknown)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard

from ..servers.judging import JUDGING_BOUND, retry_transient
from ..servers.server import Server

if TYPE_CHECKING:  # the Galera modules are imported only for Galera nodes
    from ..servers.galera import GaleraServer


def is_galera(server: Server) -> TypeGuard[GaleraServer]:
    """True for a Galera node."""
    return getattr(server, "server_type", "") == "galera"


def read_rows(server: Server, sql: str, args: Any = None,
              bound: float = JUDGING_BOUND) -> list[tuple[Any, ...]]:
    """Rows of sql on server; a Galera node first applies all the cluster committed.
    Transient refusals are retried for up to bound seconds (ReadUnknownError after)."""
    if is_galera(server):
        from ..servers.galera_cluster import sync_wait_execute
        return sync_wait_execute(server, sql, args, bound)
    return retry_transient(lambda: server.execute(sql, args), f"read on {server.name}", bound)


def live(servers: list[Server]) -> list[Server]:
    """The servers that are running."""
    return [s for s in servers if s.is_alive()]
