"""Typed errors of the randgen engine.

Each one is a :class:`lib.errors.KewpieError`, so the command line turns it
into one log line and an exit status.  Grammar and Perl-block errors name the
file and line they come from.
"""
from __future__ import annotations

from ..errors import KewpieError


class RandgenError(KewpieError):
    """Base class of the randgen engine's errors."""


class GrammarError(RandgenError):
    """A grammar (.yy) file cannot be read or parsed, or a sentence cannot be generated."""

    def __init__(self, message: str, path: str = "", line: int = 0) -> None:
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line
        self.reason = message


class PerlBlockError(GrammarError):
    """An embedded Perl block is outside the native subset (and no perl is available), or failed."""

    def __init__(self, message: str, path: str, line: int, block: str) -> None:
        short = block if len(block) <= 160 else block[:157] + "..."
        super().__init__(f"{message} in Perl block {short}", path, line)
        self.block = block


class GendataError(RandgenError):
    """A gendata (.zz) file cannot be read or turned into tables."""


class RandgenEnvironmentError(RandgenError):
    """The run cannot start: no server to connect to, a missing file or tool, a bad option."""
