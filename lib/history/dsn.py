"""A server store's DSN: checked and shown without its password (no database module
is imported here: the command line checks a DSN before a run starts)."""
from __future__ import annotations

from urllib.parse import urlparse

from .errors import HistoryUsageError

SERVER_SCHEMES = ("mysql", "mariadb")


def check_dsn(dsn: str, option: str = "--history-dsn") -> str:
    """dsn when it is ``mysql://user:password@host:port/database``; HistoryUsageError
    (its password hidden) otherwise."""
    try:
        url = urlparse(dsn)
        _ = url.port
    except ValueError:
        url = None
    if url is None or url.scheme not in SERVER_SCHEMES or not url.hostname \
            or not url.path.strip("/"):
        raise HistoryUsageError(f"{option} {redact(dsn)}: expected "
                                f"mysql://user:password@host:port/database")
    return dsn


def redact(dsn: str) -> str:
    """dsn with its password replaced by ``***``."""
    try:
        url = urlparse(dsn)
        password = url.password
    except ValueError:
        return dsn.split("@")[-1]
    if password is None:
        return dsn
    return url._replace(netloc=url.netloc.replace(f":{password}@", ":***@", 1)).geturl()
