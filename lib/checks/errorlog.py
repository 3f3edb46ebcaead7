"""The error-log warnings check: new ``[ERROR]`` and ``[Warning]`` lines of a test's
servers, minus suppressions, fail the test (as mysql-test-run's check-warnings).

After each test the runner reads what every server's error log gained since
the last check (:class:`LogMarks` keeps the offsets; a server kewpie just
started is read from its first line, so start-up problems count too).  A
line is reported unless a suppression matches it: kewpie's
:data:`GLOBAL_SUPPRESSIONS` (known-benign MariaDB/Galera noise under
kewpie's own options, each with its reason, docs/debugging.md), the suite's
``suppressions`` in suite_config.py, and the test's own
(``self.suppress_warning(regex)``).  Suppressions are regular expressions
searched in the line.

Faults a test injects on purpose (lib/consistency/faults.py, netfaults.py)
make servers log lines too.  Those are excused by *class*, never line by line:
each :class:`FaultClass` of :data:`FAULT_CLASSES` names the kinds of fault,
the role of the server (the ``target`` the fault acts on, or a ``peer`` of its
group), the lines, and why that fault causes them.  A line is excused only
when its timestamp falls inside a window of such a fault on that server
(lib/servers/faultwindows.py: from the injection until the group is healthy
again, plus :data:`FAULT_SETTLE`); the same line outside every window still
fails the test.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable, Protocol, Sequence

from ..servers.faultwindows import PEER, TARGET, FaultWindow
from ..servers.logs import ErrorLog

WARNING_RE = re.compile(r"\[(ERROR|Warning)\]")
MAX_LINES = 20  # per server, in the failure report

# (regex, why it is harmless under kewpie).  Keep each narrow: a suppression hides
# that line in every test of every suite.
GLOBAL_SUPPRESSIONS: tuple[tuple[str, str], ...] = (
    (r"\[Warning\] 'user' entry 'root@[^']*' ignored in --skip-name-resolve mode",
     "mariadb-install-db creates root@<hostname>; kewpie sets skip-name-resolve (every start)"),
    (r"\[Warning\] 'proxies_priv' entry '@% root@[^']*' ignored in --skip-name-resolve mode",
     "the same bootstrap account's proxy grant (every start)"),
    (r"\[Warning\] Aborted connection \d+ to db: 'unconnected' user: '[^']*' host: "
     r"'(127\.0\.0\.1|localhost)' \(Got an error writing communication packets\)",
     "a replica that stops (a test's restart) leaves its primary's binlog dump thread to "
     "fail writing; a client that vanishes while reading logs 'reading' instead, still caught"),
    (r"\[Warning\] Unsafe statement written to the binary log using statement format since "
     r"BINLOG_FORMAT = STATEMENT\. REPLACE\.\.\. SELECT is unsafe .* Statement: REPLACE INTO "
     r"`percona`\.`checksums`",
     "pt-table-checksum (replication checks) writes its checksums with statement-based "
     "REPLACE ... SELECT on purpose, so each replica computes its own"),
    # Galera nodes: what forming, warm-starting and stopping a cluster logs every time.
    (r"\[Warning\] WSREP: non weight changing install in S_PRIM: pcmsg\{ type=INSTALL",
     "kewpie's warm start re-forms the primary component from the snapshot's saved view "
     "(pc.recovery): each node installs the recovered view"),
    (r"\[Warning\] WSREP: No re-merged primary component found\.",
     "the same warm start: the nodes find no earlier primary to merge with, and form one"),
    (r"\[Warning\] WSREP: last inactive check more than PT[\d.]+S ago \(PT[\d.]+S\), "
     r"skipping check",
     "Galera's group-communication timer ran late on a loaded machine (2 shared cores); "
     "a real partition is still reported by its own lines"),
    (r"\[Warning\] WSREP: Could not open state file for reading: '[^']*/grastate\.dat'",
     "a joiner that starts with an empty datadir (a full SST) has no grastate.dat yet"),
)


FAULT_SETTLE = 5.0  # seconds after a fault's heal in which its lines are still excused
# MariaDB's error log: the hour is space-padded ("2026-11-26  0:25:35" before 10:00)
LINE_TIME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}) +(\d{1,2}:\d{2}:\d{2}) ")
ANY_ROLE = frozenset({TARGET, PEER})

# The fault kinds (Fault.name) by what they do to a server.
DOWN = frozenset({"kill", "restart", "rejoin", "upgrade"})      # the process goes and comes back
STALLED = frozenset({"pause", "lag"})                            # it stops answering or applying
CUT = frozenset({"isolate", "partition", "flaky", "loss", "latency"})  # its network breaks
EVERY_FAULT = DOWN | STALLED | CUT


@dataclass(frozen=True)
class FaultClass:
    """Lines that faults of ``kinds`` cause on a server in one of ``roles``, and why."""

    name: str
    kinds: frozenset[str]
    roles: frozenset[str]
    regex: str
    reason: str

    def excuses(self, line: str, window: FaultWindow) -> bool:
        """True when line is one of this class's lines for window's fault and role."""
        return (window.kind in self.kinds and window.role in self.roles
                and re.search(self.regex, line) is not None)


FAULT_CLASSES: tuple[FaultClass, ...] = (
    FaultClass(
        "group re-forming", DOWN | STALLED | CUT, ANY_ROLE,
        r"\[Warning\] WSREP: Last Applied Action message in non-primary configuration "
        r"from member \d+",
        "a member vanished, stalled or was cut off: while the group re-forms, a member's "
        "last-applied report arrives in a non-primary view"),
    FaultClass(
        "stale group messages", DOWN | STALLED | CUT, ANY_ROLE,
        r"\[Warning\] WSREP: Received bogus LAST message: \d+ from node \S+, "
        r"expected > \d+\. Ignoring\.",
        "a member that was killed, stalled or cut off rejoins: its reports of the last "
        "message it saw, sent before the fault, arrive after the group moved on and are "
        "ignored"),
    FaultClass(
        "abandoned handshakes", EVERY_FAULT, ANY_ROLE,
        r"\[Warning\] Aborted connection \d+ to db: 'unconnected' user: 'unauthenticated' "
        r"host: '[^']*' \(This connection closed normally without authentication\)",
        "clients (the workloads' 2 s connect timeout, kewpie's probes) give up on the "
        "handshake of a node that is stalled, cut off, starting or catching up; no "
        "statement was sent"),
    FaultClass(
        "clients cut off", EVERY_FAULT, ANY_ROLE,
        r"\[Warning\] Aborted connection \d+ to db: '[^']*' user: '[^']*' host: '[^']*' "
        r"\(Got (an error|timeout) (reading|writing) communication packets\)",
        "a workload client whose statement failed or timed out on a node under the fault "
        "drops its connection (lib/consistency/workload.py); the node notices later"),
    FaultClass(
        "failed join, restarted", DOWN, ANY_ROLE,
        r"\[ERROR\] WSREP: Receiving IST failed, node restart required: |"
        r"\[ERROR\] WSREP: \S*gcs\.cpp:s_join\(\):\d+: Sending JOIN failed: -\d+ "
        r"\(Connection was closed\)\.$|"
        r"\[Warning\] WSREP: Failed to JOIN the cluster after SST gcs_join\(\S+\) failed$",
        "a node restarted to heal the fault joined while the group re-formed and its IST "
        "was cut short; Galera asks for a restart and kewpie's wait_cluster restarts it "
        "once (it logs that), a second failure fails the heal"),
    FaultClass(
        "relay log recovery", DOWN, frozenset({TARGET}),
        r"\[Warning\] Recovery from master pos \d+ and file \S+\.$",
        "a crash-safe replica (relay_log_recovery) that was killed or restarted drops its "
        "relay log and says from where it fetches again"),
)


class LogSource(Protocol):
    """A server whose error log can be read from a mark (lib.servers.server.Server)."""

    name: str
    errlog: ErrorLog


@dataclass
class LogMarks:
    """How far each server's error log has been checked (one per bot)."""

    offsets: dict[int, tuple[LogSource, int]] = field(default_factory=dict)

    def new_text(self, server: LogSource) -> str:
        """What server's error log gained since the last call (all of it the first
        time), moving the mark to the end."""
        seen = self.offsets.get(id(server))
        mark = seen[1] if seen is not None and seen[0] is server else 0
        text = server.errlog.since(mark)
        self.offsets[id(server)] = (server, mark + len(text.encode(errors="replace")))
        return text

    def skip_to_end(self, server: LogSource) -> None:
        """Mark everything logged so far as checked."""
        self.offsets[id(server)] = (server, server.errlog.size())

    def forget_others(self, servers: Iterable[LogSource]) -> None:
        """Drop the marks of servers no longer in use (their logs are gone)."""
        keep = {id(s) for s in servers}
        self.offsets = {k: v for k, v in self.offsets.items() if k in keep}


def compile_suppressions(*groups: Iterable[str]) -> list[re.Pattern[str]]:
    """The global suppressions followed by the given regex groups, compiled."""
    patterns = [re.compile(regex) for regex, _ in GLOBAL_SUPPRESSIONS]
    for group in groups:
        patterns.extend(re.compile(p) for p in group)
    return patterns


def line_time(line: str) -> float | None:
    """When an error-log line was written (seconds since the epoch, local time as the
    server writes it), or None for a line without MariaDB's timestamp."""
    match = LINE_TIME_RE.match(line)
    if not match:
        return None
    try:
        return datetime.strptime(f"{match.group(1)} {match.group(2)}", "%Y-%m-%d %H:%M:%S").timestamp()
    except ValueError:
        return None


def fault_excuse(line: str, windows: Sequence[FaultWindow], now: float | None = None,
                 settle: float = FAULT_SETTLE,
                 classes: Sequence[FaultClass] = FAULT_CLASSES) -> tuple[FaultWindow, FaultClass] | None:
    """The fault window and class that excuse line, or None (the line counts)."""
    if not windows:
        return None
    when = line_time(line)
    if when is None:
        return None
    now = time.time() if now is None else now
    for window in windows:
        if window.covers(when, settle, now):
            for fault_class in classes:
                if fault_class.excuses(line, window):
                    return window, fault_class
    return None


@dataclass
class Judged:
    """An error log's new [ERROR]/[Warning] lines: those that fail the test, and those a
    fault window excused (with the window and the class)."""

    failing: list[str] = field(default_factory=list)
    excused: list[tuple[str, FaultWindow, FaultClass]] = field(default_factory=list)


def judge(text: str, suppressions: list[re.Pattern[str]],
          windows: Sequence[FaultWindow] = (), now: float | None = None,
          settle: float = FAULT_SETTLE) -> Judged:
    """Sort text's [ERROR]/[Warning] lines: suppressed ones go, lines of a fault class
    inside one of windows are excused, the rest fail."""
    judged = Judged()
    for line in text.splitlines():
        if not WARNING_RE.search(line) or any(s.search(line) for s in suppressions):
            continue
        excuse = fault_excuse(line, windows, now, settle)
        if excuse is None:
            judged.failing.append(line)
        else:
            judged.excused.append((line, *excuse))
    return judged


def unsuppressed(text: str, suppressions: list[re.Pattern[str]],
                 windows: Sequence[FaultWindow] = (), now: float | None = None) -> list[str]:
    """The [ERROR]/[Warning] lines of text that no suppression matches and no fault
    window excuses."""
    return judge(text, suppressions, windows, now).failing


def report(found: dict[str, tuple[str, list[str]]]) -> str:
    """The failure text: per server, its log's path and the lines (at most MAX_LINES)."""
    parts = ["error log warnings (suppress benign ones in suite_config.py's suppressions "
             "or with self.suppress_warning(regex); --no-check-warnings turns the check off):"]
    for name, (path, lines) in found.items():
        parts.append(f"{name} ({path}):")
        parts.extend(f"  {line}" for line in lines[:MAX_LINES])
        if len(lines) > MAX_LINES:
            parts.append(f"  ... and {len(lines) - MAX_LINES} more")
    return "\n".join(parts)
