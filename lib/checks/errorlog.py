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
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Protocol

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
    (r"\[Warning\] Aborted connection \d+ to db: 'unconnected' user: 'unauthenticated' host: "
     r"'(127\.0\.0\.1|localhost)' \(This connection closed normally without authentication\)",
     "kewpie's readiness and health probes (2 s connect timeout, lib/servers/sql.py) give up "
     "on a handshake a loaded, just-restarted server answers late (seen after a "
     "whole-cluster restart on 2 shared cores); no statement was sent"),
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


class LogSource(Protocol):
    """A server whose error log can be read from a mark (lib.servers.server.Server)."""

    name: str

    @property
    def error_log(self) -> str:
        """The error log's path."""

    def error_log_size(self) -> int:
        """The log's size now."""

    def error_log_since(self, mark: int) -> str:
        """What the log gained since mark."""


@dataclass
class LogMarks:
    """How far each server's error log has been checked (one per bot)."""

    offsets: dict[int, tuple[LogSource, int]] = field(default_factory=dict)

    def new_text(self, server: LogSource) -> str:
        """What server's error log gained since the last call (all of it the first
        time), moving the mark to the end."""
        seen = self.offsets.get(id(server))
        mark = seen[1] if seen is not None and seen[0] is server else 0
        text = server.error_log_since(mark)
        self.offsets[id(server)] = (server, mark + len(text.encode(errors="replace")))
        return text

    def skip_to_end(self, server: LogSource) -> None:
        """Mark everything logged so far as checked."""
        self.offsets[id(server)] = (server, server.error_log_size())

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


def unsuppressed(text: str, suppressions: list[re.Pattern[str]]) -> list[str]:
    """The [ERROR]/[Warning] lines of text that no suppression matches."""
    return [line for line in text.splitlines()
            if WARNING_RE.search(line) and not any(s.search(line) for s in suppressions)]


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
