"""Typed errors of the hunt: bad input (an unknown oracle or topology, a known-bugs file
that cannot be read or has a malformed entry).  Each is a :class:`lib.errors.UsageError`,
so the command line prints one ERROR line and exits 2 before any server starts."""
from __future__ import annotations

from ..errors import UsageError


class HuntError(UsageError):
    """A hunt cannot run as asked (the message says what to change)."""


class KnownBugsError(HuntError):
    """A known-bugs file cannot be read, or one of its entries is malformed (file:line)."""

    def __init__(self, message: str, path: str, line: int = 0) -> None:
        where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(f"known-bugs file {where}{message}")
        self.path = path
        self.line = line
