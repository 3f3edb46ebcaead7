"""Reading the end of log files (error logs, tool logs) for failure reports."""
from __future__ import annotations

import os

TAIL_BYTES = 64 * 1024


def tail_file(path: str, lines: int = 30) -> str:
    """The last lines of a text file ('' if missing or unreadable)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])
