"""A crash's UniqueID matched against ``known_bugs.strings``: exactly, then by similarity.

**Exact** (mariadb-qa's own rule, as its tools clean known bugs out of a run):
a line matches when its UniqueID, compared without regard to case, is part of
the crash's UniqueID text.  Active lines are tried first, then the disabled
lines that say ``Fixed``.

**Similar** (kewpie's rule, for UniqueIDs of release builds: stripped and
inlined, their frames often differ from the debug builds' the list comes from:
a static function prints as ``??`` and is left out, an inlined one has no
frame).  A crash line of the list (a signal and frames) is similar to the
crash when

1. the signal is the same;
2. the assertion is the same (whitespace aside), or neither has one: a debug
   build's assertion that a release build does not have cannot be checked,
   and such a line is never similar;
3. the crash's first :data:`MIN_COMMON` frames (or more; its first frame alone
   when both have the same assertion: a release build keeps InnoDB's assertions
   while the frames around them are ``??``) are the line's frames, in the same
   order, with none of the crash's frames left out between them
   -- the line's own frames in between may be missing from the crash.  A
   release build's stack is the debug build's with frames taken out (inlined
   functions have no frame, static ones print as ``??``), never with frames
   added, and a line's frames are consecutive frames of the debug build's
   stack: so the crash's top frame, where it crashed, must be one of them, and
   a frame of the crash that the line does not have ends what they share.
   The frames shared so counted are the match's *frames in common* (libc's CPU
   variants such as ``__memset_avx512_unaligned_erms`` and
   ``__memset_evex_unaligned_erms`` count as one);
4. one of those frames is *distinctive*: listed in no more than 1% of the
   file's crash lines (:data:`DISTINCTIVE_SHARE`; :data:`DISTINCTIVE` lines
   when that is more) -- ``mysql_execute_command`` or ``JOIN::optimize_inner``
   alone say nothing about which bug it is.

Failing that, an **assertion** alone: the same assertion and signal, when every
line with that assertion names the same bug (InnoDB's ``ut_a`` assertions
survive in release builds while the InnoDB frames around them are ``??``).

The similar lines are ranked by frames in common, then by fewer of the line's
frames missing.  The first of these wins: the open lines that match exactly,
the open lines that are similar (the best rank), the Fixed lines that match
exactly, the Fixed lines that are similar -- a bug taken out of the list as
Fixed does not outrank an open one -- **when its lines name one bug, and no
rival (another bug with a line of the same status that matches exactly or is
similar) is listed with a UniqueID line identical to one of the winner's**
(the list then says the two bugs crash alike).  Otherwise the crash is *ambiguous*: no bug is named (a wrong bug id
would be worse than none), the candidates are listed.  A match says its
**quality**: ``exact UniqueID``, ``similar: 3/4 frames in order (+signal)``,
``similar: assertion (+signal)``.

:class:`StringsIndex` holds a file's lines with the frames' counts;
:func:`identify_crash` is the one call from a crash (its error-log excerpt and
gdb's backtrace) to its UniqueID and best match.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from .kbstrings import FIXED, OPEN, StringsEntry
from .uniqueid import UniqueId

EXACT, SIMILAR, AMBIGUOUS = "exact", "similar", "ambiguous"
MIN_COMMON = 2      # the crash's top frames shared with a line, in order
DISTINCTIVE = 12    # a frame in at most this many crash lines (or DISTINCTIVE_SHARE of
DISTINCTIVE_SHARE = 0.01    # them, whichever is more) says which bug it is
_LIBC_VARIANT_RE = re.compile(r"^(__[a-z]+?)_(?:avx512|avx2|avx|evex512|evex|sse4_2|sse4_1|"
                              r"ssse3|sse2)(?:_\w+)?$")


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


def canonical_frame(frame: str) -> str:
    """A frame as compared: libc's CPU-specific variants of a string function as one
    (``__memset_avx512_unaligned_erms`` -> ``__memset``)."""
    m = _LIBC_VARIANT_RE.match(frame)
    return m.group(1) if m else frame


def common_in_order(ours: Sequence[str], theirs: Sequence[str]) -> int:
    """How many of our first frames are their frames, in order, with none of ours left
    out between them (theirs may have more in between): 0 when our top frame is not
    one of theirs."""
    at, count = 0, 0
    for frame in ours:
        try:
            at = list(theirs).index(frame, at) + 1
        except ValueError:
            break
        count += 1
    return count


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
        self._frames = {id(e): tuple(canonical_frame(f) for f in e.frames) for e in self.crashes}
        counts: Counter[str] = Counter()
        assertions: dict[str, set[str]] = {}
        texts: dict[str, set[str]] = {}
        for entry in self.crashes:
            counts.update(set(self._frames[id(entry)]))
            if entry.assertion:
                assertions.setdefault(_norm(entry.assertion), set()).update(entry.bug_ids)
            texts.setdefault(entry.text.lower(), set()).update(entry.bug_ids)
        self.frame_counts = counts
        self.distinctive_limit = max(DISTINCTIVE, int(DISTINCTIVE_SHARE * len(self.crashes)))
        self._assertion_bugs = assertions
        self._alike: dict[str, set[str]] = {}     # bug -> bugs listed with an identical line
        for bugs in texts.values():
            for bug in bugs:
                self._alike.setdefault(bug, set()).update(bugs - {bug})

    def distinctive(self, frame: str) -> bool:
        """Is this frame listed in few enough crash lines to tell bugs apart?"""
        return self.frame_counts.get(frame, 0) <= self.distinctive_limit

    def _exact_lines(self, uid: UniqueId, status: str) -> tuple[StringsEntry, ...]:
        """The lines of a status whose UniqueID is part of the crash's."""
        text = uid.text.lower()
        return tuple(e for e in self.entries
                     if e.status == status and e.text and e.text.lower() in text) if text else ()

    def _similar_lines(self, uid: UniqueId, status: str) -> dict[tuple[int, int], list[StringsEntry]]:
        """The crash lines of a status similar to the crash, by rank."""
        ranked: dict[tuple[int, int], list[StringsEntry]] = {}
        if uid.signal:
            for entry in self.crashes:
                rank = self._similar_rank(uid, entry) if entry.status == status else None
                if rank is not None:
                    ranked.setdefault(rank, []).append(entry)
        return ranked

    def exact(self, uid: UniqueId) -> Match | None:
        """The lines whose UniqueID is part of the crash's (open lines first), as
        mariadb-qa matches them; None when there is none."""
        for status in (OPEN, FIXED):
            found = self._exact_lines(uid, status)
            if found:
                return self._verdict(found, "exact UniqueID", 0, True, set())
        return None

    def _similar_rank(self, uid: UniqueId, entry: StringsEntry) -> tuple[int, int] | None:
        """(frames in common, -line frames missing) when entry is similar to the crash."""
        if entry.signal != uid.signal or not entry.frames:
            return None
        if _norm(entry.assertion) != _norm(uid.assertion):
            return None
        ours = tuple(canonical_frame(f) for f in uid.stack)
        theirs = self._frames[id(entry)]
        common = common_in_order(ours, theirs)
        need = 1 if uid.assertion else MIN_COMMON   # the same assertion says much already
        if common < min(need, len(theirs)) or common == 0:
            return None
        if not any(self.distinctive(f) for f in ours[:common]):
            return None
        return common, -(len(theirs) - common)

    def _assertion_match(self, uid: UniqueId) -> Match | None:
        """The lines of the crash's assertion (and signal) when they all name one bug."""
        key = _norm(uid.assertion)
        if not key or not self._assertion_bugs.get(key):
            return None
        entries = tuple(e for e in self.crashes if e.assertion and _norm(e.assertion) == key
                        and e.signal == uid.signal)
        shared = _shared_ids(entries) if entries else ()
        if not shared or set(_all_ids(entries)) != self._assertion_bugs[key]:
            return None
        return Match(SIMILAR, entries, shared, "similar: assertion (+signal)")

    def _verdict(self, entries: tuple[StringsEntry, ...], detail: str, common: int, exact: bool,
                 rivals: set[str]) -> Match:
        """The match of the best lines: their bug, unless they name different bugs, or one
        of the rivals (other bugs with a matching line) is listed alike with theirs."""
        quality = EXACT if exact else SIMILAR
        shared = _shared_ids(entries)
        if not shared and _all_ids(entries):
            return Match(AMBIGUOUS, entries, _all_ids(entries),
                         detail + ", listed for different bugs", common, exact)
        alike = sorted({b for w in shared for b in self._alike.get(w, set())} & rivals)
        if alike:
            return Match(AMBIGUOUS, entries, (*shared, *alike),
                         detail + f", listed alike for {', '.join(alike)}", common, exact)
        return Match(quality, entries, shared, detail, common, exact)

    def match(self, uid: UniqueId | None) -> Match | None:
        """The first of: exact open lines, similar open lines, exact Fixed lines, similar
        Fixed lines, an assertion alone -- no bug named when a rival (another bug with a
        line of the same status that matches exactly or is similar) is listed alike with
        the winner's; None when nothing matches."""
        if uid is None:
            return None
        for status in (OPEN, FIXED):
            exact = self._exact_lines(uid, status)
            ranked = self._similar_lines(uid, status)
            if not exact and not ranked:
                continue
            rivals = {b for e in exact for b in e.bug_ids} | \
                {b for lines in ranked.values() for e in lines for b in e.bug_ids}
            if exact:
                entries, detail, common = exact, "exact UniqueID", 0
            else:
                best = max(ranked)
                entries, common = tuple(ranked[best]), best[0]
                detail = (f"similar: {common}/{max(len(e.frames) for e in entries)} frames in "
                          f"order (+signal{', +assertion' if entries[0].assertion else ''})")
            return self._verdict(entries, detail, common, bool(exact),
                                 rivals - set(_shared_ids(entries)))
        return self._assertion_match(uid)


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
