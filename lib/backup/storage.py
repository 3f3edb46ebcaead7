"""Where backups live and who owns them.

Backups go under the bot's directory, next to the servers' vardirs::

    workdir/bot0/                       (a link into /dev/shm unless --no-shm)
      var_s0/ var_s1/                   the servers
      backups/<label>/                  one directory per test module (label)
        full/  inc1/ ...                the backups
        full.backup.log ...             the tools' logs
        tmp/                            the tools' scratch space (--tmpdir, TMPDIR)

So nothing lands outside the workdir, a new run's fresh bot directory drops
old backups, and the directories belong to the server user (the tools run as
that user).
"""
from __future__ import annotations

import os
import re
import shutil
from typing import TYPE_CHECKING

from .errors import RestoreError

if TYPE_CHECKING:
    from ..servers.server import Server

BACKUPS_DIR = "backups"


def backups_root(server: Server) -> str:
    """``<bot dir>/backups``: the directory above the server's vardir, plus backups/."""
    return os.path.join(os.path.dirname(os.path.abspath(server.paths.vardir)), BACKUPS_DIR)


def safe_label(text: str) -> str:
    """A directory-name-safe label (letters, digits, ``._-``)."""
    label = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")
    return label or "backups"


def make_owned_dir(path: str, user: str | None, mode: int = 0o750) -> str:
    """Create path (and parents) if missing; give the new directory to user."""
    created = not os.path.isdir(path)
    os.makedirs(path, mode=mode, exist_ok=True)
    if user and (created or os.stat(path).st_uid == 0):
        shutil.chown(path, user, _group(user))
    return path


def _group(user: str) -> str:
    from ..platform.process import group_of
    return group_of(user)


def owner_ids(user: str | None) -> tuple[int, int]:
    """(uid, gid) of user, or of ourselves when user is None."""
    if not user:
        return os.geteuid(), os.getegid()
    import pwd
    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid


def chown_tree(path: str, uid: int, gid: int) -> int:
    """Give path and everything below it to uid:gid; return how many entries changed."""
    changed = 0

    def fix(p: str) -> None:
        """chown one entry if it is not uid:gid already."""
        nonlocal changed
        st = os.lstat(p)
        if st.st_uid != uid or st.st_gid != gid:
            os.lchown(p, uid, gid)
            changed += 1

    fix(path)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            fix(os.path.join(root, name))
    return changed


def empty_datadir(datadir: str, user: str | None) -> None:
    """Remove everything in datadir and recreate it empty (mode 0750, owned by user)."""
    if os.path.islink(datadir):
        raise RestoreError(f"datadir {datadir} is a symlink; refusing to empty it")
    if os.path.isdir(datadir):
        shutil.rmtree(datadir)
    os.makedirs(datadir, mode=0o750)
    os.chmod(datadir, 0o750)
    if user:
        shutil.chown(datadir, user, _group(user))


def unique_dir(parent: str, name: str) -> str:
    """parent/name, or parent/name-2, -3... if that exists."""
    candidate = os.path.join(parent, safe_label(name))
    n = 2
    while os.path.exists(candidate):
        candidate = os.path.join(parent, f"{safe_label(name)}-{n}")
        n += 1
    return candidate
