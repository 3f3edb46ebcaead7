"""A server's error log read as evidence: its tail, and what it gained since a mark.

Tests mark the log before an action (``size()``) and read what the action
wrote (``since(mark)``); failure reports quote the tail.  A missing log reads
as empty, never as an error.
"""
from __future__ import annotations

import os

from ..platform.logtail import tail_file


class ErrorLog:
    """The error log at path."""

    def __init__(self, path: str) -> None:
        self.path = path

    def size(self) -> int:
        """The log's current size in bytes (a mark for since(); 0 when missing)."""
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def since(self, mark: int) -> str:
        """What the log gained since size() returned mark."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(mark)
                return fh.read().decode(errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = 30) -> str:
        """The last lines of the log ('' when missing or empty)."""
        return tail_file(self.path, lines)

    def tail_or_note(self, lines: int = 30) -> str:
        """The tail, or a note that the log is empty (so a report never shows nothing)."""
        return self.tail(lines) or f"(the error log {self.path} is empty)"


def last_error_line(text: str) -> str:
    """The last ``[ERROR]`` line of an error log's text, stripped ('' when none)."""
    for line in reversed(text.splitlines()):
        if "[ERROR]" in line:
            return line.strip()
    return ""


class LogWatch:
    """Watches a log from a mark for a line holding needle, reading only what the log
    gained since the last look (a readiness poll calls :meth:`seen` every few ms)."""

    def __init__(self, path: str, needle: bytes, mark: int) -> None:
        self.path = path
        self.needle = needle
        self.offset = mark
        self.found = False
        self._carry = b""   # the last bytes read, in case needle spans two reads

    def exists(self) -> bool:
        """True when the log file is there to be watched."""
        return os.path.isfile(self.path)

    def seen(self) -> bool:
        """True once the log has held needle after the mark."""
        if self.found:
            return True
        try:
            with open(self.path, "rb") as fh:
                if os.fstat(fh.fileno()).st_size < self.offset:
                    self.offset, self._carry = 0, b""   # truncated or replaced: read it anew
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return False
        if not data:
            return False
        self.offset += len(data)
        window = self._carry + data
        self.found = self.needle in window
        self._carry = window[-(len(self.needle) - 1):] if len(self.needle) > 1 else b""
        return self.found

