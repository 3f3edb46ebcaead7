"""kewpie's rule tables for a native server's my.cnf (:mod:`lib.servers.cnf`).

:data:`SERVER_RULES` is what kewpie sets in every server's ``[mysqld]`` (the
suite's options are layered over it): its paths, its leased port on the
loopback (and its namespace's address), small InnoDB files, core files, MySQL's
X plugin and admin port kept on the loopback too, ``user=root`` when kewpie
runs as root itself (``--server-user=root``: mysqld refuses root otherwise),
and a relocated code tree's ``basedir``, ``plugin-dir`` and
``lc-messages-dir``.  :data:`CLIENT_RULES` is ``[client]``: the tools connect
as root to this server.  Galera's rules are in :mod:`lib.servers.galera`.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .cnf import Rule
from .layout import HOST

if TYPE_CHECKING:
    from .server import Server


def _mariadb(server: Server) -> bool:
    """The server is MariaDB (or of an unknown version)."""
    version = server.tree.version
    return not version or version.flavor == "mariadb"


def _bind_address(server: Server) -> str:
    """The loopback, and the server's namespace address when it has one (for replicas)."""
    return f"{HOST},{server.net.address}" if server.net is not None else HOST


def _tree_option(name: str) -> Rule[Server]:
    """A relocated code tree's path option name (lib.servers.codetree)."""
    def value(server: Server) -> str:
        """The tree's value for the option ('' when it has none)."""
        return dict(server.tree.server_path_options()).get(name, "")
    return Rule(name, value, when=lambda server: bool(value(server)))


SERVER_RULES: tuple[Rule[Server], ...] = (
    Rule("datadir", lambda s: s.paths.datadir),
    Rule("port", lambda s: str(s.port)),
    Rule("bind-address", _bind_address),
    Rule("socket", lambda s: s.paths.socket_file),
    Rule("pid-file", lambda s: s.paths.pid_file),
    Rule("log-error", lambda s: s.paths.error_log),
    Rule("tmpdir", lambda s: s.paths.tmpdir),
    Rule("secure-file-priv", lambda s: s.paths.vardir),
    Rule("server-id", lambda s: str(s.index + 1)),
    Rule("skip-name-resolve"),
    Rule("innodb-log-file-size", "16M"),
    Rule("innodb-buffer-pool-size", "128M"),
    Rule("core-file"),
    Rule("mysqlx", "OFF", when=lambda s: not _mariadb(s), loose=True),
    Rule("admin-address", HOST, when=lambda s: not _mariadb(s), loose=True),
    Rule("user", "root", when=lambda s: s.settings.user is None and os.geteuid() == 0),
    _tree_option("basedir"),
    _tree_option("plugin-dir"),
    _tree_option("lc-messages-dir"),
)

CLIENT_RULES: tuple[Rule[Server], ...] = (
    Rule("host", HOST),
    Rule("port", lambda s: str(s.port)),
    Rule("socket", lambda s: s.paths.socket_file),
    Rule("user", "root"),
)
