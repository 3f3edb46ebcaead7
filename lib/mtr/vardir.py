"""A bot's ``MYSQLTEST_VARDIR``, laid out as mysql-test-run lays out ``var/``.

kewpie's servers keep their own vardirs (``botN/var_sK``); the bot directory
itself is the ``MYSQLTEST_VARDIR`` tests see, with mtr's names pointing at
them: ``mysqld.N`` -> ``var_s(N-1)`` (so ``mysqld.1/data`` is the datadir),
``log/mysqld.N.err`` -> its error log, ``tmp/mysqld.N`` -> its tmpdir, plus
``tmp/``, ``log/``, ``run/`` and a copy of ``std_data``.  ``my.cnf`` (for
mariadb-test and the client tools) is written here per test.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from ..platform import safedirs


@dataclass(frozen=True)
class ServerSlot:
    """Where server N (1-based, mtr's ``mysqld.N``) of a bot lives and listens."""

    number: int
    vardir: str
    port: int
    socket: str
    error_log: str
    tmpdir: str
    spare_ports: tuple[int, ...] = ()   # leased with it, unused by a plain server


class MtrVardir:
    """The bot directory seen as mtr's ``var/``."""

    def __init__(self, root: str, mtr_root: str, user: str | None) -> None:
        self.root = root
        self.mtr_root = mtr_root
        self.user = user
        self.tmp = os.path.join(root, "tmp")
        self.log = os.path.join(root, "log")
        self.run = os.path.join(root, "run")
        self.cnf = os.path.join(root, "my.cnf")

    def prepare(self) -> None:
        """tmp/, log/, run/ (the server user's) and std_data (a copy: tests may write there)."""
        for path in (self.tmp, self.log, self.run):
            os.makedirs(path, mode=0o755, exist_ok=True)
            if self.user:
                shutil.chown(path, self.user, self.user)
        std = os.path.join(self.root, "std_data")
        if not os.path.isdir(std):
            shutil.copytree(os.path.join(self.mtr_root, "std_data"), std, symlinks=True)
            if self.user:
                for dirpath, dirnames, filenames in os.walk(std):
                    shutil.chown(dirpath, self.user, self.user)
                    for name in filenames:
                        os.lchown(os.path.join(dirpath, name), *_ids(self.user))

    def link(self, slot: ServerSlot) -> None:
        """mtr's names for server slot: mysqld.N, log/mysqld.N.err, tmp/mysqld.N."""
        for link, target in ((os.path.join(self.root, f"mysqld.{slot.number}"), slot.vardir),
                             (os.path.join(self.log, f"mysqld.{slot.number}.err"), slot.error_log),
                             (os.path.join(self.tmp, f"mysqld.{slot.number}"), slot.tmpdir)):
            if os.path.islink(link) and os.readlink(link) == target:
                continue
            if os.path.lexists(link):
                if os.path.isdir(link) and not os.path.islink(link):
                    safedirs.remove_tree(link, ignore_errors=True)
                else:
                    os.unlink(link)
            os.symlink(target, link)

    def expect_file(self, number: int) -> str:
        """The restart protocol's file for server N (``tmp/mysqld.N.expect``)."""
        return os.path.join(self.tmp, f"mysqld.{number}.expect")

    def clean_tmp(self) -> None:
        """After a failed test: tmp/ emptied (the servers' links stay) and tmp/, log/ and
        run/ writable again (a test may have taken that away and failed before giving
        it back)."""
        for path in (self.root, self.tmp, self.log, self.run):
            os.chmod(path, 0o755 if path != self.root else 0o711)
        for name in os.listdir(self.tmp):
            path = os.path.join(self.tmp, name)
            if os.path.islink(path):
                continue
            if os.path.isdir(path):
                safedirs.remove_tree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


def _ids(user: str) -> tuple[int, int]:
    import pwd
    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid
