"""The crash oracle: a server of the trial died (a signal or an assertion).

The finding's evidence is mariadbd's own crash report from the error log
(:mod:`lib.hunt.crashreport`): signal or assertion, stack, the statement and
connection it names; its signature is :func:`lib.hunt.signature.crash_signature`.
Where the crash left a core in the datadir, the trial runs gdb on it once the
finding is on disk (:mod:`lib.checks.backtrace`); when the report has no
stack (it can stop short: a second thread crashing while the handler prints
ends the process), gdb runs first and its frames sign the crash.  The signature
carries MariaDB QA's UniqueID (:mod:`lib.hunt.uniqueid`) from the same frames,
shown beside it (finding.json's ``signature.unique_id`` and
``details.unique_id``).  A server that died without
a report (killed by the OS, say) still gives a finding, signed with how its
process ended.
"""
from __future__ import annotations

import os
import re
import signal
from typing import TYPE_CHECKING

from ..checks.backtrace import backtrace, find_core
from .crashreport import bug_frames, gdb_frames, gdb_unique_id, parse_crash_report, report_unique_id
from .uniqueid import UniqueId, better_of
from .finding import Finding
from .signature import crash_signature

if TYPE_CHECKING:
    from ..servers.server import Server


def _gdb_stack(server: Server, core: str, work_dir: str
               ) -> tuple[str, tuple[str, ...], int | None, str]:
    """gdb's backtrace of core written in work_dir: (its path, the crashing thread's bug
    frames, the signal that ended the process, gdb's text); ('', (), None, '') when gdb
    gave nothing."""
    path = os.path.join(work_dir, f"backtrace-{server.name}.txt")
    backtrace(server.tree.server, core, path)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return "", (), None, ""
    m = re.search(r"Program terminated with signal (SIG\w+)", text)
    number = getattr(signal.Signals, m.group(1), None) if m else None
    return (path, bug_frames(gdb_frames(text)), int(number) if number is not None else None,
            text)


def crash_finding(server: Server, log_text: str, how: str, work_dir: str) -> Finding:
    """The finding for a server that died during the trial; log_text is what its error
    log gained during the trial, how the health check's sentence (exit status).  When
    the report has no stack (or there is no report), the frames come from gdb's
    backtrace of the core, written to work_dir."""
    report = parse_crash_report(log_text)
    exit_note = how.split("(", 1)[-1].rstrip(")") if "(" in how else how
    core = find_core(server.paths.datadir) or ""
    frames = report.bug_frames() if report else ()
    sig_number = report.signal if report else None
    copies: dict[str, str] = {}
    source = "error log"
    uid: UniqueId | None = report_unique_id(report) if report else None
    if not frames and core:
        path, frames, from_core, gdb_text = _gdb_stack(server, core, work_dir)
        if path:
            copies[os.path.basename(path)] = path
            core, source = "", "gdb backtrace of the core"
            sig_number = sig_number if sig_number is not None else from_core
            uid = better_of(uid, gdb_unique_id(gdb_text, log_text))
    if report is None and not frames:
        sig = crash_signature(None, "", "", (), no_report=exit_note, unique_id=uid)
        details: dict[str, object] = {"exit": how, "report": False}
        summary = f"{server.name} died without a crash report ({exit_note})"
        texts: dict[str, str] = {}
    else:
        assertion = report.assertion if report else ""
        fatal = report.fatal if report else ""
        sig = crash_signature(sig_number, assertion, fatal, frames, no_report=exit_note,
                              unique_id=uid)
        details = {"exit": how, "report": report is not None, "signal": sig_number,
                   "assertion": assertion, "fatal": fatal, "frames": list(frames),
                   "frames_from": source,
                   "raw_frames": list(report.raw_frames) if report else [],
                   "query": report.query if report else "",
                   "connection_id": report.connection_id if report else None,
                   "unique_id": uid.to_json() if uid is not None else None}
        cause = (f"assertion {assertion}" if assertion else f"fatal error {fatal}" if fatal
                 else f"signal {sig_number}")
        where = " < ".join(frames[:3]) or "no symbolic frames"
        summary = f"{server.name} crashed: {cause} in {where}"
        texts = {f"crash-report-{server.name}.txt": report.text} if report else {}
    return Finding("crash", "crash", sig, summary, server.name, details, texts, copies,
                   core=core)


def crash_report_start(log_text: str) -> int:
    """Where the crash report begins in log_text (its length when there is none): the
    error-log oracle reads only what came before."""
    report = parse_crash_report(log_text)
    if report is None or not report.text:
        return len(log_text)
    first = report.text.splitlines()[0]
    at = log_text.rfind(first)
    return at if at >= 0 else len(log_text)
