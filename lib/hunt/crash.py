"""The crash oracle: a server of the trial died (a signal or an assertion).

The finding's evidence is mariadbd's own crash report from the error log
(:mod:`lib.hunt.crashreport`): signal or assertion, stack, the statement and
connection it names; its signature is :func:`lib.hunt.signature.crash_signature`.
Where the crash left a core in the datadir, the trial runs gdb on it once the
finding is on disk (:mod:`lib.checks.backtrace`).  A server that died without
a report (killed by the OS, say) still gives a finding, signed with how its
process ended.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..checks.backtrace import find_core
from .crashreport import parse_crash_report
from .finding import Finding
from .signature import crash_signature

if TYPE_CHECKING:
    from ..servers.server import Server


def crash_finding(server: Server, log_text: str, how: str) -> Finding:
    """The finding for a server that died during the trial; log_text is what its error
    log gained during the trial, how the health check's sentence (exit status)."""
    report = parse_crash_report(log_text)
    exit_note = how.split("(", 1)[-1].rstrip(")") if "(" in how else how
    if report is None:
        sig = crash_signature(None, "", "", (), no_report=exit_note)
        details = {"exit": how, "report": False}
        summary = f"{server.name} died without a crash report ({exit_note})"
        texts: dict[str, str] = {}
    else:
        frames = report.bug_frames()
        sig = crash_signature(report.signal, report.assertion, report.fatal, frames,
                              no_report=exit_note)
        details = {"exit": how, "report": True, "signal": report.signal,
                   "assertion": report.assertion, "fatal": report.fatal,
                   "frames": list(frames), "raw_frames": list(report.raw_frames),
                   "query": report.query, "connection_id": report.connection_id}
        cause = (f"assertion {report.assertion}" if report.assertion else
                 f"fatal error {report.fatal}" if report.fatal else f"signal {report.signal}")
        where = " < ".join(frames[:3]) or "no symbolic frames"
        summary = f"{server.name} crashed: {cause} in {where}"
        texts = {f"crash-report-{server.name}.txt": report.text}
    core = find_core(server.datadir) or ""
    return Finding("crash", "crash", sig, summary, server.name, details, texts, core=core)


def crash_report_start(log_text: str) -> int:
    """Where the crash report begins in log_text (its length when there is none): the
    error-log oracle reads only what came before."""
    report = parse_crash_report(log_text)
    if report is None or not report.text:
        return len(log_text)
    first = report.text.splitlines()[0]
    at = log_text.rfind(first)
    return at if at >= 0 else len(log_text)
