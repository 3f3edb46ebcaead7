"""Where a randgen run connects: DSNs and PyMySQL connections.

Accepted DSN forms::

    dbi:mysql:host=127.0.0.1:port=9300:user=root:password=:database=test   (randgen's)
    dbi:mysql:mysql_socket=/path/my.sock:user=root:database=test
    mysql://root:secret@127.0.0.1:9300/test
    mysql://root@localhost/test?socket=/path/my.sock
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import pymysql

from ..servers.sql import LOST_CONNECTION_CODES as LOST_CONNECTION_CODES  # the loads' name for it
from .errors import RandgenEnvironmentError


def error_message(exc: BaseException) -> str:
    """The text of a client library's error (its second argument), else str(exc)."""
    args = exc.args
    return str(args[1]) if len(args) > 1 else str(exc)


@dataclass(frozen=True)
class ConnectionSpec:
    """How to reach the server: a unix socket, or host and port; user, password, schema."""

    host: str = "127.0.0.1"
    port: int = 3306
    user: str = "root"
    password: str = ""
    database: str = "test"
    unix_socket: str | None = None

    def with_database(self, database: str) -> "ConnectionSpec":
        """The same server, another default schema."""
        return replace(self, database=database)

    def connect(self, database: str | None = None, connect_timeout: float = 10,
                **extra: Any) -> pymysql.connections.Connection:
        """A new autocommit connection (RandgenEnvironmentError when it fails)."""
        params: dict[str, Any] = dict(user=self.user, password=self.password,
                                      database=database if database is not None else self.database,
                                      autocommit=True, charset="utf8mb4",
                                      connect_timeout=connect_timeout)
        if self.unix_socket:
            params["unix_socket"] = self.unix_socket
            params["ssl_disabled"] = True  # no TLS over a socket: saves an SSL context per connection
        else:
            params["host"], params["port"] = self.host, self.port
        params.update(extra)
        try:
            return pymysql.connect(**params)
        except pymysql.MySQLError as exc:
            raise RandgenEnvironmentError(f"cannot connect to {self.describe()}: {exc}") from exc

    def describe(self) -> str:
        """``root@127.0.0.1:9300/test`` or ``root@/path/my.sock/test``."""
        where = self.unix_socket or f"{self.host}:{self.port}"
        return f"{self.user}@{where}/{self.database}"

    def dbi_dsn(self) -> str:
        """The DSN in randgen's (Perl DBI) form, for gentest.pl."""
        dsn = f"dbi:mysql:host={self.host}:port={self.port}:user={self.user}"
        if self.password:
            dsn += f":password={self.password}"
        if self.unix_socket:
            dsn += f":mysql_socket={self.unix_socket}"
        return dsn + f":database={self.database}"


def parse_dsn(dsn: str) -> ConnectionSpec:
    """A ConnectionSpec from a randgen (``dbi:mysql:...``) or URL (``mysql://...``) DSN."""
    dsn = dsn.strip()
    if dsn.startswith(("mysql://", "mariadb://")):
        u = urlparse(dsn)
        query = parse_qs(u.query)
        sockets = query.get("socket") or query.get("unix_socket")
        socket = sockets[0] if sockets else None
        return ConnectionSpec(host=u.hostname or "127.0.0.1", port=u.port or 3306,
                              user=unquote(u.username or "root"),
                              password=unquote(u.password or ""),
                              database=(u.path or "/test").lstrip("/") or "test",
                              unix_socket=socket)
    m = re.match(r"^dbi:(\w+):(.*)$", dsn, re.I)
    if not m:
        raise RandgenEnvironmentError(f"unrecognised DSN {dsn!r} (expected dbi:mysql:host=...:"
                                      f"port=...:user=...:database=... or mysql://user@host:port/db)")
    fields: dict[str, str] = {}
    for part in re.split(r"[:;]", m.group(2)):
        if "=" in part:
            k, v = part.split("=", 1)
            fields[k.strip().lower()] = v.strip().strip('"')
    try:
        port = int(fields.get("port", "3306"))
    except ValueError as exc:
        raise RandgenEnvironmentError(f"bad port in DSN {dsn!r}") from exc
    return ConnectionSpec(host=fields.get("host", "127.0.0.1"), port=port,
                          user=fields.get("user", "root"), password=fields.get("password", ""),
                          database=fields.get("database", fields.get("db", "test")),
                          unix_socket=fields.get("mysql_socket") or fields.get("socket"))
