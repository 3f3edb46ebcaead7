"""A failed test whose servers died of a known bug.

A suite's ``known_bugs.txt`` (and each ``--known-bugs`` file) lists bugs by
the signature of the crash they cause (lib/hunt/knownbugs.py, the same file
a hunt reads).  When a test fails because servers died, each dead server's
crash report is signed as a hunt would sign it
(:func:`lib.hunt.signature.crash_signature`) and looked up:

- every dead server died of a known, open bug: the test still fails, and
  its report names the bug (``known bug MDEV-1 (open): ...``); with
  ``--allow-known`` that failure does not fail the run;
- a server died of a bug listed as fixed in its version or earlier: the
  report says it is a regression;
- any other death (no crash report, or a signature no entry matches): an
  ordinary failure.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

from ..hunt.errors import KnownBugsError
from ..hunt.knownbugs import KNOWN, KNOWN_FIXED, KnownBugs
from ..servers.server import Server
from .deadreport import REPORT_LINES

KNOWN_BUGS_FILE = "known_bugs.txt"


@dataclass(frozen=True)
class KnownVerdict:
    """What the known-bugs files say about a failed test's dead servers."""

    known: str = ""   # 'BUG-ID (open): note' when every death is a known open bug, else ''
    note: str = ""    # the lines for the test's report ('' when no entry matched)


@dataclass
class KnownFailures:
    """The known-bugs files of a run: ``--known-bugs`` files plus each suite's own."""

    extra_files: tuple[str, ...] = ()
    _by_suite: dict[str, KnownBugs] = field(default_factory=dict)

    def bugs_for(self, suite_path: str) -> KnownBugs:
        """The entries for a suite: its known_bugs.txt first, then the --known-bugs files
        (KnownBugsError for a file that cannot be read or a malformed entry)."""
        if suite_path not in self._by_suite:
            own = os.path.join(suite_path, KNOWN_BUGS_FILE)
            files = [own] if os.path.isfile(own) else []
            self._by_suite[suite_path] = KnownBugs.load([*files, *self.extra_files])
        return self._by_suite[suite_path]

    def judge(self, suite_path: str, dead: Sequence[Server]) -> KnownVerdict:
        """Look up the crash of each dead server (see the module docstring)."""
        from ..hunt.crashreport import logged_crash_signature
        try:
            bugs = self.bugs_for(suite_path)
        except KnownBugsError as exc:  # a suite's file broken: said, and the failure stays
            return KnownVerdict("", f"known bugs not looked up: {exc}")
        if not bugs.entries or not dead:
            return KnownVerdict()
        known: list[str] = []
        lines: list[str] = []
        for server in dead:
            sig = logged_crash_signature(server.errlog.tail(REPORT_LINES))
            if sig is None:
                continue
            version = server.tree.version.version if server.tree.version else ""
            tagged = bugs.tag(sig, version)
            entry = tagged.bug
            if tagged.tag == KNOWN and entry is not None:
                state = "open" if entry.status == "open" else f"fixed in {entry.fixed_in}"
                what = f"{entry.bug_id} ({state})" + (f": {entry.note}" if entry.note else "")
                known.append(what)
                lines.append(f"known bug {what} — {server.name} crashed with signature "
                             f"{sig.id} ({entry.path}:{entry.line})")
            elif tagged.tag == KNOWN_FIXED and entry is not None:
                lines.append(f"REGRESSION: {server.name} crashed of {entry.bug_id}, fixed in "
                             f"{entry.fixed_in} (this server is {version}; signature {sig.id})")
        every = len(known) == len(dead)
        return KnownVerdict("; ".join(dict.fromkeys(known)) if every else "", "\n".join(lines))
