"""The workdir: bot directories (on /dev/shm by default), cache, state, lock.

Layout::

    workdir/                  a directory only we (or root) can write: check_trusted()
      .kewpie-workdir         marker (a regular file of ours): kewpie made this folder;
                              it lists what cleanup may remove (JSON, "made")
      kewpie.lock             held (flock) by the run using this workdir
      servers.json            servers running now (for --mode=cleanup)
      kewpie.log              the last run's full log
      bot0 -> /dev/shm/kewpie-<uid>/wd-<hash>/bot0   (a real dir with --no-shm)
      cache -> /dev/shm/kewpie-<uid>/cache           (pristine datadirs, shared)

    /dev/shm/kewpie-<uid>/    0711, ours: the server user passes through
      cache/                  0711, shared by every workdir of this user:
        bootstrap/              pristine datadirs (lib/servers/bootstrap.py)
        galera/                 cluster snapshots (lib/servers/galera_cluster.py)
      wd-<hash>/              0711, one per workdir (hash of its path)
        lock                    flock held while a run uses the tree
        workdir                 the workdir's path: is the tree still wanted?
        bot0/ bot1/ ...         vardirs (owned by the server user)

The workdir itself is used only when lib/platform/trustedpath.py trusts it
(owned by us or root, writable by nobody else, reached through nothing others
control), before anything is written there; files in it are opened without
following links and created exclusively when new (safedirs.open_regular).
Every directory under /dev/shm is made and checked with lib/platform/safedirs.py,
and the workdir's links are followed only when they point where kewpie expects.  At
the start of each run, trees whose workdir is gone (and that no run or
server uses) are removed, so RAM used by throwaway workdirs comes back.
``KEWPIE_SHM_ROOT`` in the environment moves the whole tree off /dev/shm
(kewpie's own tests use a private one).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import time

from . import safedirs
from ..errors import UsageError
from .logsetup import get_logger
from .process import TAG_WORKDIR, tagged_processes
from .trustedpath import Finding, find_untrusted, trusted_uids

MARKER = ".kewpie-workdir"
MARKER_KIND = "kewpie workdir"
DESCRIPTION = "cluster.json"
SHM_ROOT = "/dev/shm"
SHM_ROOT_ENV = "KEWPIE_SHM_ROOT"
MIN_SHM_FREE = 2 << 30  # below this, vardirs go to disk: a full tmpfs stalls the machine
TREE_LOCK = "lock"
TREE_WORKDIR = "workdir"
TREE_NAME = re.compile(r"wd-[0-9a-f]{10}")
BOT_NAME = re.compile(r"bot\d+b?")  # a bot, or its second (mtr) lane
SPARES = "spares"   # in the tree: pristine datadirs kept for the next run (per bot)
RECLAIM_GRACE = 60.0  # a tree younger than this without a recorded workdir is being made
LOCK_WAIT = 10.0


def shm_base() -> str:
    """Where kewpie's RAM tree lives: $KEWPIE_SHM_ROOT, else /dev/shm."""
    return os.environ.get(SHM_ROOT_ENV) or SHM_ROOT


def user_shm_root() -> str:
    """This user's RAM tree: ``<shm_base()>/kewpie-<uid>`` (workdir trees, the shared cache)."""
    return os.path.join(shm_base(), f"kewpie-{os.getuid()}")


def _digest(path: str) -> str:
    return hashlib.sha1(path.encode()).hexdigest()[:10]


class Workdir:
    """Paths and exclusive use of one workdir."""

    def __init__(self, path: str, use_shm: bool = True, server_user: str | None = None) -> None:
        self.path = os.path.abspath(path)
        base = shm_base()
        self.use_shm = use_shm and os.path.isdir(base) and os.access(base, os.W_OK)
        self.server_user = server_user
        self.tree_name = f"wd-{_digest(self.path)}"
        self.shm_root = user_shm_root()
        self.shm_cache = os.path.join(self.shm_root, "cache")
        self.shm_path = os.path.join(self.shm_root, self.tree_name)
        self._legacy_shm = os.path.join(base, f"kewpie-{os.getuid()}-{_digest(self.path)}")
        self._lock_fd = -1
        self._tree_fd = -1

    def state_file_for(self, bot: str) -> str:
        """A bot's record of running servers (servers.json for bot0)."""
        name = "servers.json" if bot == "bot0" else f"servers-{bot}.json"
        return os.path.join(self.path, name)

    def state_files(self) -> list[str]:
        """Every bot's state file present in the workdir."""
        try:
            names = os.listdir(self.path)
        except OSError:
            return []
        return sorted(os.path.join(self.path, n) for n in names
                      if n.startswith("servers") and n.endswith(".json"))

    def bot_log_file(self, bot: str) -> str:
        """A parallel bot's own log (the parent writes kewpie.log)."""
        return os.path.join(self.path, f"kewpie-{bot}.log")

    @property
    def failed_dir(self) -> str:
        """Evidence of failed tests (workdir/failed/<suite.test>/)."""
        return os.path.join(self.path, "failed")

    @property
    def timings_file(self) -> str:
        """Durations of tests in earlier runs."""
        return os.path.join(self.path, "timings.json")

    @property
    def description_file(self) -> str:
        """The JSON description of servers left by --start-and-exit."""
        return os.path.join(self.path, DESCRIPTION)

    @property
    def log_file(self) -> str:
        """The run's full log."""
        return os.path.join(self.path, "kewpie.log")

    @property
    def cache_root(self) -> str:
        """The cache's folder: the user's in /dev/shm (shared by workdirs), or
        ``workdir/cache`` with --no-shm."""
        return self.shm_cache if self.use_shm else os.path.join(self.path, "cache")

    @property
    def cache_dir(self) -> str:
        """The pristine datadir cache."""
        return os.path.join(self.path, "cache", "bootstrap")

    def bot_dir(self, bot: str) -> str:
        """A bot's directory (``workdir/bot0``)."""
        return os.path.join(self.path, bot)

    # ------------------------------------------------------------ trust
    def check_trusted(self) -> bool:
        """Raise UnsafeDirError (one line: owner, mode, what to do) unless the workdir may
        be trusted (lib/platform/trustedpath.py); False when it does not exist yet."""
        finding, exists = find_untrusted(self.path)
        if finding is not None:
            raise safedirs.UnsafeDirError(refusal(self.path, finding))
        return exists

    def has_marker(self) -> bool:
        """Whether kewpie made this (trusted) folder: its marker is a regular file of ours.

        A marker that is a link, not a regular file or someone else's raises
        UnsafeDirError: kewpie did not make the folder.
        """
        path = os.path.join(self.path, MARKER)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return False
        problem = marker_problem(st, trusted_uids())
        if problem:
            raise safedirs.UnsafeDirError(
                f"refusing to use workdir {self.path}: its {MARKER} {problem} (owner "
                f"{safedirs.owner_name(st.st_uid)}, mode {stat.S_IMODE(st.st_mode):04o}), so kewpie "
                f"did not make this folder; choose another --workdir")
        return True

    def create(self) -> None:
        """Create the workdir (0755) or check an existing one is ours, before writing to it.

        The path must be trusted (:meth:`check_trusted`), and an existing
        non-empty directory must hold kewpie's marker (:meth:`has_marker`).
        """
        if not self.check_trusted():
            _make_dirs(self.path)
            self.check_trusted()  # ours now (or someone else's, made meanwhile: refused)
        entries = os.listdir(self.path)
        if self.has_marker():
            return
        if entries:
            raise UsageError(f"--workdir {self.path} is a non-empty directory kewpie did not "
                             f"create; choose an empty or new directory")
        try:
            fd = os.open(os.path.join(self.path, MARKER),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except FileExistsError:  # another process of the session made it just now
            if not self.has_marker():
                raise
            return
        try:
            os.write(fd, marker_text([]).encode())
        finally:
            os.close(fd)

    # ------------------------------------------------------------ what kewpie made here
    def _open_marker(self) -> int:
        """The marker, opened read-write without following a link, locked (flock)."""
        fd = safedirs.open_regular(os.path.join(self.path, MARKER), os.O_RDWR, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def made(self) -> frozenset[str] | None:
        """The names the marker records kewpie making here (None: a marker of an older
        kewpie, which records nothing)."""
        text = safedirs.read_small_file(os.path.join(self.path, MARKER), limit=1 << 20)
        return parse_marker(text or "")

    def record_made(self, add: tuple[str, ...] = (), remove: tuple[str, ...] = ()) -> None:
        """Add names to (or remove them from) the marker's record of what kewpie made here."""
        fd = self._open_marker()
        try:
            text = os.pread(fd, 1 << 20, 0).decode(errors="replace")
            before = parse_marker(text) or frozenset()
            after = (before | set(add)) - set(remove)
            if after != before or parse_marker(text) is None:
                data = marker_text(sorted(after)).encode()
                os.ftruncate(fd, 0)
                os.pwrite(fd, data, 0)
        finally:
            os.close(fd)  # releases the flock

    # ------------------------------------------------------------ lock
    def _open_lock(self) -> int:
        self.check_trusted()
        return safedirs.open_regular(os.path.join(self.path, "kewpie.lock"), os.O_RDWR)

    def lock(self) -> None:
        """Take the workdir for this run; UsageError if another run has it.

        With /dev/shm, also take this workdir's tree there (checked), refuse
        links that point elsewhere, and reclaim trees of deleted workdirs.
        """
        fd = self._open_lock()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            other = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise UsageError(f"workdir {self.path} is in use by another kewpie run (pid {other}); "
                             f"use another --workdir") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        self._take_tree(shared=False)

    def _take_tree(self, shared: bool) -> None:
        """After the workdir lock: this workdir's /dev/shm tree (checked), its links, and
        the reclaim of trees of deleted workdirs; the lock is released on failure."""
        try:
            if self.use_shm:
                self.open_shm(shared)
                for name in sorted(os.listdir(self.path)):
                    if name == "cache" or BOT_NAME.fullmatch(name):
                        self._check_link(name)
                self._drop_legacy_tree()
                self.reclaim()
            else:
                self.reclaim(strict=False)  # RAM of deleted workdirs comes back with --no-shm too
        except BaseException:
            self.unlock()
            raise

    def join(self, session: str, wait: float = LOCK_WAIT) -> bool:
        """Take the workdir together with the other processes of one session (the
        workers of a pytest-xdist run, one bot each); UsageError if another run has it.

        The first process of the session takes the lock exclusively, records the
        session in it and returns True: it must do the run's fresh start, then call
        :meth:`share`.  The others wait for that, share the lock and return False.
        A kewpie run (:meth:`lock`) and another session are kept out, as they keep
        this session out.
        """
        fd = self._open_lock()
        tag = f"{os.getpid()} session {session}\n"
        deadline = time.monotonic() + wait
        first = False
        try:
            while True:
                mode = _try_flock(fd, fcntl.LOCK_EX) or _try_flock(fd, fcntl.LOCK_SH)
                held_by = os.pread(fd, 200, 0).decode(errors="replace").split()
                ours = held_by[1:] == ["session", session]
                if mode == fcntl.LOCK_EX and not ours:  # free: the session's first process
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, tag.encode(), 0)
                    first = True
                    break
                if mode and ours:
                    if mode == fcntl.LOCK_EX:  # the siblings that had it have ended
                        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                if mode:  # shared with the processes of another session
                    fcntl.flock(fd, fcntl.LOCK_UN)
                if time.monotonic() >= deadline:
                    other = " ".join(held_by) or "?"
                    raise UsageError(f"workdir {self.path} is in use by another kewpie run "
                                     f"(pid {other}); use another --workdir")
                time.sleep(0.05)
        except BaseException:
            os.close(fd)
            raise
        self._lock_fd = fd
        self._take_tree(shared=True)
        return first

    def share(self) -> None:
        """After the fresh start of :meth:`join`'s first process: let its siblings in."""
        fcntl.flock(self._lock_fd, fcntl.LOCK_SH | fcntl.LOCK_NB)

    def unlock(self) -> None:
        """Release the workdir lock (and this workdir's tree in /dev/shm)."""
        for attr in ("_tree_fd", "_lock_fd"):
            fd = getattr(self, attr)
            if fd >= 0:
                os.close(fd)
                setattr(self, attr, -1)

    # ------------------------------------------------------------ /dev/shm tree
    def _shm_remedy(self, path: str) -> str:
        return f"remove it (as its owner: rm -rf {path}) or run with --no-shm"

    def _make_shm_dir(self, path: str) -> str:
        return safedirs.make_dir(path, safedirs.TRAVERSE, remedy=self._shm_remedy(path))

    def open_shm(self, shared: bool = False) -> None:
        """Make (or check) /dev/shm/kewpie-<uid>/ and this workdir's tree; hold its lock
        (shared: together with the other processes of a session, see :meth:`join`)."""
        if self._tree_fd >= 0:
            return
        self._make_shm_dir(self.shm_root)
        lock_path = os.path.join(self.shm_path, TREE_LOCK)
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            self._make_shm_dir(self.shm_path)
            try:
                fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            except FileNotFoundError:  # a reclaim removed the tree just now
                fd, same = -1, False
            else:
                try:
                    fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
                    same = os.path.samestat(os.fstat(fd), os.lstat(lock_path))
                except OSError:  # held (a reclaim looking at it), or removed meanwhile
                    same = False
            if same:
                break
            if fd >= 0:
                os.close(fd)
            if time.monotonic() >= deadline:
                raise UsageError(f"{self.shm_path} is in use by another process; "
                                 f"use another --workdir or --no-shm")
            time.sleep(0.05)
        self._tree_fd = fd
        safedirs.write_private_file(os.path.join(self.shm_path, TREE_WORKDIR), self.path + "\n")

    def _drop_legacy_tree(self) -> None:
        """Remove this workdir's tree of the older layout (/dev/shm/kewpie-<uid>-<hash>) if ours."""
        try:
            safedirs.check_dir(self._legacy_shm)
        except (UsageError, OSError):
            return  # absent, or not ours: never used, never touched
        if not tagged_processes(TAG_WORKDIR, self.path):
            safedirs.remove_tree(self._legacy_shm, ignore_errors=True)

    def reclaim(self, strict: bool = True) -> list[str]:
        """Remove the /dev/shm trees of this user's deleted workdirs; return their paths.

        An unsafe /dev/shm/kewpie-<uid> raises UsageError, or with strict=False
        is left alone (the run does not use it).
        """
        try:
            safedirs.check_dir(self.shm_root, remedy=self._shm_remedy(self.shm_root))
            names = os.listdir(self.shm_root)
        except FileNotFoundError:
            return []
        except (UsageError, OSError):
            if strict:
                raise
            return []
        removed = []
        for name in sorted(names):
            if TREE_NAME.fullmatch(name) and name != self.tree_name and self._reclaim_tree(name):
                removed.append(os.path.join(self.shm_root, name))
        if removed:
            get_logger().info(f"Freed {len(removed)} /dev/shm tree(s) of deleted workdirs")
        return removed

    def _reclaim_tree(self, name: str) -> bool:
        """Remove one tree if no run holds it, its workdir is gone and no server uses it."""
        path = os.path.join(self.shm_root, name)
        try:
            st = safedirs.check_dir(path)
        except (UsageError, OSError) as exc:
            get_logger().debug("not reclaiming %s: %s", path, exc)
            return False
        try:
            fd = os.open(os.path.join(path, TREE_LOCK), os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = -1
        except OSError:
            return False
        try:
            if fd >= 0:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    return False  # a run uses it
            recorded = (safedirs.read_small_file(os.path.join(path, TREE_WORKDIR)) or "").strip()
            if not recorded and time.time() - st.st_mtime < RECLAIM_GRACE:
                return False  # being made right now
            if recorded and points_back(recorded, name):
                return False
            if recorded and tagged_processes(TAG_WORKDIR, recorded):
                return False  # --start-and-exit servers still run from it
            safedirs.remove_tree(path, ignore_errors=True)
            get_logger().debug("reclaimed %s (workdir %s is gone)", path, recorded or "?")
            return True
        finally:
            if fd >= 0:
                os.close(fd)

    def remove_shm(self) -> None:
        """Delete this workdir's tree in /dev/shm (not the shared cache) unless another process uses it."""
        if self._tree_fd < 0:
            try:
                safedirs.check_dir(self.shm_root)
                fd = os.open(os.path.join(self.shm_path, TREE_LOCK),
                             os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
            except (UsageError, OSError):
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                return
            safedirs.remove_tree(self.shm_path, ignore_errors=True)
            os.close(fd)
            return
        safedirs.remove_tree(self.shm_path, ignore_errors=True)

    # ------------------------------------------------------------ links
    def _shm_target(self, name: str) -> str:
        """Where workdir/<name> must point: the shared cache, or a bot in our tree."""
        return self.shm_cache if name == "cache" else os.path.join(self.shm_path, name)

    def _check_link(self, name: str) -> str:
        """What workdir/<name> is: '' (nothing), 'link' (ours, to the right place) or 'dir'.

        Our own link from the older layout (/dev/shm/kewpie-<uid>-<hash>/) is
        removed; any other link is refused (UsageError), never followed.
        """
        link = os.path.join(self.path, name)
        try:
            st = os.lstat(link)
        except FileNotFoundError:
            return ""
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        expected = self._shm_target(name)
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(link)
            ours = st.st_uid == os.geteuid()
            if ours and target == expected:
                return "link"
            if ours and target == os.path.join(self._legacy_shm, name):
                os.unlink(link)
                return ""
            raise UsageError(f"refusing to follow {link}: it is a link to {target} (owner "
                             f"{safedirs.owner_name(st.st_uid)}), not to {expected}; remove it "
                             f"(rm {link}) and run again")
        raise UsageError(f"{link} is not a directory (owner {safedirs.owner_name(st.st_uid)}); "
                         f"remove it and run again")

    def _link_or_dir(self, name: str, wipe: bool) -> str:
        link = os.path.join(self.path, name)
        if self.use_shm:
            self.open_shm()
            target = self._shm_target(name)
            kind = self._check_link(name)
            if kind == "dir":  # left by a --no-shm run
                safedirs.remove_tree(link)
            if wipe:
                safedirs.remove_tree(target)
            self._make_shm_dir(target)
            if kind != "link":
                try:
                    os.symlink(target, link)
                except FileExistsError:  # another bot linked the shared cache meanwhile
                    if self._check_link(name) != "link":
                        raise
        else:
            try:
                st = os.lstat(link)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISLNK(st.st_mode):
                os.unlink(link)  # the link only: its target is never followed
                self._drop_shm_bot(name)
            elif st is not None and wipe:
                safedirs.remove_tree(link)
            os.makedirs(link, mode=0o755, exist_ok=True)
        return link

    def _drop_shm_bot(self, name: str) -> None:
        """Free our tree's copy of a bot the workdir no longer links to (--no-shm)."""
        if name == "cache":
            return
        try:
            safedirs.check_dir(self.shm_root)
            safedirs.check_dir(self.shm_path)
        except (UsageError, OSError):
            return
        safedirs.remove_tree(os.path.join(self.shm_path, name), ignore_errors=True)

    def prepare_bot(self, bot: str) -> str:
        """A clean bot directory (previous run's vardirs removed), recorded in the marker."""
        self.record_made(add=(bot,))
        return self._link_or_dir(bot, wipe=True)

    def kept_spares_dir(self, bot: str) -> str | None:
        """Where bot keeps pristine datadirs from one run to the next (``spares/<bot>`` in
        this workdir's /dev/shm tree, made or checked), so that the next run's first
        servers rename one instead of copying it; None without the tree (--no-shm)."""
        if not self.use_shm:
            return None
        self.open_shm()
        parent = self._make_shm_dir(os.path.join(self.shm_path, SPARES))
        return self._make_shm_dir(os.path.join(parent, bot))

    def prepare_disk_bot(self, bot: str, root: str | None = None) -> str | None:
        """A clean on-disk directory for the bot's vardirs of suites with
        ``storage = 'disk'`` (None when the workdir is on disk anyway): in the
        workdir, or under root (the lock directory's ``disk``) in a folder
        named for this workdir.  Directories are made or checked (safedirs)."""
        if not self.use_shm:
            return None
        if root is None:
            parent = safedirs.make_dir(os.path.join(self.path, "disk"), safedirs.TRAVERSE)
        else:
            remedy = f"remove it (rm -rf {root}) or choose another --lock-dir"
            safedirs.make_dir(root, safedirs.TRAVERSE, remedy=remedy)
            parent = safedirs.make_dir(os.path.join(root, self.tree_name), safedirs.TRAVERSE,
                                       remedy=remedy)
        path = os.path.join(parent, bot)
        safedirs.remove_tree(path)
        return safedirs.make_dir(path, safedirs.TRAVERSE)

    def prepare_cache(self) -> str:
        """The bootstrap cache directory (kept between runs; in /dev/shm, shared by workdirs)."""
        self._link_or_dir("cache", wipe=False)
        if not self.use_shm:
            os.makedirs(self.cache_dir, mode=0o755, exist_ok=True)
            return self.cache_dir
        return self._make_shm_dir(os.path.join(self.shm_cache, "bootstrap"))

    def shm_has_room(self) -> bool:
        """True when /dev/shm has at least MIN_SHM_FREE bytes free."""
        try:
            return shutil.disk_usage(shm_base()).free >= MIN_SHM_FREE
        except OSError:
            return False

    @staticmethod
    def empty_dir(path: str | None) -> None:
        """Remove what a directory holds (it stays); a link is never followed, nor emptied."""
        if path:
            safedirs.empty_dir(path, ignore_errors=True)

    def wipe_bots(self) -> None:
        """Cleanup mode: remove the bot directories and the description kewpie recorded
        making here (and, in this workdir's own /dev/shm tree, the bots' vardirs and the
        datadirs kept for the next run).

        A bot counts as made by kewpie when the marker records it or it is a link of
        ours to this workdir's tree; cluster.json when the marker records it or it
        describes a run of this workdir.  Anything else is left alone.
        """
        made = self.made() or frozenset()
        gone = []
        for name in sorted(os.listdir(self.path)):
            if not (BOT_NAME.fullmatch(name) or name == DESCRIPTION):
                continue
            if name in made or self._own_link(name) or self._own_description(name):
                safedirs.remove_tree(os.path.join(self.path, name), ignore_errors=True)
                gone.append(name)
            else:
                get_logger().debug(f"left {name} in {self.path}: no record of kewpie making it")
        if gone:
            self.record_made(remove=tuple(gone))
        if self._tree_fd >= 0:  # ours and checked: the bots' vardirs go with it
            for name in os.listdir(self.shm_path):
                if BOT_NAME.fullmatch(name) or name == SPARES:
                    safedirs.remove_tree(os.path.join(self.shm_path, name), ignore_errors=True)

    def _own_link(self, name: str) -> bool:
        """workdir/name is a link of ours to where this workdir's tree keeps name."""
        link = os.path.join(self.path, name)
        try:
            st = os.lstat(link)
        except FileNotFoundError:
            return False
        return (stat.S_ISLNK(st.st_mode) and st.st_uid == os.geteuid()
                and os.readlink(link) in (self._shm_target(name), os.path.join(self._legacy_shm, name)))

    def _own_description(self, name: str) -> bool:
        """workdir/name is a cluster.json that describes a run of this workdir."""
        if name != DESCRIPTION:
            return False
        text = safedirs.read_small_file(os.path.join(self.path, name), limit=16 << 20) or ""
        try:
            run = json.loads(text).get("run", {})
        except (ValueError, AttributeError):
            return False
        return isinstance(run, dict) and run.get("workdir") == self.path


def refusal(path: str, finding: Finding) -> str:
    """The one line refusing workdir path for finding: what is wrong, owner, mode, the fix."""
    if finding.path == path:
        where = "it"
    elif finding.last:
        where = f"{finding.path} (where it leads)"
    else:
        where = f"{finding.path} (on its way)"
    if not finding.last:
        fix = ("choose a --workdir reached only through directories and links that you or root "
               "own and nobody else can write")
    elif "writable" in finding.problem:
        fix = f"make it private (chmod go-w {finding.path}) or choose another --workdir"
    else:
        fix = ("choose another --workdir: a new path (kewpie makes it), or a directory you or "
               "root own that nobody else can write")
    return (f"refusing to use workdir {path}: {where} {finding.problem} (owner "
            f"{safedirs.owner_name(finding.uid)}, mode {finding.mode:04o}); {fix}")


def marker_problem(st: os.stat_result, owners: frozenset[int]) -> str:
    """'' when a marker with this lstat result is kewpie's own, else what is wrong."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_uid not in owners:
        return "is owned by neither you nor root"
    return ""


def marker_text(made: list[str]) -> str:
    """The marker's content: what kewpie made in the workdir (cleanup removes only that)."""
    return json.dumps({"kind": MARKER_KIND, "made": made}) + "\n"


def parse_marker(text: str) -> frozenset[str] | None:
    """The names a marker records; None for a marker that records nothing (older kewpie)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("kind") != MARKER_KIND:
        return None
    made = data.get("made")
    if not isinstance(made, list):
        return None
    return frozenset(n for n in made if isinstance(n, str) and "/" not in n and n not in ("", ".", ".."))


def _make_dirs(path: str) -> None:
    """Make path and its missing parents, 0755 each (the trust check, before and after,
    decides whether what exists may be used)."""
    missing = []
    current = path
    while not os.path.lexists(current):
        missing.append(current)
        current = os.path.dirname(current)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o755)
        except FileExistsError:
            pass


def _try_flock(fd: int, mode: int) -> int:
    """mode when the non-blocking flock succeeded, else 0."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except OSError:
        return 0
    return mode


def points_back(workdir: str, tree_name: str) -> bool:
    """True when workdir still exists as a kewpie workdir whose tree is tree_name."""
    return (f"wd-{_digest(workdir)}" == tree_name
            and os.path.isfile(os.path.join(workdir, MARKER)))
