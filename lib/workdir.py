"""The workdir: bot directories (on /dev/shm by default), cache, state, lock.

Layout::

    workdir/                  real directory, holds the marker and state
      .kewpie-workdir         marker: kewpie may wipe what it created here
      kewpie.lock             held (flock) by the run using this workdir
      servers.json            servers running now (for --mode=cleanup)
      kewpie.log              the last run's full log
      bot0 -> /dev/shm/kewpie-<uid>-<hash>/bot0   (a real dir with --no-shm)
      cache -> /dev/shm/kewpie-<uid>-<hash>/cache (pristine datadirs)
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil

from lib.errors import UsageError

MARKER = ".kewpie-workdir"
SHM_ROOT = "/dev/shm"
MIN_SHM_FREE = 2 << 30  # below this, vardirs go to disk: a full tmpfs stalls the machine


class Workdir:
    """Paths and exclusive use of one workdir."""

    def __init__(self, path: str, use_shm: bool = True, server_user: str | None = None) -> None:
        self.path = os.path.abspath(path)
        self.use_shm = use_shm and os.path.isdir(SHM_ROOT) and os.access(SHM_ROOT, os.W_OK)
        self.server_user = server_user
        digest = hashlib.sha1(self.path.encode()).hexdigest()[:10]
        self.shm_path = os.path.join(SHM_ROOT, f"kewpie-{os.getuid()}-{digest}")
        self._lock_fd = -1

    @property
    def state_file(self) -> str:
        """Where bot0's running servers are recorded."""
        return self.state_file_for("bot0")

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
        return os.path.join(self.path, "cluster.json")

    @property
    def log_file(self) -> str:
        """The run's full log."""
        return os.path.join(self.path, "kewpie.log")

    @property
    def cache_dir(self) -> str:
        """The pristine datadir cache."""
        return os.path.join(self.path, "cache", "bootstrap")

    def bot_dir(self, bot: str) -> str:
        """A bot's directory (``workdir/bot0``)."""
        return os.path.join(self.path, bot)

    def create(self) -> None:
        """Create the workdir (0755) or check an existing one is ours."""
        if os.path.exists(self.path):
            if not os.path.isdir(self.path):
                raise UsageError(f"--workdir {self.path} exists and is not a directory")
            if os.listdir(self.path) and not os.path.exists(os.path.join(self.path, MARKER)):
                raise UsageError(f"--workdir {self.path} is a non-empty directory kewpie did not "
                                 f"create; choose an empty or new directory")
        os.makedirs(self.path, mode=0o755, exist_ok=True)
        st = os.stat(self.path)
        if st.st_mode & 0o002:
            os.chmod(self.path, 0o755)
        open(os.path.join(self.path, MARKER), "a").close()

    def lock(self) -> None:
        """Take the workdir for this run; UsageError if another run has it."""
        fd = os.open(os.path.join(self.path, "kewpie.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
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

    def unlock(self) -> None:
        """Release the workdir lock."""
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1

    def _link_or_dir(self, name: str, wipe: bool) -> str:
        link = os.path.join(self.path, name)
        if self.use_shm:
            target = os.path.join(self.shm_path, name)
            if os.path.isdir(link) and not os.path.islink(link):
                shutil.rmtree(link)
            if wipe and os.path.exists(target):
                shutil.rmtree(target)
            os.makedirs(self.shm_path, mode=0o755, exist_ok=True)
            os.makedirs(target, mode=0o755, exist_ok=True)
            if os.path.islink(link) and os.readlink(link) != target:
                os.unlink(link)
            if not os.path.islink(link):
                try:
                    os.symlink(target, link)
                except FileExistsError:  # another bot linked the shared cache meanwhile
                    if os.path.realpath(link) != os.path.realpath(target):
                        raise
        else:
            if os.path.islink(link):
                old = os.path.realpath(link)
                os.unlink(link)
                if old.startswith(self.shm_path):
                    shutil.rmtree(old, ignore_errors=True)
            if wipe and os.path.exists(link):
                shutil.rmtree(link)
            os.makedirs(link, mode=0o755, exist_ok=True)
        return link

    def prepare_bot(self, bot: str) -> str:
        """A clean bot directory (previous run's vardirs removed)."""
        return self._link_or_dir(bot, wipe=True)

    def prepare_disk_bot(self, bot: str, root: str | None = None) -> str | None:
        """A clean on-disk directory for the bot's vardirs of suites with
        ``storage = 'disk'`` (None when the workdir is on disk anyway): in the
        workdir, or under root (the lock directory) in a folder named for
        this workdir."""
        if not self.use_shm:
            return None
        path = (os.path.join(self.path, "disk", bot) if root is None
                else os.path.join(root, os.path.basename(self.shm_path), bot))
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path, mode=0o755, exist_ok=True)
        return path

    def prepare_cache(self) -> str:
        """The cache directory (kept between runs)."""
        self._link_or_dir("cache", wipe=False)
        os.makedirs(self.cache_dir, mode=0o755, exist_ok=True)
        return self.cache_dir

    def shm_has_room(self) -> bool:
        """True when /dev/shm has at least MIN_SHM_FREE bytes free."""
        try:
            return shutil.disk_usage(SHM_ROOT).free >= MIN_SHM_FREE
        except OSError:
            return False

    @staticmethod
    def empty_dir(path: str) -> None:
        """Remove what a directory holds (it stays); never follows links out of it."""
        real = os.path.realpath(path)
        if not os.path.isdir(real):
            return
        for name in os.listdir(real):
            entry = os.path.join(real, name)
            if os.path.isdir(entry) and not os.path.islink(entry):
                shutil.rmtree(entry, ignore_errors=True)
            else:
                try:
                    os.unlink(entry)
                except OSError:
                    pass

    def remove_shm(self) -> None:
        """Delete this workdir's directory in /dev/shm (caches included)."""
        shutil.rmtree(self.shm_path, ignore_errors=True)

    def wipe_bots(self) -> None:
        """Remove every bot directory and the description (cleanup mode)."""
        if os.path.exists(self.description_file):
            os.unlink(self.description_file)
        for name in os.listdir(self.path):
            if name.startswith("bot"):
                path = os.path.join(self.path, name)
                real = os.path.realpath(path)
                if os.path.islink(path):
                    os.unlink(path)
                shutil.rmtree(real, ignore_errors=True)
