"""mariadbd's own crash report, read from its error log.

When mariadbd dies on a signal its handler writes a report to the error log::

    261125 18:44:25 [ERROR] /usr/sbin/mariadbd got signal 11 ;
    Sorry, we probably made a mistake, and this is a bug.
    ...
    Attempting backtrace. Include this in the bug report.
    /usr/sbin/mariadbd(my_print_stacktrace+0x2e)[0x564ce0f3f87e]
    /usr/sbin/mariadbd(handle_fatal_signal+0x1c7)[0x564ce0aba057]
    libc_sigaction.c:0(__restore_rt)[0x7f4b30c5a050]
    planted.c:11(kw_planted)[0x7f4b319e31cc]
    /usr/sbin/mariadbd(_ZN17Item_func_udf_int7val_intEv+0x4a)[0x564ce0b3101a]
    ...
    Connection ID (thread ID): 4
    Status: NOT_KILLED
    Query (0x774af0010cc0): SELECT kw_planted(5)

The report can stop short (another thread crashing while the handler prints
the stack ends the process): :func:`gdb_frames` then reads the same function
names from gdb's backtrace of the core.  An assertion comes first (``mariadbd: /path/file.cc:123: bool f(): Assertion
`x' failed.``, or InnoDB's ``Assertion failure in file ... line N`` with
``Failing assertion: x``), and InnoDB's fatal errors say ``[FATAL]``.
:func:`parse_crash_report` finds the report in what the log gained during a
trial and returns its signal, assertion or fatal text, the stack frames (each
reduced to a function name: module paths, offsets, addresses and line
numbers dropped, C++ names demangled), the statement and connection the
report names, and the report's text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..checks.backtrace import GDB_FRAME_RE, HANDLER_FRAMES, crashing_thread
from .demangle import function_name
from .uniqueid import (HANDLER_GDB, HANDLER_REPORT, SOURCE_GDB, SOURCE_REPORT, UniqueId,
                       assertion_text, better_of, build_unique_id, signal_name)

if TYPE_CHECKING:
    from .signature import Signature

SIGNAL_RE = re.compile(r"got signal (\d+)")
GDB_SIGNAL_RE = re.compile(r"Program terminated with signal (SIG\w+)")
FATAL_RE = re.compile(r"\[FATAL\]\s*(.*)")
ASSERT_RE = re.compile(r"^(?:.*?:\s*)?(?P<file>[^\s:]+):(?P<line>\d+):\s*(?P<func>.*?):\s*"
                       r"Assertion [`'](?P<cond>.*)' failed\.?\s*$")
INNODB_ASSERT_FILE_RE = re.compile(r"Assertion failure in (?:thread \d+ in )?file (\S+) line (\d+)")
INNODB_FAILING_RE = re.compile(r"Failing assertion:\s*(.*)")
# /usr/sbin/mariadbd(sym+0x2e)[0x56..]   planted.c:11(kw_planted)[0x7f..]   bin(+0x829ab1)[0x..]
FRAME_RE = re.compile(r"^\s*(?P<where>[^\[\]]*?)\((?P<func>.*)\)\s*\[(?P<addr>0x[0-9a-fA-F]+)\]\s*$")
QUERY_RE = re.compile(r"^Query \((?:0x[0-9a-fA-F]+|\(nil\))\):\s?(?P<sql>.*)$")
CONNECTION_RE = re.compile(r"^Connection ID \(thread ID\):\s*(\d+)")
REPORT_END_RE = re.compile(r"^(Optimizer switch:|Writing a core file|The manual page at|"
                           r"Resource Limits|Core pattern:)")
MAX_REPORT_LINES = 200


@dataclass(frozen=True)
class CrashReport:
    """What mariadbd wrote about its crash (see the module docstring)."""

    signal: int | None = None
    assertion: str = ""          # the condition and where, line numbers and paths dropped
    fatal: str = ""              # an InnoDB [FATAL] message
    frames: tuple[str, ...] = ()  # function names, innermost first, handler frames included
    query: str = ""
    connection_id: int | None = None
    text: str = ""               # the report as logged
    raw_frames: tuple[str, ...] = field(default=(), compare=False)

    def bug_frames(self) -> tuple[str, ...]:
        """The frames below the signal handler and abort/assert machinery, innermost first."""
        return bug_frames(self.frames)


def frame_function(line: str) -> str | None:
    """The function of one stack line (``?`` for a frame without a symbol), None when the
    line is not a frame."""
    m = FRAME_RE.match(line)
    if not m:
        return None
    func = m.group("func").strip()
    if not func or func.startswith("+0x"):
        return "?"
    func = re.sub(r"\+0x[0-9a-fA-F]+$", "", func)
    return function_name(func) or "?"


def gdb_frames(text: str) -> tuple[str, ...]:
    """The crashing thread's function names from gdb's output
    (:func:`lib.checks.backtrace.crashing_thread`), innermost first; ``?`` for a frame
    gdb could not name."""
    frames: list[str] = []
    for line in crashing_thread(text):
        m = GDB_FRAME_RE.match(line)
        if not m:
            continue
        func = m.group("func").strip()
        frames.append("?" if func.startswith("??") else
                      func if func.startswith("<") else function_name(func))
    return tuple(frames)


def bug_frames(frames: tuple[str, ...]) -> tuple[str, ...]:
    """frames below the signal handler and abort/assert machinery, unnamed ones dropped."""
    start = 0
    for i, name in enumerate(frames):
        if name in HANDLER_FRAMES:
            start = i + 1
    return tuple(f for f in frames[start:] if f and f != "?")


def _normalise_path(text: str) -> str:
    """Paths to their file names, line numbers out: stable across builds and machines."""
    text = re.sub(r"(?:[\w.+-]*/)+([\w.+-]+)", r"\1", text)
    return re.sub(r"(\.\w+):\d+", r"\1", text)


def parse_crash_report(text: str) -> CrashReport | None:
    """The crash report in an error-log excerpt (the last one when there are several), or
    None when the excerpt holds none."""
    body = _report_lines(text)
    if body is None:
        return None
    found = _ReportReader()
    for ln in body:
        found.read(ln)
    end = next((i for i, ln in enumerate(body) if ln.startswith("Kernel version")), len(body))
    return CrashReport(signal=found.signal, assertion=found.assertion, fatal=found.fatal,
                       frames=tuple(found.frames), query=found.query.strip(),
                       connection_id=found.connection_id,
                       text="\n".join(body[:end + 1]).rstrip() + "\n",
                       raw_frames=tuple(found.raw))


def _report_lines(text: str) -> list[str] | None:
    """The lines of the excerpt's last crash report (from its assertion or fatal line,
    at most MAX_REPORT_LINES), or None when it holds none."""
    lines = text.splitlines()
    marks = [i for i, ln in enumerate(lines) if SIGNAL_RE.search(ln) or FATAL_RE.search(ln)
             or "Assertion" in ln and ("failed" in ln or "failure" in ln)]
    if not marks:
        return None
    signal_at = [i for i in marks if SIGNAL_RE.search(lines[i])]
    last = signal_at[-1] if signal_at else marks[-1]
    # the report starts at the assertion or fatal line logged just before the signal line
    start = min(m for m in marks if last - 30 <= m <= last)
    return lines[start:start + MAX_REPORT_LINES]


class _ReportReader:
    """What a crash report's lines say, read one line at a time (the first signal,
    fatal error and assertion; the stack's frames; the connection and its query)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self.assertion = self.fatal = self.query = ""
        self.connection_id: int | None = None
        self.frames: list[str] = []
        self.raw: list[str] = []
        self.in_query = False
        self.innodb_file = ""

    def read(self, ln: str) -> None:
        """Take in the report's next line."""
        if self.in_query:
            if not ln.strip() or REPORT_END_RE.match(ln):
                self.in_query = False
            else:
                self.query += "\n" + ln
                return
        m = SIGNAL_RE.search(ln)
        if m and self.signal is None:
            self.signal = int(m.group(1))
            return
        m = FATAL_RE.search(ln)
        if m and not self.fatal:
            self.fatal = _normalise_path(re.sub(r"\d+", "N", m.group(1).strip()))
            return
        m = ASSERT_RE.match(ln.strip())
        if m and not self.assertion:
            self.assertion = (f"{m.group('cond')} in {function_name(m.group('func'))} "
                              f"({_normalise_path(m.group('file'))})")
            return
        m = INNODB_ASSERT_FILE_RE.search(ln)
        if m:
            self.innodb_file = _normalise_path(m.group(1))
            return
        m = INNODB_FAILING_RE.search(ln)
        if m and not self.assertion:
            self.assertion = (f"{m.group(1).strip()}"
                              + (f" ({self.innodb_file})" if self.innodb_file else ""))
            return
        func = frame_function(ln)
        if func is not None:
            self.frames.append(func)
            self.raw.append(ln.strip())
            return
        m = CONNECTION_RE.match(ln)
        if m:
            self.connection_id = int(m.group(1))
            return
        m = QUERY_RE.match(ln)
        if m:
            self.query, self.in_query = m.group("sql"), True


# a server's first line as it starts (MariaDB: "Starting MariaDB ..."; MySQL and older
# MariaDB: "mysqld (mysqld 5.7.44) starting as process N ...")
START_RE = re.compile(r"\] Starting MariaDB |\) starting as process \d+")


def since_last_start(log_text: str) -> str:
    """What the error log holds from the server's last start on (all of it when the
    excerpt has no start line): a report there is the last process's, never one of an
    earlier crash the server was restarted after."""
    starts = [m.start() for m in START_RE.finditer(log_text)]
    return log_text[log_text.rfind("\n", 0, starts[-1]) + 1:] if starts else log_text


def report_unique_id(report: CrashReport) -> UniqueId | None:
    """MariaDB QA's UniqueID of a parsed crash report (:mod:`lib.hunt.uniqueid`)."""
    return build_unique_id(signal_name(report.signal), report.frames, HANDLER_REPORT,
                           assertion_text(report.text), SOURCE_REPORT)


def gdb_unique_id(gdb_text: str, log_text: str = "") -> UniqueId | None:
    """MariaDB QA's UniqueID of gdb's backtrace of a core: its crashing thread's frames,
    the signal gdb says the program terminated with, the assertion of the error-log
    excerpt log_text."""
    m = GDB_SIGNAL_RE.search(gdb_text)
    return build_unique_id(m.group(1) if m else "", gdb_frames(gdb_text), HANDLER_GDB,
                           assertion_text(log_text), SOURCE_GDB)


def crash_unique_id(log_text: str, gdb_text: str = "") -> UniqueId | None:
    """A crash's UniqueID from what its error log gained (its crash report) and, when
    there is a core, gdb's backtrace of it: the report's, or gdb's frames when they
    name more (:func:`lib.hunt.uniqueid.better_of`); None when neither has a frame or
    an assertion.  The one call that turns a crash into its UniqueID."""
    report = parse_crash_report(log_text)
    from_report = report_unique_id(report) if report is not None else None
    from_gdb = gdb_unique_id(gdb_text, log_text) if gdb_text else None
    return better_of(from_report, from_gdb)


def logged_crash_signature(log_text: str) -> "Signature | None":
    """The signature a hunt finding would be filed under for the crash report of the
    server's last run in an error-log excerpt (None when that run logged none), with
    the crash's UniqueID."""
    from .signature import crash_signature
    report = parse_crash_report(since_last_start(log_text))
    if report is None:
        return None
    return crash_signature(report.signal, report.assertion, report.fatal, report.bug_frames(),
                           unique_id=report_unique_id(report))


def crash_headline(log_text: str) -> str:
    """``crash signature <id>: <text>`` for the crash report of the server's last run
    (:func:`logged_crash_signature`), then ``UniqueID: <id>`` (MariaDB QA's) when it
    has one; '' when there is no report."""
    sig = logged_crash_signature(log_text)
    if sig is None:
        return ""
    line = f"crash signature {sig.id}: {sig.text}"
    return line + (f"\nUniqueID: {sig.unique_id.text}" if sig.unique_id is not None else "")
