"""Outputs written without following links: the folders kewpie makes, the files it writes.

kewpie runs as root and writes where a user says (``--reduce-out``, a finding's
``reduce/``, ``--replay-out``, ``--sweep-out``, ``--junit-xml``, ``--xml-report``, ``kewpie history
html OUT``, hunt findings, evidence copies).  A symbolic link planted there,
before kewpie looks or between its look and its write, must not send the write
anywhere else.  So, for every output:

- the way to it is checked with the trust rule (lib/platform/trustedpath.py): every
  folder on the way is a trusted owner's and writable by nobody else, or sticky
  (``/tmp``); a folder the user trusts on purpose (``--trust``) will do too;
- the missing folders are made with ``mkdir`` relative to their parent's
  descriptor, and each folder is opened with ``O_NOFOLLOW | O_DIRECTORY`` relative
  to the one above: a link is refused, never followed;
- an output folder (:meth:`OutputDir.create`) is made fresh (``mkdir`` fails when
  it exists) or is one kewpie made before, holding its marker ``.kewpie-output``
  (a regular file of a trusted owner), or is an empty folder of ours that nobody
  else may write; anything else is refused with one line naming it;
- a file is written under a temporary name created with ``O_CREAT | O_EXCL |
  O_NOFOLLOW`` relative to its folder's descriptor, then renamed over the old
  one (a rename replaces a link, it never writes through it); a file streamed
  (:meth:`OutputDir.open_file`) replaces the old one the same way: unlinked, then
  created exclusively;
- a copy reads its source without following a link in its last part (a link is
  copied as a link), and a tree is copied by ``cp -a`` into
  ``/proc/<pid>/fd/<folder>/NAME``: the folder kewpie holds open, whatever its
  path now leads to.

:class:`OutputDir` holds a folder's descriptor; :func:`write_file` writes one
file (``--junit-xml``); :func:`check_output` is the check before anything
runs, of the way and of what is there already.
"""
from __future__ import annotations

import errno
import io
import os
import stat
from typing import IO, Any

from ..errors import UsageError
from .trustedpath import Finding, Trust, find_untrusted, trusted_uids, where

MARKER = ".kewpie-output"
MARKER_TEXT = "made by kewpie: it may write here again\n"
DIR_MODE = 0o755
FILE_MODE = 0o644
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeOutputError(UsageError):
    """An output's way is someone else's, or a link or a folder kewpie did not make is there."""


def output_refusal(what: str, path: str, finding: Finding) -> str:
    """The one line refusing to write output path because of finding on its way."""
    from .safedirs import owner_name
    place = (f"{finding.path} (its folder)" if finding.path == os.path.dirname(path)
             else where(path, finding))
    return (f"refusing to write {what} {path}: {place} {finding.problem} "
            f"(owner {owner_name(finding.uid)}, mode {finding.mode:04o}); kewpie writes only "
            f"through folders that you or root own and nobody else can write (or sticky ones "
            f"such as /tmp): choose another path, or trust the folder on purpose with "
            f"--trust {os.path.dirname(os.path.abspath(path))}")


def _describe(st: os.stat_result, target: str = "") -> str:
    from .safedirs import owner_name
    what = (f"a symbolic link to {target}" if stat.S_ISLNK(st.st_mode)
            else "not a directory" if not stat.S_ISDIR(st.st_mode) else "a folder")
    return f"{what} (owner {owner_name(st.st_uid)}, mode {stat.S_IMODE(st.st_mode):04o})"


def _private(st: os.stat_result) -> bool:
    """A trusted owner's, writable by nobody else."""
    return st.st_uid in trusted_uids() and not stat.S_IMODE(st.st_mode) & 0o022


def _open_sub(parent_fd: int, name: str, path: str, what: str) -> int:
    """A descriptor on folder name in parent_fd, never through a link."""
    try:
        return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
    st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    target = os.readlink(name, dir_fd=parent_fd) if stat.S_ISLNK(st.st_mode) else ""
    raise UnsafeOutputError(f"refusing to write {what} {path}: it is {_describe(st, target)}; "
                            f"kewpie never writes through a link: remove it (rm {path}) or "
                            f"choose another path")


def _sub_folder(parent_fd: int, name: str, path: str, what: str) -> tuple[int, bool]:
    """Folder name in parent_fd, made (DIR_MODE) or an existing one of ours that nobody
    else may write: (its descriptor, whether it was made now)."""
    try:
        os.mkdir(name, DIR_MODE, dir_fd=parent_fd)
        made = True
    except FileExistsError:
        made = False
    fd = _open_sub(parent_fd, name, path, what)
    st = os.fstat(fd)
    if made and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != DIR_MODE:
        os.fchmod(fd, DIR_MODE)  # the umask may have taken bits away
    elif not made and not _private(st):
        os.close(fd)
        raise UnsafeOutputError(f"refusing to write {what} {path}: it is {_describe(st)} that "
                                f"kewpie did not make, owned by someone else or writable by "
                                f"others; choose another path")
    return fd, made


def _check_way(existing: str, path: str, what: str, trust: Trust | None) -> None:
    """The existing folder an output is made under passes the trust rule (sticky allowed)."""
    if trust is not None and trust.covers(existing):
        return
    found, _ = find_untrusted(existing, want="parent")
    if found is not None:
        raise UnsafeOutputError(output_refusal(what, path, found))


def _open_way(folder: str, path: str, what: str, trust: Trust | None) -> int:
    """A descriptor on folder (where output path is made): the existing part checked,
    the rest made one folder at a time, each opened without following a link."""
    folder = os.path.abspath(folder)
    missing: list[str] = []
    existing = folder
    while not os.path.lexists(existing):
        missing.append(os.path.basename(existing))
        existing = os.path.dirname(existing)
    _check_way(existing, path, what, trust)
    fd = os.open(existing, _DIR_FLAGS)  # checked: nobody else can change where it leads
    try:
        for name in reversed(missing):
            sub, _ = _sub_folder(fd, name, os.path.join(existing, name), what)
            os.close(fd)
            fd = sub
            existing = os.path.join(existing, name)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _marked(fd: int) -> bool:
    """Whether folder fd holds kewpie's marker (a regular file of a trusted owner)."""
    try:
        st = os.stat(MARKER, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid in trusted_uids()


def _mark(fd: int) -> None:
    try:
        marker = os.open(MARKER, _NEW_FILE, FILE_MODE, dir_fd=fd)
    except FileExistsError:  # another process of the run marked it just now
        return
    try:
        os.write(marker, MARKER_TEXT.encode())
    finally:
        os.close(marker)


class OutputDir:
    """A folder kewpie writes into, held by its descriptor: everything under it is reached
    relative to that descriptor, one part at a time, never through a link."""

    def __init__(self, path: str, fd: int, what: str = "output") -> None:
        """path: the folder's path (for messages and callers); fd: a descriptor on it."""
        self.path = path
        self.fd = fd
        self.what = what

    # ------------------------------------------------------------ opening
    @classmethod
    def create(cls, path: str, what: str, trust: Trust | None = None,
               reuse: bool = False) -> OutputDir:
        """The output folder path: made fresh, or an empty folder of ours, or (reuse) one
        kewpie made before (its marker); UnsafeOutputError otherwise.  The folder gets the
        marker, so a later run with reuse may write there again."""
        path = os.path.abspath(path)
        parent = _open_way(os.path.dirname(path), path, what, trust)
        try:
            fd, made = _sub_folder(parent, os.path.basename(path), path, what)
        finally:
            os.close(parent)
        try:
            if not made and [n for n in os.listdir(fd) if n != MARKER]:
                if not _marked(fd):
                    raise UnsafeOutputError(
                        f"refusing to write {what} {path}: a folder kewpie did not make (no "
                        f"{MARKER}) that is not empty; choose a new or empty directory")
                if not reuse:
                    raise UnsafeOutputError(f"refusing to write {what} {path}: it holds an "
                                            f"earlier output; choose a new or empty directory")
            _mark(fd)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, what)

    @classmethod
    def open_trusted(cls, path: str, what: str) -> OutputDir:
        """An existing folder of ours that the trust rule accepts as the workdir (ours or
        root's, writable by nobody else, reached through nothing others control)."""
        path = os.path.abspath(path)
        found, exists = find_untrusted(path)
        if found is not None:
            raise UnsafeOutputError(output_refusal(what, path, found))
        if not exists:
            raise FileNotFoundError(errno.ENOENT, "no such folder", path)
        return cls(path, os.open(path, _DIR_FLAGS), what)

    @classmethod
    def in_trusted(cls, path: str, what: str) -> OutputDir:
        """Folder path made (or an existing one of ours, writable by nobody else) in an
        existing folder the trust rule accepts as the workdir (a folder of the workdir:
        hunt findings, evidence): no marker, kewpie owns what holds it."""
        path = os.path.abspath(path)
        with cls.open_trusted(os.path.dirname(path), what) as parent:
            return parent.folder(os.path.basename(path))

    @classmethod
    def at(cls, path: str, what: str) -> OutputDir:
        """Folder path as a caller that chose it names it (a suite's folder for a report:
        trusted code's choice of where): its parents made when missing and taken as they
        are, the folder made or an existing one of ours that nobody else may write,
        opened without following a link; everything under it as for any OutputDir."""
        path = os.path.abspath(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        parent = os.open(os.path.dirname(path), _DIR_FLAGS)
        try:
            fd, _ = _sub_folder(parent, os.path.basename(path), path, what)
        finally:
            os.close(parent)
        return cls(path, fd, what)

    def close(self) -> None:
        """Close the folder's descriptor (idempotent)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> OutputDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass

    # ------------------------------------------------------------ folders
    def path_of(self, rel: str) -> str:
        """The path of rel in this folder (for messages and for tools reading it)."""
        return os.path.join(self.path, rel) if rel else self.path

    def held(self, rel: str = "") -> str:
        """A path to rel through this folder's descriptor (``/proc/self/fd/N/rel``), for a
        library that writes to a path (matplotlib, csv): it reaches the folder kewpie
        holds, whatever its path leads to now; inside it, only kewpie writes.  Valid in
        this process only."""
        self._parts(rel)
        return f"/proc/self/fd/{self.fd}/{rel}" if rel else f"/proc/self/fd/{self.fd}"

    def _parts(self, rel: str) -> list[str]:
        parts = [p for p in rel.split("/") if p and p != "."]
        if ".." in parts or rel.startswith("/"):
            raise ValueError(f"{rel!r}: not a path inside the output folder")
        return parts

    def _dir_fd(self, parts: list[str]) -> int:
        """A new descriptor on the folder parts (made when missing), never through a link."""
        fd = os.dup(self.fd)
        path = self.path
        try:
            for name in parts:
                path = os.path.join(path, name)
                sub, _ = _sub_folder(fd, name, path, self.what)
                os.close(fd)
                fd = sub
        except BaseException:
            os.close(fd)
            raise
        return fd

    def folder(self, rel: str) -> OutputDir:
        """The folder rel in this one (each part made or an existing one of ours)."""
        parts = self._parts(rel)
        return OutputDir(os.path.join(self.path, *parts), self._dir_fd(parts), self.what)

    def fresh(self, name: str) -> OutputDir | None:
        """A folder name made now in this one (exclusively); None when name exists."""
        self._parts(name)
        try:
            os.mkdir(name, DIR_MODE, dir_fd=self.fd)
        except FileExistsError:
            return None
        fd = _open_sub(self.fd, name, self.path_of(name), self.what)
        os.fchmod(fd, DIR_MODE)
        return OutputDir(self.path_of(name), fd, self.what)

    def _split(self, rel: str) -> tuple[int, str]:
        """(a new descriptor on rel's folder, rel's last part)."""
        parts = self._parts(rel)
        if not parts:
            raise ValueError("an empty file name")
        return self._dir_fd(parts[:-1]), parts[-1]

    # ------------------------------------------------------------ files
    def write_bytes(self, rel: str, data: bytes, mode: int = FILE_MODE) -> str:
        """Write rel whole (a temporary file renamed over any old one); its path."""
        fd, name = self._split(rel)
        try:
            _replace(fd, name, data, mode)
        finally:
            os.close(fd)
        return self.path_of(rel)

    def write_text(self, rel: str, text: str, mode: int = FILE_MODE) -> str:
        """Write rel whole as UTF-8 text (undecodable characters escaped); its path."""
        return self.write_bytes(rel, text.encode("utf-8", errors="surrogateescape"), mode)

    def open_file(self, rel: str, mode: str = "w", encoding: str | None = "utf-8",
                  errors: str | None = None) -> IO[Any]:
        """rel opened for writing ("w" or "wb"), a new file replacing any old one (whatever
        it was: a link is removed, never followed)."""
        fd, name = self._split(rel)
        try:
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                raise UnsafeOutputError(f"refusing to write {self.path_of(rel)}: it is a "
                                        f"folder") from None
            handle = os.open(name, _NEW_FILE, FILE_MODE, dir_fd=fd)
        finally:
            os.close(fd)
        if "b" in mode:
            return os.fdopen(handle, "wb")
        return os.fdopen(handle, "w", encoding=encoding, errors=errors)

    def read_text(self, rel: str, limit: int = 256 << 20) -> str | None:
        """The text of regular file rel (never through a link); None when it is missing,
        a link or not a regular file."""
        try:
            fd, name = self._split(rel)
        except (OSError, UsageError):
            return None
        try:
            handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                             dir_fd=fd)
        except OSError:
            return None
        finally:
            os.close(fd)
        with os.fdopen(handle, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            return fh.read(limit).decode("utf-8", errors="replace")

    def exists(self, rel: str) -> bool:
        """Whether rel is there (a link counts, itself)."""
        try:
            fd, name = self._split(rel)
        except (OSError, UsageError):
            return False
        try:
            os.stat(name, dir_fd=fd, follow_symlinks=False)
            return True
        except FileNotFoundError:
            return False
        finally:
            os.close(fd)

    def remove(self, rel: str) -> None:
        """Remove rel: a folder with everything in it, anything else itself (never a
        link's target); nothing when it is missing."""
        fd, name = self._split(rel)
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                import shutil
                shutil.rmtree(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            pass
        finally:
            os.close(fd)

    def symlink(self, target: str, rel: str) -> None:
        """Make rel a symbolic link to target (replacing any old rel that is not a folder)."""
        fd, name = self._split(rel)
        try:
            temporary = f".{name}.{os.getpid()}.{os.urandom(3).hex()}"
            os.symlink(target, temporary, dir_fd=fd)
            os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        finally:
            os.close(fd)

    def copy_file(self, source: str, rel: str) -> str:
        """Copy source to rel (mode and times kept); a link is copied as a link, never
        followed; OSError when source cannot be read."""
        st = os.lstat(source)
        if stat.S_ISLNK(st.st_mode):
            self.symlink(os.readlink(source), rel)
            return self.path_of(rel)
        src = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            st = os.fstat(src)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", source)
            with self.open_file(rel, "wb") as out:
                while os.sendfile(out.fileno(), src, None, 1 << 24):
                    pass
                os.fchmod(out.fileno(), stat.S_IMODE(st.st_mode) & ~0o022)
                os.utime(out.fileno(), ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(src)
        return self.path_of(rel)

    def copy_tree(self, source: str, rel: str) -> str:
        """Copy folder source to rel (which must not exist) with ``cp -a`` (links kept as
        links), into this folder's descriptor (``/proc/<pid>/fd/N``), not its path; ''
        when copied, else what cp said."""
        from .tools import run_tool
        fd, name = self._split(rel)
        try:
            if os.path.lexists(f"/proc/self/fd/{fd}/{name}"):
                raise UnsafeOutputError(f"refusing to copy {source} to {self.path_of(rel)}: "
                                        f"it exists")
            result = run_tool(["cp", "-a", "-T", "--", source, f"/proc/{os.getpid()}/fd/{fd}/{name}"])
        finally:
            os.close(fd)
        return "" if result.returncode == 0 else (result.stderr.strip() or
                                                    f"cp exited {result.returncode}")


def _replace(fd: int, name: str, data: bytes, mode: int) -> None:
    """Write name in folder fd whole: a temporary file made exclusively, then renamed."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            raise UnsafeOutputError(f"refusing to write {name}: it is a folder")
    except FileNotFoundError:
        pass
    for _ in range(100):
        temporary = f".{name}.{os.urandom(4).hex()}.tmp"
        try:
            handle = os.open(temporary, _NEW_FILE, mode, dir_fd=fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name", name)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view):]
        os.fchmod(handle, mode)
    except BaseException:
        os.close(handle)
        os.unlink(temporary, dir_fd=fd)
        raise
    os.close(handle)
    os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)


def write_file(path: str, data: bytes | str, what: str, trust: Trust | None = None) -> str:
    """Write output file path whole (``--junit-xml``, ``--xml-report``): its way checked
    and made as for a folder, an existing file there must be a regular file of a trusted
    owner (a link or someone else's file is refused), the data renamed into place; its path."""
    path = os.path.abspath(path)
    folder = _open_way(os.path.dirname(path), path, what, trust)
    name = os.path.basename(path)
    try:
        _check_existing_file(folder, name, path, what)
        _replace(folder, name, data.encode() if isinstance(data, str) else data, FILE_MODE)
    finally:
        os.close(folder)
    return path


def _check_existing_file(fd: int, name: str, path: str, what: str) -> None:
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISREG(st.st_mode) and st.st_uid in trusted_uids():
        return
    target = os.readlink(name, dir_fd=fd) if stat.S_ISLNK(st.st_mode) else ""
    what_it_is = ("someone else's file" if stat.S_ISREG(st.st_mode)
                  else _describe(st, target))
    from .safedirs import owner_name
    raise UnsafeOutputError(f"refusing to write {what} {path}: it is {what_it_is} (owner "
                            f"{owner_name(st.st_uid)}, mode {stat.S_IMODE(st.st_mode):04o}); "
                            f"kewpie replaces only its own files: remove it or choose another "
                            f"path")


def check_output(path: str, what: str, trust: Trust | None = None, folder: bool = True) -> None:
    """Before anything runs: UnsafeOutputError (one line) when output path could not be
    written safely: its way fails the trust rule (a sticky folder such as /tmp will do),
    or what is there is a link, someone else's, or (a folder) not one kewpie may use."""
    path = os.path.abspath(path)
    existing = os.path.dirname(path)
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    _check_way(existing, path, what, trust)
    if existing != os.path.dirname(path) or not os.path.lexists(path):
        return
    parent = os.open(existing, _DIR_FLAGS)
    try:
        name = os.path.basename(path)
        if not folder:
            _check_existing_file(parent, name, path, what)
            return
        fd, _ = _sub_folder(parent, name, path, what)  # exists: opened and checked, not made
        try:
            if not _marked(fd) and os.listdir(fd):
                raise UnsafeOutputError(
                    f"refusing to write {what} {path}: a folder kewpie did not make (no "
                    f"{MARKER}) that is not empty; choose a new or empty directory")
        finally:
            os.close(fd)
    finally:
        os.close(parent)


def text_bytes(write: Any) -> bytes:
    """What write(stream) writes to a binary stream (for libraries that write to a file)."""
    buffer = io.BytesIO()
    write(buffer)
    return buffer.getvalue()


class HeldOutput:
    """``with HeldOutput(folder) as out``: an OutputDir as given, or the path of a folder
    that kewpie's own code or a suite chose (:meth:`OutputDir.at`: made when missing),
    opened and closed again at the end.  The outputs a user names on the command line
    are OutputDirs made by :meth:`OutputDir.create`."""

    def __init__(self, folder: OutputDir | str, what: str = "output") -> None:
        """folder: an open OutputDir (left open), or a folder's path."""
        self.given = folder
        self.what = what
        self.opened: OutputDir | None = None

    def __enter__(self) -> OutputDir:
        if isinstance(self.given, OutputDir):
            return self.given
        self.opened = OutputDir.at(self.given, self.what)
        return self.opened

    def __exit__(self, *exc: object) -> None:
        if self.opened is not None:
            self.opened.close()
