"""A server store's DSN: checked and shown without its password (no database module
is imported here: the command line checks a DSN before a run starts)."""
from __future__ import annotations

from urllib.parse import urlparse

from ..platform.secrets import HISTORY_DSN_ENV, MASK, redact_text
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
    """dsn with its password replaced by ``***``: everything between the user's ``:``
    and the last ``@`` (so that a password a URL parser would misread -- a raw ``/`` or
    ``@`` in it -- is hidden whole); text that is no DSN as
    :func:`lib.platform.secrets.redact_text` shows it."""
    scheme, sep, rest = dsn.partition("://")
    userinfo, at, host = rest.rpartition("@")
    user, _, password = userinfo.partition(":")
    if not sep or not at or not password:
        return redact_text(dsn)
    return f"{scheme}{sep}{user}:{MASK}@{host}"


def has_password(dsn: str) -> bool:
    """Whether dsn carries a password (anything :func:`redact` would hide)."""
    return redact(dsn) != dsn


def password_on_command_line(option: str, dsn: str) -> str:
    """Why a DSN with a password is refused on the command line, and where it goes."""
    return (f"{option} {redact(dsn)}: a password on the command line is shown to every "
            f"user of this machine (ps); give the DSN in the environment "
            f"({HISTORY_DSN_ENV}=...) or as history-dsn in a config file only you can read "
            f"(docs/history.md, \"Where the history is\")")
