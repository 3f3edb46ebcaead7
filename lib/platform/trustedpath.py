"""Whether a path may be trusted: nobody but us and root can change what it leads to.

kewpie runs as root in directories a user names (``--workdir``).  A path is
trusted when, resolved component by component as the kernel does:

- every directory on the way is owned by us (the effective uid) or root and
  is not writable by group or others, unless it is sticky (``/tmp``): there
  only an entry's owner can rename or remove it, and the next entry is
  checked in turn;
- every symbolic link on the way is owned by us or root (the directory
  holding it passed the rule above, so nobody else can swap it);
- the path itself is a directory owned by us or root, writable by nobody
  else (sticky or not).

:func:`entry_problem` is the pure decision for one entry; :func:`find_untrusted`
walks a path with it.  A path whose end does not exist yet is fine when what
exists of it is: kewpie makes the rest and checks again.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Collection

MAX_LINKS = 40  # as the kernel's ELOOP limit


@dataclass(frozen=True)
class Finding:
    """The first entry of a path that cannot be trusted, and why."""

    path: str      # the entry (resolved: links on the way already followed)
    problem: str   # e.g. "is owned by neither you nor root"
    uid: int
    mode: int      # permission bits (with the sticky bit)
    last: bool     # the path itself (True), or a directory or link on the way to it


def trusted_uids() -> frozenset[int]:
    """The owners a trusted entry may have: us (effective uid) and root."""
    return frozenset({os.geteuid(), 0})


def entry_problem(st: os.stat_result, owners: Collection[int], last: bool) -> str:
    """'' when an entry with this lstat result may be trusted, else what is wrong.

    last: the entry is the path itself (a directory nobody else may write),
    not a directory or link on the way (where a sticky directory may be
    writable by others).
    """
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return "" if st.st_uid in owners else "is a symbolic link owned by neither you nor root"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid not in owners:
        return "is owned by neither you nor root"
    if mode & 0o022 and (last or not mode & stat.S_ISVTX):
        return "is writable by group or others"
    return ""


def _finding(path: str, st: os.stat_result, owners: Collection[int], last: bool) -> Finding | None:
    problem = entry_problem(st, owners, last)
    if not problem:
        return None
    return Finding(path, problem, st.st_uid, stat.S_IMODE(st.st_mode), last)


def find_untrusted(path: str, owners: Collection[int] | None = None) -> tuple[Finding | None, bool]:
    """Walk path from ``/``, following links as the kernel would, checking each entry.

    Returns (the first entry that cannot be trusted, or None; whether the
    whole path exists, meaningful only without a finding, where the walk stops).  A missing part ends the walk: what exists of the
    path was checked, and the caller makes the rest and checks again.
    """
    allowed = trusted_uids() if owners is None else frozenset(owners)
    pending = [part for part in reversed(os.path.abspath(path).split("/")) if part]
    current = "/"
    found = _finding(current, os.lstat(current), allowed, last=False)
    if found is not None:
        return found, True
    links = 0
    while pending:
        name = pending.pop()
        if name == ".":
            continue
        if name == "..":
            current = os.path.dirname(current)  # checked on the way down
            continue
        entry = os.path.join(current, name)
        try:
            st = os.lstat(entry)
        except FileNotFoundError:
            return None, False
        last = not pending and not stat.S_ISLNK(st.st_mode)
        found = _finding(entry, st, allowed, last)
        if found is not None:
            return found, True
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if links > MAX_LINKS:
                return Finding(entry, "leads through too many symbolic links", st.st_uid,
                               stat.S_IMODE(st.st_mode), False), True
            target = os.readlink(entry)
            pending.extend(part for part in reversed(target.split("/")) if part)
            if target.startswith("/"):
                current = "/"
            continue
        current = entry  # a directory that passed the rule for directories on the way
    return _finding(current, os.lstat(current), allowed, last=True), True
