"""What a failed test's report says about a server that crashed or hung during it.

Used by the attempt pipeline (lib/run/attempt.py), whichever way a test came
in (a kewpie suite, a mysql-test case, the pytest plugin): the sentence saying
how it died (its health, or the mtr case's crash), the crash's
signature when the error log holds mariadbd's crash report (its assertion
or fatal message and the frames below the signal handler: the lines a short
log tail cuts off), and the error log's last lines.
"""
from __future__ import annotations

from ..servers.server import Server

TAIL_LINES = 20
REPORT_LINES = 400  # enough for mariadbd's crash report and what led to it


def dead_server_report(server: Server, health_message: str) -> str:
    """The report's part for a dead server: health sentence, crash signature (when the
    log has a crash report) and the error log's tail."""
    from ..hunt.crashreport import crash_headline  # only a failed test needs it
    headline = crash_headline(server.errlog.tail(REPORT_LINES))
    where = f"error log {server.paths.error_log} ends with:"
    tail = server.errlog.tail(TAIL_LINES)
    if headline:
        return f"{health_message}\n{headline}\n{where}\n{tail}"
    return f"{health_message}; {where}\n{tail}"
