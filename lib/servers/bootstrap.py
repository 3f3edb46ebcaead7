"""Pristine datadirs: bootstrap once per code tree and bootstrap options, copy after.

The cache lives in ``/dev/shm/kewpie-<uid>/cache/bootstrap/<key>/data``,
shared by every workdir of the user (``workdir/cache/bootstrap`` with
--no-shm).  The key hashes the server binary's identity (path, size, mtime,
version), the basedir, the initialiser used, the server user and the options
that matter at bootstrap (lib/servers/options.py BOOTSTRAP_OPTIONS: no path, port or
anything else of a workdir), so a new binary or a different page size gives
a new template, and two workdirs share one.  A file lock per key
(``<key>.lock``) serialises runs building the same template (the build goes
to ``<key>.building`` and is renamed when READY); copies hold it shared, and
pruning takes it exclusively without waiting, so a template in use is never
removed.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import stat
import time

from ..platform import safedirs
from .codetree import CodeTree
from ..errors import ServerError
from ..platform.logsetup import get_logger
from ..platform.logtail import tail_file
from ..platform.tools import run_tool
from .options import Option

KEEP_TEMPLATES = 6


def drop_template(cache_dir: str, key: str, name: str = "") -> bool:
    """Remove the template key (or its build, name) under its key's exclusive lock, only
    when no run builds or copies it now; True when removed."""
    lock_fd = os.open(os.path.join(cache_dir, f"{key}.lock"),
                      os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # being built or copied right now
    else:
        safedirs.remove_tree(os.path.join(cache_dir, name or key), ignore_errors=True)
        return True
    finally:
        os.close(lock_fd)


class BootstrapCache:
    """Builds and hands out pristine datadir templates."""

    keep_templates = KEEP_TEMPLATES  # how many recently used templates pruning keeps

    def __init__(self, cache_dir: str, tree: CodeTree, server_user: str | None) -> None:
        self.cache_dir = cache_dir
        self.tree = tree
        self.server_user = server_user
        safedirs.make_dir(cache_dir, safedirs.TRAVERSE)  # the server user bootstraps inside

    def key(self, options: list[Option]) -> str:
        """The cache key for a set of bootstrap options."""
        opts = sorted(o.as_arg() for o in options)
        installer = self.tree.tools.get("install_db", "")
        text = "|".join([self.tree.binary_fingerprint(), self.tree.basedir, self.tree.initializer(),
                         os.path.realpath(installer) if installer else "",
                         self.server_user or "", *opts])
        return hashlib.sha1(text.encode()).hexdigest()[:16]

    def template(self, options: list[Option]) -> str:
        """Path of a pristine datadir for these options (built if missing)."""
        key = self.key(options)
        target = os.path.join(self.cache_dir, key)
        data = os.path.join(target, "data")
        if os.path.isfile(os.path.join(target, "READY")):
            os.utime(target)
            return data
        lock_fd = self._lock_file(key)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            if os.path.isfile(os.path.join(target, "READY")):
                return data
            safedirs.remove_tree(target, ignore_errors=True)
            self._build(target, options)
        finally:
            os.close(lock_fd)
        self._prune(keep=key)
        return data

    def _lock_file(self, key: str) -> int:
        """An open descriptor on the key's lock file (never through a link)."""
        return os.open(os.path.join(self.cache_dir, f"{key}.lock"),
                       os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)

    def _building_dirs(self, target: str, *extra: str) -> tuple[str, str, str]:
        """A fresh ``<target>.building`` with ``data``, ``tmp`` (never /tmp: concurrent
        bootstraps collide there) and ``data/<extra>`` owned by the server user;
        (building, data, tmp)."""
        building = target + ".building"
        safedirs.remove_tree(building, ignore_errors=True)
        os.mkdir(building, 0o755)
        data, tmp = os.path.join(building, "data"), os.path.join(building, "tmp")
        for path in (data, *(os.path.join(data, e) for e in extra), tmp):
            os.makedirs(path, mode=0o750)
            if self.server_user:
                shutil.chown(path, self.server_user, self.server_user)
        return building, data, tmp

    def _build(self, target: str, options: list[Option]) -> None:
        log = get_logger()
        log.info("Taking clean db snapshot...")
        start = time.monotonic()
        building, data, tmp = self._building_dirs(target)
        logfile = os.path.join(building, "bootstrap.log")
        argv = self._command(data, options) + [f"--tmpdir={tmp}"]
        log.debug("bootstrap: %s", " ".join(argv))
        try:
            ran = run_tool(argv, log_path=logfile, timeout=300, cwd=building)
        except OSError as exc:
            raise ServerError(f"bootstrap failed: {exc}", tail_file(logfile, 20)) from exc
        if ran.timed_out:
            raise ServerError(f"bootstrap failed: {argv[0]} did not finish within 300s and was "
                              f"stopped; log: {logfile}", tail_file(logfile, 20))
        rc = ran.returncode
        if rc != 0:
            text = tail_file(logfile, 200)
            errors = [line for line in text.splitlines() if "ERROR" in line or "[Warning]" in line]
            last = ([line for line in errors if "ERROR" in line] or errors
                    or text.strip().splitlines() or ["(empty log)"])[-1].strip()
            raise ServerError(f"bootstrapping a datadir with {argv[0]} failed (exit {rc}): "
                              f"{last[:300]}; log: {logfile}",
                              "\n".join(errors[-10:]) or tail_file(logfile, 20))
        # kewpie's tests expect a `test` schema; a directory is a schema.
        test_db = os.path.join(data, "test")
        os.makedirs(test_db, mode=0o700, exist_ok=True)
        if self.server_user:
            shutil.chown(test_db, self.server_user, self.server_user)
        shutil.rmtree(tmp, ignore_errors=True)
        with open(os.path.join(building, "READY"), "w") as fh:
            fh.write(" ".join(argv) + "\n")
        os.rename(building, target)
        log.debug("bootstrap took %.0f ms", (time.monotonic() - start) * 1000)

    def _command(self, data: str, options: list[Option]) -> list[str]:
        opt_args = [o.as_arg() for o in options]
        if self.tree.initializer() == "initialize-insecure":
            argv = [self.tree.server, "--no-defaults", "--initialize-insecure",
                    f"--datadir={data}", f"--basedir={self.tree.basedir}"]
            if self.server_user:
                argv.append(f"--user={self.server_user}")
            elif os.geteuid() == 0:
                argv.append("--user=root")
            return argv + opt_args
        install_db = self.tree.tool("install_db")
        argv = [install_db, "--no-defaults", f"--datadir={data}", f"--basedir={self.tree.basedir}"]
        if self.tree.version is None or self.tree.version.flavor == "mariadb":
            argv += ["--auth-root-authentication-method=normal", "--skip-test-db", "--force",
                     "--skip-name-resolve"]
        if self.server_user:
            argv.append(f"--user={self.server_user}")
        elif os.geteuid() == 0:
            argv.append("--user=root")  # servers run as root (--server-user=root)
        return argv + opt_args

    def _prune(self, keep: str) -> None:
        """Keep the KEEP_TEMPLATES most recently used templates; drop failed builds.

        A template (or build) whose key lock someone holds is in use and stays.
        """
        entries = []
        for name in os.listdir(self.cache_dir):
            key = name.removesuffix(".building")
            st = os.lstat(os.path.join(self.cache_dir, name))
            if stat.S_ISDIR(st.st_mode) and key != keep:
                entries.append((name == key, st.st_mtime, key, name))
        entries.sort(reverse=True)  # templates first, newest first; builds after
        count = self.keep_templates
        for _, _, key, name in entries[count - 1:] + \
                [e for e in entries[:count - 1] if not e[0]]:
            drop_template(self.cache_dir, key, name)

    def copy_to(self, template: str, datadir: str) -> None:
        """Copy a template into a (fresh) datadir, keeping ownership and modes.

        A template of this cache is copied under its key's shared lock, so no
        run of another workdir prunes it meanwhile.
        """
        safedirs.remove_tree(datadir)
        key_dir = os.path.dirname(template)
        lock_fd = -1
        if os.path.dirname(key_dir) == self.cache_dir:
            lock_fd = self._lock_file(os.path.basename(key_dir))
            fcntl.flock(lock_fd, fcntl.LOCK_SH)
        try:
            if not os.path.isdir(template):
                raise ServerError(f"the pristine datadir {template} is gone (pruned by another "
                                  f"run?); run again")
            copied = run_tool(["cp", "-a", template, datadir])
        finally:
            if lock_fd >= 0:
                os.close(lock_fd)
        if not copied.ok:
            raise ServerError(f"copying the pristine datadir to {datadir} failed: "
                              f"{copied.stderr.strip()}")
