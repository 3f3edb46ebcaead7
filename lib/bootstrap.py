"""Pristine datadirs: bootstrap once per code tree and bootstrap options, copy after.

The cache lives in the workdir (``cache/bootstrap/<key>/data``).  The key
hashes the server binary's identity (path, size, mtime, version), the
initialiser used, the server user and the options that matter at bootstrap,
so a new binary or a different page size gives a new template.  A file lock
serialises two runs building the same template.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import time

from lib.codetree import CodeTree
from lib.errors import ServerError
from lib.logsetup import get_logger
from lib.logtail import tail_file
from lib.options import Option

KEEP_TEMPLATES = 6


class BootstrapCache:
    """Builds and hands out pristine datadir templates."""

    def __init__(self, cache_dir: str, tree: CodeTree, server_user: str | None) -> None:
        self.cache_dir = cache_dir
        self.tree = tree
        self.server_user = server_user
        os.makedirs(cache_dir, mode=0o755, exist_ok=True)

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
        lock_fd = os.open(os.path.join(self.cache_dir, f"{key}.lock"),
                          os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            if os.path.isfile(os.path.join(target, "READY")):
                return data
            shutil.rmtree(target, ignore_errors=True)
            self._build(target, options)
            self._prune(keep=key)
        finally:
            os.close(lock_fd)
        return data

    def _build(self, target: str, options: list[Option]) -> None:
        log = get_logger()
        log.info("Taking clean db snapshot...")
        start = time.monotonic()
        building = target + ".building"
        shutil.rmtree(building, ignore_errors=True)
        os.makedirs(building, mode=0o755)
        data = os.path.join(building, "data")
        logfile = os.path.join(building, "bootstrap.log")
        tmp = os.path.join(building, "tmp")  # never /tmp: concurrent bootstraps collide there
        os.makedirs(data, mode=0o750)
        os.makedirs(tmp, mode=0o750)
        if self.server_user:
            shutil.chown(data, self.server_user, self.server_user)
            shutil.chown(tmp, self.server_user, self.server_user)
        argv = self._command(data, options) + [f"--tmpdir={tmp}"]
        log.debug("bootstrap: %s", " ".join(argv))
        with open(logfile, "wb") as out:
            try:
                rc = subprocess.run(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                                    timeout=300, cwd=building).returncode
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise ServerError(f"bootstrap failed: {exc}", tail_file(logfile, 20)) from exc
        if rc != 0:
            text = tail_file(logfile, 200)
            errors = [line for line in text.splitlines() if "ERROR" in line or "[Warning]" in line]
            raise ServerError(f"bootstrapping a datadir with {argv[0]} failed (exit {rc}); "
                              f"log: {logfile}", "\n".join(errors[-10:]) or tail_file(logfile, 20))
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
            return argv + opt_args
        install_db = self.tree.tool("install_db")
        argv = [install_db, "--no-defaults", f"--datadir={data}", f"--basedir={self.tree.basedir}"]
        if self.tree.version is None or self.tree.version.flavor == "mariadb":
            argv += ["--auth-root-authentication-method=normal", "--skip-test-db", "--force",
                     "--skip-name-resolve"]
        if self.server_user:
            argv.append(f"--user={self.server_user}")
        return argv + opt_args

    def _prune(self, keep: str) -> None:
        entries = []
        for name in os.listdir(self.cache_dir):
            path = os.path.join(self.cache_dir, name)
            if os.path.isdir(path) and name != keep and not name.endswith(".building"):
                entries.append((os.path.getmtime(path), path))
        entries.sort(reverse=True)
        for _, path in entries[KEEP_TEMPLATES - 1:]:
            shutil.rmtree(path, ignore_errors=True)

    def copy_to(self, template: str, datadir: str) -> None:
        """Copy a template into a (fresh) datadir, keeping ownership and modes."""
        if os.path.exists(datadir):
            shutil.rmtree(datadir)
        rc = subprocess.run(["cp", "-a", template, datadir], capture_output=True, text=True)
        if rc.returncode != 0:
            raise ServerError(f"copying the pristine datadir to {datadir} failed: {rc.stderr.strip()}")
