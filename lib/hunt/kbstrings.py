"""MariaDB QA's ``known_bugs.strings``, read as it is published.

One UniqueID a line (:mod:`lib.hunt.uniqueid`), then ``##`` and what the
line is about -- one or more bug ids and a note::

    SIGSEGV|Item_func::f|JOIN::optimize_inner|JOIN::optimize|mysql_select   ## MDEV-12345
    0|SIGABRT|Type_handler_row::g|cmp_row_types|...                         ## MDEV-1>MDEV-2
    #SIGSEGV|old_function|...                                               ## Fixed ## MDEV-3
    MARIADB_ERROR_CODE|MariaDB error code: 1017
    ##### a heading ####

- a line whose first non-blank character is ``#`` is disabled: a comment or
  heading, or a bug taken out of the list.  A disabled UniqueID line that
  says ``Fixed`` is kept as a **fixed** entry (the bug was fixed; the line
  does not say in which release); every other ``#`` line is a comment;
- the UniqueID is the text before the first ``##``, blanks stripped; the
  bug ids are every ``WORD-N`` after it (``MDEV-12345``, ``MENT-2102``,
  ``SPECIAL-35``), the note the whole text after it; a line may have no
  ``##`` (a filter of mariadb-qa's: a known non-issue, no bug id);
- malformed, as mariadb-qa's own tools refuse them or cannot use them: a
  merge-conflict marker (``<<<<<<<``, ``=======``, ``>>>>>>>``), ``##``
  with no UniqueID before it (only ``|``), or with nothing after it, and a
  line that is not text (a NUL byte).  :func:`load_strings` raises
  :class:`lib.hunt.errors.KnownBugsError` naming the file and line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from .errors import KnownBugsError
from .uniqueid import split_unique_id

OPEN, FIXED = "open", "fixed"
ANNOTATION = "##"
_BUG_ID_RE = re.compile(r"\b([A-Z][A-Z0-9]*-\d+)\b")
_CONFLICT_RE = re.compile(r"^(<{7}|={7}|>{7})(\s|$)")
_FIXED_RE = re.compile(r"\bfixed\b", re.I)


@dataclass(frozen=True)
class StringsEntry:
    """One UniqueID line of a ``known_bugs.strings`` file."""

    text: str                     # the UniqueID as listed (before '##'), blanks stripped
    bug_ids: tuple[str, ...]      # MDEV-1, MENT-2, SPECIAL-3, in the order written
    note: str                     # the text after the first '##'
    status: str                   # 'open' (an active line) or 'fixed' ('#...' saying Fixed)
    path: str
    line: int
    assertion: str = ""           # a crash's parts (signal '' for a typed UniqueID)
    signal: str = ""
    frames: tuple[str, ...] = ()

    @property
    def bug_id(self) -> str:
        """The first bug id ('' when the line names none)."""
        return self.bug_ids[0] if self.bug_ids else ""

    @property
    def crash(self) -> bool:
        """Is this a crash's UniqueID (a signal and frames)?"""
        return bool(self.signal)

    def to_json(self) -> dict[str, Any]:
        """The line as plain data."""
        return {"unique_id": self.text, "bug_ids": list(self.bug_ids), "note": self.note,
                "status": self.status, "file": self.path, "line": self.line}


def is_strings_file(path: str, lines: Sequence[str]) -> bool:
    """Is this a ``known_bugs.strings`` file rather than kewpie's own format?  Its name
    ends in ``.strings``, or its first entry line holds a ``|`` (a UniqueID) where
    kewpie's format has ``BUG-ID STATUS MATCH``."""
    if path.endswith(".strings"):
        return True
    for text in lines:
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = stripped.split()
        kewpie = len(fields) >= 3 and (fields[1] == "open" or fields[1].startswith("fixed:"))
        return not kewpie and "|" in stripped
    return False


def parse_line(text: str, path: str, line: int) -> StringsEntry | None:
    """One line (None for a blank line or a comment); KnownBugsError when malformed."""
    if "\x00" in text:
        raise KnownBugsError("a NUL byte: not a text line", path, line)
    stripped = text.strip()
    if not stripped:
        return None
    if _CONFLICT_RE.match(stripped):
        raise KnownBugsError(f"a merge-conflict marker ({stripped[:7]}): resolve the conflict "
                             f"first (mariadb-qa's tools refuse such a file too)", path, line)
    status = OPEN
    if stripped.startswith("#"):
        body = stripped.lstrip("#").strip()
        uid, sep, _ = body.partition(ANNOTATION)
        if not sep or not uid.strip() or "|" not in uid or not _FIXED_RE.search(body):
            return None                      # a comment, a heading, a line taken out
        stripped, status = body, FIXED
    uid, sep, note = stripped.partition(ANNOTATION)
    uid, note = uid.strip(), note.strip()
    if sep and not uid.strip("| "):
        raise KnownBugsError(f"'##' with no UniqueID before it: {stripped[:120]}", path, line)
    if sep and not note.strip("# "):
        raise KnownBugsError(f"'##' with nothing after it (a bug id, e.g. '## MDEV-12345'): "
                             f"{stripped[:120]}", path, line)
    assertion, signal, frames = split_unique_id(uid)
    return StringsEntry(uid, tuple(dict.fromkeys(_BUG_ID_RE.findall(note))), note, status,
                        path, line, assertion, signal, frames)


def load_strings(path: str, lines: Sequence[str]) -> tuple[StringsEntry, ...]:
    """The entries of a file's lines, in file order (KnownBugsError for a malformed one)."""
    entries = []
    for number, text in enumerate(lines, start=1):
        entry = parse_line(text, path, number)
        if entry is not None:
            entries.append(entry)
    return tuple(entries)
