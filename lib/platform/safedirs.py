"""Directories kewpie makes outside the workdir: made safely, checked on reuse, removed without following links.

kewpie runs as root, and the places it keeps things outside the workdir
(``/dev/shm/kewpie-<uid>/``, the lock directory ``/tmp/kewpie-locks-<uid>``
and what lives under them) have predictable names in world-writable
directories.  So:

- a directory is made with ``os.mkdir`` (never ``makedirs(exist_ok=True)``),
  owned by us, mode 0700, or 0711 where the server user must pass through;
- an existing one is reused only if ``lstat`` shows a real directory (not a
  symbolic link) owned by us (or by an owner the caller allows) that neither
  group nor others may write; otherwise :class:`UnsafeDirError` (exit status
  2) names the path, the owner and mode found, and what to do;
- removing or emptying never follows a symbolic link: a link is removed
  itself, its target never; directories are opened with ``O_NOFOLLOW`` and
  emptied through ``dir_fd``-relative calls (``shutil.rmtree`` with
  ``dir_fd``, which does not follow links inside).
"""
from __future__ import annotations

import errno
import os
import pwd
import shutil
import stat
from typing import Iterable

from ..errors import PortLeaseError, UsageError

PRIVATE = 0o700
TRAVERSE = 0o711  # others (the server user) may pass through, not list or write


class UnsafeDirError(UsageError):
    """A directory kewpie would reuse is a link, someone else's, or writable by others."""


class UnsafeFileError(UsageError):
    """A file kewpie would open in a directory it trusts is a link or not a regular file."""


class UnsafeLockDirError(UnsafeDirError, PortLeaseError):
    """The port lock directory is unsafe (also a PortLeaseError, as before)."""


def owner_name(uid: int) -> str:
    """``uid 0 (root)``, or the bare uid when no user has it."""
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def check_dir(path: str, owners: Iterable[int] = (), remedy: str = "",
              error: type[UnsafeDirError] = UnsafeDirError) -> os.stat_result:
    """lstat path: a real directory, owned by us (or one of owners), not group/other-writable.

    Returns the stat result; raises error (one line: path, what was found,
    remedy) otherwise.  FileNotFoundError passes through.
    """
    st = os.lstat(path)
    allowed = {os.geteuid(), *owners}
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        problem = f"is a symbolic link to {os.readlink(path)}"
    elif not stat.S_ISDIR(st.st_mode):
        problem = "is not a directory"
    elif st.st_uid not in allowed:
        problem = f"belongs to {owner_name(st.st_uid)}, not to {owner_name(os.geteuid())}"
    elif mode & 0o022:
        problem = "is writable by group or others"
    else:
        return st
    remedy = remedy or f"remove it (rm -rf {path}) and run again"
    raise error(f"refusing to use {path}: it {problem} (found owner {owner_name(st.st_uid)}, "
                f"mode {mode:04o}); {remedy}")


def make_dir(path: str, mode: int = PRIVATE, owners: Iterable[int] = (), remedy: str = "",
             error: type[UnsafeDirError] = UnsafeDirError) -> str:
    """Create path (its parent must exist) with mode, or check the existing one (check_dir).

    An existing directory of ours gets mode; one the caller allowed to
    belong to another owner (the server user) is left as it is.
    """
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        st = check_dir(path, owners, remedy, error)
        if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != mode:
            os.chmod(path, mode)
        return path
    os.chmod(path, mode)  # the umask may have taken bits away
    return path


def open_dir(path: str) -> int:
    """A descriptor on directory path, opened without following a link in its last part.

    The parent is resolved (the caller made or checked it); OSError
    (ELOOP, ENOTDIR, ENOENT) when path is a link, not a directory or missing.
    """
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return os.open(os.path.basename(path),
                       os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
    finally:
        os.close(parent_fd)


def _remove_entry(name: str, dir_fd: int, ignore_errors: bool) -> None:
    """Remove name in dir_fd: a directory with its contents, anything else (links too) itself."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, ignore_errors=ignore_errors, dir_fd=dir_fd)
        else:
            os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except OSError:
        if not ignore_errors:
            raise


def empty_dir(path: str, ignore_errors: bool = False) -> bool:
    """Remove everything directory path holds (it stays); never follows a link.

    False (and nothing touched) when path is missing, a symbolic link or
    not a directory.
    """
    try:
        fd = open_dir(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            return False
        raise
    try:
        for name in os.listdir(fd):
            _remove_entry(name, fd, ignore_errors)
    finally:
        os.close(fd)
    return True


def remove_tree(path: str, ignore_errors: bool = False) -> None:
    """Remove path: a directory with everything in it, a link or file itself (never a target)."""
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        _remove_entry(os.path.basename(path), parent_fd, ignore_errors)
    finally:
        os.close(parent_fd)


def read_small_file(path: str, limit: int = 4096) -> str | None:
    """The text of a small regular file, read without following a link; None if unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode(errors="replace")
    finally:
        os.close(fd)


def open_regular(path: str, flags: int, mode: int = 0o600) -> int:
    """A descriptor on the regular file path, never opened through a link.

    A new file is created exclusively (``O_EXCL``) with mode; an existing one
    is opened with ``O_NOFOLLOW`` and must be a regular file.  flags are the
    access flags (``os.O_RDWR``, ``os.O_WRONLY | os.O_APPEND``...; ``O_CREAT``
    and ``O_EXCL`` are added here).  A link or anything else raises
    :class:`UnsafeFileError` (one line: path, what it is, what to do).
    """
    base = flags | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, base | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        pass
    try:
        fd = os.open(path, base | os.O_NONBLOCK)  # a FIFO must not block us
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise
        fd = -1
    st = os.fstat(fd) if fd >= 0 else os.lstat(path)
    if fd >= 0 and stat.S_ISREG(st.st_mode):
        return fd
    if fd >= 0:
        os.close(fd)
    what = (f"a symbolic link to {os.readlink(path)}" if stat.S_ISLNK(st.st_mode)
            else "not a regular file")
    raise UnsafeFileError(f"refusing to open {path}: it is {what} (owner {owner_name(st.st_uid)}, "
                          f"mode {stat.S_IMODE(st.st_mode):04o}); remove it (rm {path}) if "
                          f"you made it, and run again")


def write_private_file(path: str, text: str) -> None:
    """Write text to path (mode 0600, replaced), never through a link."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def make_temp_file(directory: str, prefix: str) -> tuple[int, str]:
    """A new file of ours in directory (mode 0600, created exclusively, never through a
    link), open for writing: (fd, path), as ``tempfile.mkstemp`` gives it, without the
    imports of tempfile and random (~3 ms of every run's start)."""
    for _ in range(100):
        path = os.path.join(directory, prefix + os.urandom(6).hex())
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temporary name in {directory}", prefix)
