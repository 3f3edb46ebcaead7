"""A crash's UniqueID matched against ``known_bugs.strings``: exactly, then by similarity.

**Exact** (mariadb-qa's own rule, as its tools clean known bugs out of a run):
a line matches when its UniqueID, compared without regard to case, is part of
the crash's UniqueID text.  Active lines are tried first, then the disabled
lines that say ``Fixed``.

**Similar** (kewpie's rule, for UniqueIDs of release builds: stripped and
inlined, their frames often differ from the debug builds' the list comes from):
a crash line of the list (a signal and frames) is similar to the crash when

1. the signal is the same;
2. the assertion is the same, when the line has one (a debug build's
   assertion that a release build does not have cannot be checked: such a
   line is never similar); whitespace is not compared;
3. its frames and the crash's first :data:`DEPTH` kept frames have at least
   :data:`MIN_COMMON` frames in common *in the same order* (the longest
   common subsequence), the crash's first common frame among its first
   :data:`TOP` -- the crash is where the line says, not just called from the
   same place;
4. at least one frame in common is *distinctive*: listed in no more than
   :data:`DISTINCTIVE` crash lines of the file (``mysql_execute_command`` or
   ``JOIN::optimize_inner`` alone say nothing about which bug it is).

The lines that are similar are ranked by frames in common, then by how close
to the top the first common frame is, then by fewer of the line's frames
missing; the best rank wins **when every line of that rank names the same
bug**.  When lines of different bugs tie, the crash is *ambiguous*: no bug is
named (a wrong bug id would be worse than none), and the candidates are
listed.  A match says its **quality**: ``exact``, or ``similar`` with the
frames in common (``similar: 3/4 frames in order (+signal, +assertion)``).

:class:`StringsIndex` holds a file's lines with the frames' counts;
:func:`identify_crash` is the one call from a crash (its error-log excerpt and
gdb's backtrace) to its UniqueID and best match.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from .kbstrings import OPEN, StringsEntry
from .uniqueid import UniqueId

EXACT, SIMILAR, AMBIGUOUS = "exact", "similar", "ambiguous"
DEPTH = 10          # the crash's kept frames compared
TOP = 3             # the crash's first common frame is one of its first TOP
MIN_COMMON = 2      # frames in common, in order
DISTINCTIVE = 12    # a frame in at most this many crash lines of the file says which bug


@dataclass(frozen=True)
class Match:
    """What the list says of a crash: the best line(s) and the bug(s) they name."""

    quality: str                          # exact, similar or ambiguous
    entries: tuple[StringsEntry, ...]     # the best line(s)
    bug_ids: tuple[str, ...]              # the bug named ('' for none); candidates if ambiguous
    detail: str                           # what matched, said for people
    common: int = 0                       # frames in common (similar)
    exact: bool = False                   # the line's UniqueID is part of the crash's

    @property
    def attributed(self) -> bool:
        """Does the match name one bug (exact or similar, not ambiguous)?"""
        return self.quality != AMBIGUOUS and bool(self.bug_ids)

    @property
    def bug_id(self) -> str:
        """The bug named ('' when ambiguous or when the line names none)."""
        return self.bug_ids[0] if self.attributed else ""

    @property
    def entry(self) -> StringsEntry:
        """The first best line."""
        return self.entries[0]

    def to_json(self) -> dict[str, Any]:
        """The match as plain data."""
        return {"quality": self.quality, "bug_ids": list(self.bug_ids), "detail": self.detail,
                "common": self.common, "exact": self.exact,
                "lines": [e.to_json() for e in self.entries[:6]]}


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def common_in_order(ours: Sequence[str], theirs: Sequence[str]) -> tuple[int, int]:
    """(length of the longest common subsequence of two frame lists, the index in ours of
    its first frame; -1 when none)."""
    n, m = len(ours), len(theirs)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = (table[i + 1][j + 1] + 1 if ours[i] == theirs[j]
                           else max(table[i + 1][j], table[i][j + 1]))
    if table[0][0] == 0:
        return 0, -1
    i = j = 0
    while i < n and j < m:      # walk to the first frame of one longest subsequence
        if ours[i] == theirs[j] and table[i][j] == table[i + 1][j + 1] + 1:
            return table[0][0], i
        if table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return table[0][0], -1


def _shared_ids(entries: Sequence[StringsEntry]) -> tuple[str, ...]:
    """The bug ids every entry names (in the first one's order)."""
    shared = list(entries[0].bug_ids)
    for entry in entries[1:]:
        shared = [b for b in shared if b in entry.bug_ids]
    return tuple(shared)


def _all_ids(entries: Sequence[StringsEntry]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(b for e in entries for b in e.bug_ids))


class StringsIndex:
    """The lines of ``known_bugs.strings`` files, ready for matching."""

    def __init__(self, entries: Sequence[StringsEntry]) -> None:
        self.entries = tuple(entries)
        self.crashes = tuple(e for e in self.entries if e.crash)
        counts: Counter[str] = Counter()
        for entry in self.crashes:
            counts.update(set(entry.frames))
        self.frame_counts = counts

    def distinctive(self, frame: str) -> bool:
        """Is this frame listed in few enough crash lines to tell bugs apart?"""
        return self.frame_counts.get(frame, 0) <= DISTINCTIVE

    def exact(self, uid: UniqueId) -> Match | None:
        """The lines whose UniqueID is part of the crash's (active lines first)."""
        text = uid.text.lower()
        if not text:
            return None
        for wanted in ((OPEN,), ("fixed",)):
            found = tuple(e for e in self.entries
                          if e.status in wanted and e.text and e.text.lower() in text)
            if found:
                shared = _shared_ids(found)
                if shared or not _all_ids(found):
                    return Match(EXACT, found, shared, "exact UniqueID", exact=True)
                return Match(AMBIGUOUS, found, _all_ids(found),
                             "exact UniqueID, listed for different bugs", exact=True)
        return None

    def _similar_rank(self, uid: UniqueId, entry: StringsEntry) -> tuple[int, int, int] | None:
        """(common, -first position, -missing) when entry is similar to the crash."""
        if entry.signal != uid.signal or not entry.frames:
            return None
        if entry.assertion and _norm(entry.assertion) != _norm(uid.assertion):
            return None
        ours = uid.stack[:DEPTH]
        common, first = common_in_order(ours, entry.frames)
        if common < min(MIN_COMMON, len(entry.frames)) or first < 0 or first >= TOP:
            return None
        shared = set(ours) & set(entry.frames)
        if not any(self.distinctive(f) for f in shared):
            return None
        return common, -first, -(len(entry.frames) - common)

    def similar(self, uid: UniqueId) -> Match | None:
        """The best similar line(s) (see the module docstring), or None."""
        if not uid.signal or not uid.stack:
            return None
        ranked: dict[tuple[int, int, int], list[StringsEntry]] = {}
        for entry in self.crashes:
            rank = self._similar_rank(uid, entry)
            if rank is not None:
                ranked.setdefault(rank, []).append(entry)
        if not ranked:
            return None
        best = max(ranked)
        entries = tuple(ranked[best])
        common = best[0]
        detail = (f"similar: {common}/{max(len(e.frames) for e in entries)} frames in order "
                  f"(+signal{', +assertion' if entries[0].assertion else ''})")
        shared = _shared_ids(entries)
        if shared:
            return Match(SIMILAR, entries, shared, detail, common)
        return Match(AMBIGUOUS, entries, _all_ids(entries),
                     detail + ", listed for different bugs", common)

    def match(self, uid: UniqueId | None) -> Match | None:
        """Exact first, then similar; None when nothing matches."""
        if uid is None:
            return None
        return self.exact(uid) or self.similar(uid)


@dataclass(frozen=True)
class Identified:
    """A crash's UniqueID and what the list says of it."""

    unique_id: UniqueId | None
    match: Match | None

    def to_json(self) -> dict[str, Any]:
        """Both as plain data."""
        return {"unique_id": self.unique_id.to_json() if self.unique_id else None,
                "match": self.match.to_json() if self.match else None}


def identify_crash(log_text: str, gdb_text: str, index: StringsIndex) -> Identified:
    """A crash's UniqueID (from what its error log gained and gdb's backtrace of its
    core, either may be '') and its best match in index."""
    from .crashreport import crash_unique_id  # the parsers: only for a crash's text
    uid = crash_unique_id(log_text, gdb_text)
    return Identified(uid, index.match(uid))
