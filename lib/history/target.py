"""Where a history store is: a SQLite file or a server's DSN (no database module is
imported here, so that a run can name its store before it needs one)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from .dsn import check_dsn, redact

DEFAULT_FILE = "history.sqlite"


def default_path(workdir: str) -> str:
    """The default store of runs using workdir: ``WORKDIR/history.sqlite``."""
    return os.path.join(workdir, DEFAULT_FILE)


@dataclass(frozen=True)
class StoreTarget:
    """A store's location: a SQLite file, or a server's DSN."""

    sqlite_path: str = ""
    dsn: str = ""

    @classmethod
    def choose(cls, path: str, dsn: str, workdir: str) -> "StoreTarget":
        """--history-dsn, else --history PATH, else the workdir's file; a malformed DSN
        is a HistoryUsageError."""
        if dsn:
            return cls(dsn=check_dsn(dsn))
        return cls(sqlite_path=os.path.abspath(path or default_path(workdir)))

    @property
    def is_server(self) -> bool:
        """True for a MariaDB/MySQL server."""
        return bool(self.dsn)

    @property
    def display(self) -> str:
        """The location for messages (a DSN's password hidden)."""
        return redact(self.dsn) if self.dsn else self.sqlite_path

    def exists(self) -> bool:
        """False for a SQLite file not written yet (a server is assumed to be there)."""
        return self.is_server or os.path.isfile(self.sqlite_path)
