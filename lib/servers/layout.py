"""Where a server's files live (``server.paths``): the vardir tree.

A vardir holds ``data/ log/ tmp/ run/``, ``my.cnf`` and the socket.  A unix
socket path may not exceed ``sun_path`` (108 bytes), so a deep vardir puts
its socket in a short fallback directory named after the lease's first port.
``my.cnf`` may hold passwords (Galera's SST account), so it is written
atomically and never readable by others (see :func:`write_private_file`;
its contents are :mod:`lib.servers.cnf`'s).
"""
from __future__ import annotations

import grp
import os
import shutil
from dataclasses import dataclass

from ..platform.process import group_of
from ..platform.safedirs import make_temp_file

HOST = "127.0.0.1"
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes; keep a margin


def socket_path(vardir: str, fallback_dir: str, first_port: int) -> str:
    """``<vardir>/my.sock``, or ``<fallback_dir>/kw-<first port>.sock`` when that is too long."""
    path = os.path.join(vardir, "my.sock")
    if len(path) <= SOCKET_PATH_MAX:
        return path
    return os.path.join(fallback_dir, f"kw-{first_port}.sock")


@dataclass(frozen=True)
class ServerLayout:
    """The paths of one server's files (``server.paths``); ``under()`` derives them all
    from the vardir.  extra_dirs are more directories of its tree (Galera's SST
    directories), owner the user its directories belong to (None: whoever runs kewpie)."""

    vardir: str
    datadir: str
    logdir: str
    tmpdir: str
    rundir: str
    cnf_path: str
    error_log: str
    stdout_log: str
    pid_file: str
    socket_file: str
    extra_dirs: tuple[str, ...] = ()
    owner: str | None = None

    @classmethod
    def under(cls, vardir: str, socket_fallback_dir: str, first_port: int,
              extra_dirs: tuple[str, ...] = (), owner: str | None = None) -> "ServerLayout":
        """The standard layout of a vardir (the socket may fall back, see socket_path)."""
        logdir, rundir = os.path.join(vardir, "log"), os.path.join(vardir, "run")
        return cls(vardir=vardir, datadir=os.path.join(vardir, "data"), logdir=logdir,
                   tmpdir=os.path.join(vardir, "tmp"), rundir=rundir,
                   cnf_path=os.path.join(vardir, "my.cnf"),
                   error_log=os.path.join(logdir, "error.log"),
                   stdout_log=os.path.join(logdir, "stdout.log"),
                   pid_file=os.path.join(rundir, "my.pid"),
                   socket_file=socket_path(vardir, socket_fallback_dir, first_port),
                   extra_dirs=extra_dirs, owner=owner)

    def make_dirs(self) -> None:
        """Create the vardir tree (with the extra directories), owned by the owner.

        The datadir is not created here: it comes from the bootstrap cache.
        """
        os.makedirs(self.vardir, mode=0o755, exist_ok=True)
        owned = [self.vardir]
        for d in (self.logdir, self.tmpdir, self.rundir, *self.extra_dirs):
            os.makedirs(d, mode=0o750, exist_ok=True)
            owned.append(d)
        if self.owner:
            for d in owned:
                shutil.chown(d, self.owner, self.owner)


def write_private_file(path: str, text: str, user: str | None = None) -> None:
    """Atomically write a file that may hold secrets, never readable by others.

    With user and kewpie running as root: 0640 root:<user's group>; otherwise
    0600 owned by the caller.  The file is created with its final mode and
    owner before any byte is written, then renamed over path.
    """
    directory = os.path.dirname(path) or "."
    fd, tmp = make_temp_file(directory, f".{os.path.basename(path)}.")
    try:
        if user and os.geteuid() == 0:
            os.fchown(fd, 0, grp.getgrnam(group_of(user)).gr_gid)
            os.fchmod(fd, 0o640)
        else:
            os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as fh:
            fd = -1
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
