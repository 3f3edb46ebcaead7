"""Known bugs: files mapping signatures to bug ids, and each finding's tag.

Two formats.  **kewpie's own**: one entry per line; ``#`` starts a comment;
fields are separated by spaces and may be quoted as in a shell (single quotes
keep a regex as written)::

    # BUG-ID     STATUS          MATCH                                 NOTE
    MDEV-99999   open            sig:3f2a9c1d7e21                      planted UDF crash
    MDEV-12345   fixed:10.11.9   re:'signal 11 \\| frames: kw_planted'  a regression if seen again
    MDEV-36990   open            uid:'SIGFPE|TABLE::init_cost_info_for_usable_range_rowid_filters'

- BUG-ID: any word (``MDEV-12345``, ``PS-4321``, ``local-7``);
- STATUS: ``open``, or ``fixed:VERSION`` (the first release with the fix);
- MATCH: ``sig:ID`` (a finding's 12-digit signature id), ``re:REGEX`` (a
  Python regular expression searched in the signature's text) -- either also
  matched against the signature's former id and text (an errorlog line signed
  before its error number was kept: ``Got error N when reading table ?``), so
  entries written then keep naming what they named -- or
  ``uid:UNIQUEID`` (MariaDB QA's UniqueID, :mod:`lib.hunt.uniqueid`: part of
  the crash's UniqueID, case aside, as mariadb-qa matches them);
- NOTE: the rest of the line (optional).

**MariaDB QA's** ``known_bugs.strings``, as published (:mod:`lib.hunt.kbstrings`):
a file named ``*.strings``, or whose first entry holds a ``|`` where kewpie's
has ``BUG-ID STATUS MATCH``.  A crash's UniqueID is matched against its
lines exactly, then by similarity (:mod:`lib.hunt.bugmatch`); the match's
line gives the bug id(s), its quality is said (``exact``, ``similar: 3/4
frames in order (+signal)``).

A finding is **known** when an entry matches (the first file, in order, with a
match wins; in kewpie's format its first matching entry), unless that entry
says ``fixed:X`` and the server's version is X or later: then it is
**known-fixed** (a regression).  A ``known_bugs.strings`` line taken out as
``Fixed`` does not say in which release: a match is known, with status
``fixed``.  A crash that resembles lines of different bugs equally names none:
it is **new**, and the candidates are kept (``Tagged.match``).  With no
matching entry it is **new**.  A file that cannot be read, or an entry that
breaks these rules, is a :class:`KnownBugsError` naming the file and line.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Sequence

from .bugmatch import AMBIGUOUS, Match, StringsIndex
from .errors import KnownBugsError
from .kbstrings import FIXED, StringsEntry, is_strings_file, load_strings
from .signature import Signature

NEW, KNOWN, KNOWN_FIXED = "new", "known", "known-fixed"
TAGS = (NEW, KNOWN, KNOWN_FIXED)
_VERSION_RE = re.compile(r"^\d+(?:\.\d+){0,3}$")
_SIG_RE = re.compile(r"^[0-9a-f]{12}$")


def version_tuple(version: str) -> tuple[int, ...]:
    """``10.11.19-MariaDB-0+deb12u1`` -> (10, 11, 19); () when there is no version."""
    m = re.match(r"\s*(\d+(?:\.\d+)*)", version or "")
    return tuple(int(p) for p in m.group(1).split(".")) if m else ()


@dataclass(frozen=True)
class KnownBug:
    """One entry of a known-bugs file."""

    bug_id: str
    status: str                  # 'open' or 'fixed'
    fixed_in: str                # the version of a 'fixed' entry
    match: str                   # 'sig:ID', 're:REGEX' or 'uid:UNIQUEID' as written
    note: str
    path: str
    line: int
    quality: str = ""            # a known_bugs.strings match: 'exact' or 'similar: ...'

    def matches(self, sig: Signature) -> bool:
        """True when this entry names sig -- or sig as it was signed before (its former
        id and text: an entry written for an errorlog finding whose numbers were all
        masked still names it)."""
        kind, _, value = self.match.partition(":")
        if kind == "sig":
            return value in (sig.id, sig.former_id)
        if kind == "uid":
            return sig.unique_id is not None and bool(sig.unique_id.text) and \
                value.lower() in sig.unique_id.text.lower()
        return any(re.search(value, text) is not None for text in (sig.text, sig.former)
                   if text)

    def to_json(self) -> dict[str, Any]:
        """The entry as plain data (finding.json's ``bug``)."""
        status = "open" if self.status == "open" else \
            f"fixed:{self.fixed_in}" if self.fixed_in else "fixed"
        data: dict[str, Any] = {"id": self.bug_id, "status": status, "match": self.match,
                                "note": self.note, "file": self.path, "line": self.line}
        if self.quality:
            data["quality"] = self.quality
        return data


@dataclass(frozen=True)
class Tagged:
    """A finding's tag and the entry behind it (None for new); match: what a
    ``known_bugs.strings`` file said (a new finding's may list the bugs it resembles)."""

    tag: str
    bug: KnownBug | None = None
    match: Match | None = None

    def to_json(self) -> dict[str, Any]:
        """The tag, the entry and the match as plain data."""
        return {"tag": self.tag, "bug": self.bug.to_json() if self.bug else None,
                "match": self.match.to_json() if self.match else None}


@dataclass(frozen=True)
class StringsFile:
    """A ``known_bugs.strings`` file among the known-bugs files."""

    path: str
    index: StringsIndex

    def lookup(self, sig: Signature) -> Match | None:
        """The file's best match for a crash's UniqueID (None for other findings)."""
        if sig.kind != "crash" or sig.unique_id is None:
            return None
        return self.index.match(sig.unique_id)


def strings_bug(match: Match) -> KnownBug:
    """The entry a ``known_bugs.strings`` match stands for (its best line)."""
    entry: StringsEntry = match.entry
    bug_id = "/".join(match.bug_ids) or f"line-{entry.line}"
    return KnownBug(bug_id, "fixed" if entry.status == FIXED else "open", "",
                    f"uid:{entry.text}", entry.note, entry.path, entry.line,
                    quality=match.detail)


def parse_entry(text: str, path: str, line: int) -> KnownBug | None:
    """One line of a known-bugs file (None for a blank or comment line)."""
    try:
        lexer = shlex.shlex(text, posix=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        fields = list(lexer)
    except ValueError as exc:
        raise KnownBugsError(f"cannot split the entry ({exc}): {text.strip()}", path, line) from None
    if not fields:
        return None
    if len(fields) < 3:
        raise KnownBugsError(f"an entry is 'BUG-ID STATUS MATCH [NOTE]' (e.g. 'MDEV-12345 open "
                             f"sig:3f2a9c1d7e21 note'), got: {text.strip()}", path, line)
    bug_id, status, match, note = fields[0], fields[1], fields[2], " ".join(fields[3:])
    fixed_in = ""
    if status.startswith("fixed:"):
        fixed_in = status[len("fixed:"):]
        if not _VERSION_RE.match(fixed_in):
            raise KnownBugsError(f"status {status!r}: the version after 'fixed:' must be a "
                                 f"version number such as 10.11.9", path, line)
        status = "fixed"
    elif status != "open":
        raise KnownBugsError(f"status {status!r} is neither 'open' nor 'fixed:VERSION'",
                             path, line)
    kind, sep, value = match.partition(":")
    if kind == "sig" and sep:
        if not _SIG_RE.match(value):
            raise KnownBugsError(f"match {match!r}: a signature id is 12 lower-case hex digits "
                                 f"(as in a finding's signature.id)", path, line)
    elif kind == "uid" and sep and value.strip():
        pass
    elif kind == "re" and sep and value:
        try:
            re.compile(value)
        except re.error as exc:
            raise KnownBugsError(f"match {match!r} is not a regular expression: {exc}",
                                 path, line) from None
    else:
        raise KnownBugsError(f"match {match!r} is neither 'sig:ID', 're:REGEX' nor "
                             f"'uid:UNIQUEID'", path, line)
    return KnownBug(bug_id, status, fixed_in, match, note, path, line)


@dataclass(frozen=True)
class KnownBugs:
    """The entries of one or more known-bugs files, in order."""

    entries: tuple[KnownBug | StringsFile, ...] = ()
    files: tuple[str, ...] = ()

    @classmethod
    def load(cls, paths: Sequence[str]) -> "KnownBugs":
        """Read the files, each in its format (KnownBugsError for an unreadable file or a
        malformed entry)."""
        entries: list[KnownBug | StringsFile] = []
        for path in paths:
            try:
                with open(path, encoding="utf-8") as fh:
                    lines = fh.read().splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise KnownBugsError(f"cannot read it: {reason}", path) from None
            if is_strings_file(path, lines):
                entries.append(StringsFile(path, StringsIndex(load_strings(path, lines))))
                continue
            for number, text in enumerate(lines, start=1):
                entry = parse_entry(text, path, number)
                if entry is not None:
                    entries.append(entry)
        return cls(tuple(entries), tuple(paths))

    def lists(self, bug_id: str) -> bool:
        """Does an entry (or a known_bugs.strings line, open or Fixed) name bug_id?"""
        for entry in self.entries:
            if isinstance(entry, StringsFile):
                if any(bug_id in e.bug_ids for e in entry.index.entries):
                    return True
            elif entry.bug_id == bug_id:
                return True
        return False

    @property
    def count(self) -> int:
        """Entries of kewpie's format plus lines of known_bugs.strings files."""
        return sum(len(e.index.entries) if isinstance(e, StringsFile) else 1
                   for e in self.entries)

    def tag(self, sig: Signature, server_version: str) -> Tagged:
        """new, known or known-fixed for a signature seen on a server of that version
        (a crash's UniqueID, which the signature carries, is looked up in
        ``known_bugs.strings`` files)."""
        resembles: Match | None = None
        for entry in self.entries:
            if isinstance(entry, StringsFile):
                match = entry.lookup(sig)
                if match is None:
                    continue
                if match.quality == AMBIGUOUS and not match.exact:
                    resembles = resembles or match     # similar to different bugs: none named
                    continue
                return Tagged(KNOWN, strings_bug(match), match)
            if entry.matches(sig):
                if entry.status == "fixed":
                    seen = version_tuple(server_version)
                    if seen and seen >= version_tuple(entry.fixed_in):
                        return Tagged(KNOWN_FIXED, entry)
                return Tagged(KNOWN, entry)
        return Tagged(NEW, None, resembles)
