"""Known bugs: a plain-text file mapping signatures to bug ids, and each finding's tag.

One entry per line; ``#`` starts a comment; fields are separated by spaces
and may be quoted as in a shell (single quotes keep a regex as written)::

    # BUG-ID     STATUS          MATCH                                 NOTE
    MDEV-99999   open            sig:3f2a9c1d7e21                      planted UDF crash
    MDEV-12345   fixed:10.11.9   re:'signal 11 \\| frames: kw_planted'  a regression if seen again

- BUG-ID: any word (``MDEV-12345``, ``PS-4321``, ``local-7``);
- STATUS: ``open``, or ``fixed:VERSION`` (the first release with the fix);
- MATCH: ``sig:ID`` (a finding's 12-digit signature id) or ``re:REGEX`` (a
  Python regular expression searched in the signature's text);
- NOTE: the rest of the line (optional).

A finding is **known** when an entry matches (the first matching entry, in
file order, wins), unless that entry says ``fixed:X`` and the server's
version is X or later: then it is **known-fixed** (a regression).  With no
matching entry it is **new**.  A file that cannot be read, or an entry that
breaks these rules, is a :class:`KnownBugsError` naming the file and line.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Sequence

from .errors import KnownBugsError
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
    match: str                   # 'sig:ID' or 're:REGEX' as written
    note: str
    path: str
    line: int

    def matches(self, sig: Signature) -> bool:
        """True when this entry names sig."""
        kind, _, value = self.match.partition(":")
        if kind == "sig":
            return sig.id == value
        return re.search(value, sig.text) is not None

    def to_json(self) -> dict[str, Any]:
        """The entry as plain data (finding.json's ``bug``)."""
        return {"id": self.bug_id, "status": "open" if self.status == "open"
                else f"fixed:{self.fixed_in}", "match": self.match, "note": self.note,
                "file": self.path, "line": self.line}


@dataclass(frozen=True)
class Tagged:
    """A finding's tag and the entry behind it (None for new)."""

    tag: str
    bug: KnownBug | None = None


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
    elif kind == "re" and sep and value:
        try:
            re.compile(value)
        except re.error as exc:
            raise KnownBugsError(f"match {match!r} is not a regular expression: {exc}",
                                 path, line) from None
    else:
        raise KnownBugsError(f"match {match!r} is neither 'sig:ID' nor 're:REGEX'", path, line)
    return KnownBug(bug_id, status, fixed_in, match, note, path, line)


@dataclass(frozen=True)
class KnownBugs:
    """The entries of one or more known-bugs files, in order."""

    entries: tuple[KnownBug, ...] = ()
    files: tuple[str, ...] = ()

    @classmethod
    def load(cls, paths: Sequence[str]) -> "KnownBugs":
        """Read the files (KnownBugsError for an unreadable file or a malformed entry)."""
        entries: list[KnownBug] = []
        for path in paths:
            try:
                with open(path, encoding="utf-8") as fh:
                    lines = fh.read().splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise KnownBugsError(f"cannot read it: {reason}", path) from None
            for number, text in enumerate(lines, start=1):
                entry = parse_entry(text, path, number)
                if entry is not None:
                    entries.append(entry)
        return cls(tuple(entries), tuple(paths))

    def tag(self, sig: Signature, server_version: str) -> Tagged:
        """new, known or known-fixed for a signature seen on a server of that version."""
        for entry in self.entries:
            if entry.matches(sig):
                if entry.status == "fixed":
                    seen = version_tuple(server_version)
                    if seen and seen >= version_tuple(entry.fixed_in):
                        return Tagged(KNOWN_FIXED, entry)
                return Tagged(KNOWN, entry)
        return Tagged(NEW)
