"""Whether a path may be trusted: nobody but us and root can change what it leads to.

kewpie runs as root on shared machines.  Every path it reads code or
configuration from, runs, or writes into (the workdir, ``--suitepath``,
``--config``, ``--basedir``, ``--randgen-path``... the tables of
lib/platform/pathoptions.py) goes through this one rule.  A path is trusted
when, resolved component by component as the kernel does:

- every directory on the way is owned by a trusted owner (:func:`trusted_uids`:
  us, root, and under sudo the user who called it) and is not writable by group
  or others, unless it is sticky (``/tmp``): there only an entry's owner can
  rename or remove it, and the next entry is checked in turn;
- every symbolic link on the way is owned by a trusted owner (the directory
  holding it passed the rule above, so nobody else can swap it);
- the path itself is owned by a trusted owner and writable by nobody else
  (sticky or not): a directory (the workdir) or, for an input, a directory or
  a file;
- for a tree (a suite folder, a randgen checkout, a mysql-test directory, a
  finding folder): so is everything under it, every directory, file and link,
  and what each link leads to.

:func:`entry_problem` is the pure decision for one entry; :func:`find_untrusted`
walks a path with it, :func:`find_untrusted_tree` a tree.  A path whose end does
not exist yet is fine when what exists of it is: kewpie makes the rest and
checks again.  :func:`check_input` is the rule as the inputs meet it: a path the
user trusts on purpose (:class:`Trust`: ``--trust``, ``safe-directories`` in
their own config, lib/platform/usertrust.py) is accepted as it is; any other
is walked, and refused with one line naming the entry, its owner and mode, and
how to trust it.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Collection, Iterable

from ..errors import UsageError

MAX_LINKS = 40  # as the kernel's ELOOP limit
SUDO_UID = "SUDO_UID"
USER_CONFIG_HINT = "~/.config/kewpie/config.toml"


class UntrustedPathError(UsageError):
    """An input (or the way to an output) is owned by another user or writable by others."""


@dataclass(frozen=True)
class Finding:
    """The first entry of a path that cannot be trusted, and why."""

    path: str      # the entry (resolved: links on the way already followed)
    problem: str   # e.g. "is owned by neither you nor root"
    uid: int
    mode: int      # permission bits (with the sticky bit)
    last: bool     # the path itself (True), or a directory or link on the way to it
    within: bool = False  # an entry inside the tree the path is (or where a link there leads)


def trusted_uids() -> frozenset[int]:
    """The owners a trusted entry may have: us (effective uid) and root; when root runs
    kewpie through sudo, also the user who called sudo (``SUDO_UID``), as git does: that
    user can already run anything as root, so their own files give them nothing new."""
    uids = {os.geteuid(), 0}
    sudo = os.environ.get(SUDO_UID, "")
    if os.geteuid() == 0 and sudo.isdigit():
        uids.add(int(sudo))
    return frozenset(uids)


def entry_problem(st: os.stat_result, owners: Collection[int], last: bool,
                  want: str = "dir") -> str:
    """'' when an entry with this lstat result may be trusted, else what is wrong.

    last: the entry is the path itself (nobody else may write it), not a
    directory or link on the way (where a sticky directory may be writable by
    others).  want: what the path itself must be: ``dir`` (a directory, the
    workdir), ``any`` (whatever it is: an input the caller reads, which says
    what it wanted) or ``parent`` (a directory an output is made in: sticky
    ``/tmp`` will do, as on the way).
    """
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return "" if st.st_uid in owners else "is a symbolic link owned by neither you nor root"
    if not stat.S_ISDIR(st.st_mode) and (not last or want != "any"):
        return "is not a directory"
    if st.st_uid not in owners:
        return "is owned by neither you nor root"
    sticky_ok = not last or want == "parent"
    if mode & 0o022 and not (sticky_ok and stat.S_ISDIR(st.st_mode) and mode & stat.S_ISVTX):
        return "is writable by group or others"
    return ""


def _finding(path: str, st: os.stat_result, owners: Collection[int], last: bool,
             want: str = "dir", within: bool = False) -> Finding | None:
    problem = entry_problem(st, owners, last, want)
    if not problem:
        return None
    return Finding(path, problem, st.st_uid, stat.S_IMODE(st.st_mode), last, within)


def find_untrusted(path: str, owners: Collection[int] | None = None,
                   want: str = "dir") -> tuple[Finding | None, bool]:
    """Walk path from ``/``, following links as the kernel would, checking each entry.

    Returns (the first entry that cannot be trusted, or None; whether the
    whole path exists, meaningful only without a finding, where the walk stops).  A missing part ends the walk: what exists of the
    path was checked, and the caller makes the rest and checks again.  want:
    what the path itself must be (:func:`entry_problem`).
    """
    allowed = trusted_uids() if owners is None else frozenset(owners)
    pending = [part for part in reversed(os.path.abspath(path).split("/")) if part]
    current = "/"
    found = _finding(current, os.lstat(current), allowed, last=not pending, want=want)
    if found is not None or not pending:
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
        except NotADirectoryError:  # current is a file given as a directory on the way
            return _finding(current, os.lstat(current), allowed, last=False), True
        last = not pending and not stat.S_ISLNK(st.st_mode)
        found = _finding(entry, st, allowed, last, want)
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
    return _finding(current, os.lstat(current), allowed, last=True, want=want), True


def find_untrusted_tree(path: str, owners: Collection[int] | None = None,
                        files_only: bool = False) -> tuple[Finding | None, bool]:
    """:func:`find_untrusted` for path (a directory or a file), then every entry under it,
    never following a link but checking where each leads (a directory there is walked
    too, once).  files_only: only the entries directly in path that are not folders (a
    plugin folder's libraries).  Returns as :func:`find_untrusted` does."""
    allowed = trusted_uids() if owners is None else frozenset(owners)
    found, exists = find_untrusted(path, allowed, want="any")
    if found is not None or not exists:
        return found, exists
    pending = [os.path.realpath(path)]  # its way was just checked: nobody else can move it
    seen: set[tuple[int, int]] = set()
    while pending:
        folder = pending.pop()
        st = os.stat(folder)
        if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        with os.scandir(folder) as entries:
            for entry in entries:
                found = _entry_finding(folder, entry, allowed, files_only, pending)
                if found is not None:
                    return found, True
    return None, True


def _entry_finding(folder: str, entry: os.DirEntry[str], allowed: frozenset[int],
                   files_only: bool, pending: list[str]) -> Finding | None:
    """One entry of a tree (a folder to walk next goes on pending)."""
    st = entry.stat(follow_symlinks=False)
    if files_only and stat.S_ISDIR(st.st_mode):
        return None
    found = _finding(entry.path, st, allowed, last=True, want="any", within=True)
    if found is None and stat.S_ISLNK(st.st_mode):
        target = os.path.join(folder, os.readlink(entry.path))
        found, there = find_untrusted(target, allowed, want="any")
        if found is not None:
            return Finding(found.path, found.problem, found.uid, found.mode, found.last,
                           within=True)
        if there and not (files_only and os.path.isdir(target)):
            pending.append(os.path.realpath(target))
    elif found is None and stat.S_ISDIR(st.st_mode):
        pending.append(entry.path)
    return found


@dataclass(frozen=True)
class Trust:
    """The paths a user trusts on purpose (``--trust``, ``safe-directories`` in their own
    config): each is accepted as it is, with everything under it, as git's
    ``safe.directory`` accepts a repository."""

    paths: tuple[str, ...] = ()

    @classmethod
    def of(cls, paths: Iterable[str]) -> Trust:
        """The trust of these paths (absolute, normalised, ``~`` expanded)."""
        return cls(tuple(dict.fromkeys(
            os.path.normpath(os.path.abspath(os.path.expanduser(p))) for p in paths if p)))

    def covers(self, path: str) -> bool:
        """Whether path, as given (not resolved: a link there is the user's choice), is one
        of the trusted paths or under one."""
        given = os.path.normpath(os.path.abspath(path))
        return any(given == t or given.startswith(t.rstrip("/") + "/") for t in self.paths)


def check_input(path: str, what: str, trust: Trust | None = None, tree: bool = False,
                files: bool = False) -> None:
    """The trust rule for an input kewpie reads as code or configuration, or runs: raise
    UntrustedPathError (one line: the entry, its owner and mode, how to trust it) unless
    path, the way to it (with tree, everything under it; with files, the files directly
    in it) may be trusted, or the user trusts it on purpose.  A path that does not exist
    passes (its user says so)."""
    if trust is not None and trust.covers(path):
        return
    if tree or files:
        found, _ = find_untrusted_tree(path, files_only=not tree)
    else:
        found, _ = find_untrusted(path, want="any")
    if found is not None:
        raise UntrustedPathError(input_refusal(what, path, found))


def where(path: str, finding: Finding) -> str:
    """Where the finding is, seen from path: 'it', 'X (in it)', 'X (on its way)'..."""
    if finding.path == os.path.abspath(path) and not finding.within:
        return "it"
    if finding.within:
        return f"{finding.path} (in it)"
    return f"{finding.path} ({'where it leads' if finding.last else 'on its way'})"


def input_refusal(what: str, path: str, finding: Finding) -> str:
    """The one line refusing input path (``what``: the option or file that named it)."""
    from .safedirs import owner_name
    if "writable" in finding.problem and (finding.last or finding.within):
        fix = f"make it private (chmod go-w {finding.path})"
    elif finding.last or finding.within:
        fix = "make it yours (chown), or copy it to a folder of yours"
    else:
        fix = "use a copy reached only through folders and links that you or root own"
    return (f"refusing {what} {path}: {where(path, finding)} {finding.problem} (owner "
            f"{owner_name(finding.uid)}, mode {finding.mode:04o}); kewpie reads code and "
            f"configuration only from what you or root own and nobody else can write: "
            f"{fix}, or trust it on purpose with --trust {path} (or safe-directories in "
            f"{USER_CONFIG_HINT})")
