"""The error-log oracle: new ``[ERROR]`` lines and InnoDB corruption messages.

What each server's error log gained during the trial is read with the
warnings check's pieces (:mod:`lib.checks.errorlog`: kewpie's global
suppressions, the hunt's own :data:`HUNT_SUPPRESSIONS` -- what a random load
makes a healthy server log -- and the suite's ``suppressions``); the lines that are
``[ERROR]``, or that report corruption at any level, become findings, one per
distinct signature (:func:`lib.hunt.signature.errorlog_signature`).  The
crash report of a crashed server belongs to the crash oracle and is not read
here.
"""
from __future__ import annotations

import re
from typing import Pattern, Sequence

from ..checks.errorlog import compile_suppressions
from .finding import Finding
from .signature import errorlog_signature

ERROR_RE = re.compile(r"\[ERROR\]")
CORRUPTION_RE = re.compile(r"corrupt|is marked as crashed|Incorrect key file|"
                           r"Table .* is crashed|checksum mismatch|Database page corruption",
                           re.I)
MAX_LINES = 20
# (regex, why a random load makes the server log it without a bug): narrow, each with its reason
HUNT_SUPPRESSIONS: tuple[tuple[str, str], ...] = (
    (r"\[ERROR\] (mariadbd|mysqld): Deadlock found when trying to get lock; try restarting "
     r"transaction$",
     "concurrent transactions deadlock by design; the server also logs the error when a "
     "statement that reports errors to the log (ALTER TABLE copying rows, an event) loses"),
    (r"\[ERROR\] (mariadbd|mysqld): Lock wait timeout exceeded; try restarting transaction$",
     "the same for a lock wait that reached innodb_lock_wait_timeout"),
    (r"\[ERROR\] (mariadbd|mysqld): Out of sort memory, consider increasing server sort "
     r"buffer size$",
     "a load's small sort_buffer_size (SET SESSION sort_buffer_size = 32768) makes a sort "
     "fail with ER_OUT_OF_SORTMEMORY, and the server logs that statement error as it logs "
     "deadlocks (a surface-load trial's finding, documented behaviour)"),
    (r"\[ERROR\] (mariadbd|mysqld): The table '[^'/]+' is full$",
     "a MEMORY table is full at max_heap_table_size by design, and a load makes it small "
     "(SET SESSION max_heap_table_size = 16384): the statement fails with "
     "ER_RECORD_FILE_FULL (1114) and the server writes that error to its log (surface-load "
     "trials' findings on MEMORY tables t1, t2, t3; documented behaviour)"),
)


def suppressions(extra: Sequence[str]) -> list[Pattern[str]]:
    """kewpie's global suppressions, the hunt's (:data:`HUNT_SUPPRESSIONS`) and extra
    regexes (a suite's)."""
    return compile_suppressions([regex for regex, _ in HUNT_SUPPRESSIONS], extra)


def flagged_lines(text: str, patterns: Sequence[Pattern[str]]) -> list[str]:
    """The [ERROR] and corruption lines of text that no suppression matches."""
    return [line for line in text.splitlines()
            if (ERROR_RE.search(line) or CORRUPTION_RE.search(line))
            and not any(p.search(line) for p in patterns)]


def error_log_findings(server: str, text: str, patterns: Sequence[Pattern[str]]) -> list[Finding]:
    """One finding per distinct signature among the flagged lines of server's excerpt."""
    grouped: dict[str, tuple[Finding, list[str]]] = {}
    for line in flagged_lines(text, patterns):
        sig = errorlog_signature(line)
        if sig.id not in grouped:
            kind = "corruption" if CORRUPTION_RE.search(line) else "error"
            finding = Finding("errorlog", "errorlog", sig, f"{server} logged: {line.strip()[:200]}",
                              server, {"class": kind, "lines": []})
            grouped[sig.id] = (finding, [])
        grouped[sig.id][1].append(line)
    findings = []
    for finding, lines in grouped.values():
        finding.details["lines"] = lines[:MAX_LINES]
        finding.details["count"] = len(lines)
        findings.append(finding)
    return findings
