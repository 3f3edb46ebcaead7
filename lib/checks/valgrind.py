"""Reading valgrind memcheck logs: a server whose log reports errors (or definite
leaks, counted as errors under kewpie's options) fails its test."""
from __future__ import annotations

import glob
import os
import re

SUMMARY_RE = re.compile(r"ERROR SUMMARY: (\d+) errors? from (\d+) contexts?")
MAX_REPORT_LINES = 60


def valgrind_logs(logdir: str) -> list[str]:
    """The server's valgrind logs (one per start: ``valgrind.<pid>.log``), oldest first."""
    return sorted(glob.glob(os.path.join(logdir, "valgrind.*.log")), key=os.path.getmtime)


def errors_in(path: str) -> int | None:
    """The error count of a finished valgrind log (None: no summary yet, e.g. the
    server was killed -9 and valgrind never reported)."""
    try:
        with open(path, errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    counts = [int(m.group(1)) for m in SUMMARY_RE.finditer(text)]
    return max(counts) if counts else None


def report(path: str) -> str:
    """The log's first error reports (valgrind's own lines, without the ``==pid==`` prefix)."""
    with open(path, errors="replace") as fh:
        lines = [re.sub(r"^==\d+== ?", "", line.rstrip()) for line in fh]
    body = [line for line in lines if line and not line.startswith(("Memcheck,", "Copyright",
                                                                     "Using Valgrind", "Command:"))]
    if len(body) > MAX_REPORT_LINES:
        body = body[:MAX_REPORT_LINES] + [f"... ({len(body) - MAX_REPORT_LINES} more lines in {path})"]
    return "\n".join(body)
