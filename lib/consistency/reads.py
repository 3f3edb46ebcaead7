"""Reading a server's final state: causally (wsrep_sync_wait) on Galera nodes."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard

from ..servers.server import Server

if TYPE_CHECKING:  # the Galera modules are imported only for Galera nodes
    from ..servers.galera import GaleraServer


def is_galera(server: Server) -> TypeGuard[GaleraServer]:
    """True for a Galera node."""
    return getattr(server, "server_type", "") == "galera"


def read_rows(server: Server, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
    """Rows of sql on server; a Galera node first applies all the cluster committed."""
    if is_galera(server):
        from ..servers.galera_cluster import sync_wait_execute
        return sync_wait_execute(server, sql, args)
    return server.execute(sql, args)


def live(servers: list[Server]) -> list[Server]:
    """The servers that are running."""
    return [s for s in servers if s.is_alive()]
