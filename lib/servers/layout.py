"""Where a server's files live, and writing them: the vardir tree and ``my.cnf``.

A vardir holds ``data/ log/ tmp/ run/``, ``my.cnf`` and the socket.  A unix
socket path may not exceed ``sun_path`` (108 bytes), so a deep vardir puts
its socket in a short fallback directory named after the lease's first port.
``my.cnf`` may hold passwords (Galera's SST account), so it is written
atomically and never readable by others (see :func:`write_private_file`).
"""
from __future__ import annotations

import grp
import os
import shutil
from dataclasses import dataclass
from typing import overload

from ..platform.process import group_of
from ..platform.safedirs import make_temp_file
from .options import Option, render_cnf

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
    """The paths of one server's files; ``under()`` derives them all from the vardir."""

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

    @classmethod
    def under(cls, vardir: str, socket_fallback_dir: str, first_port: int) -> "ServerLayout":
        """The standard layout of a vardir (the socket may fall back, see socket_path)."""
        logdir, rundir = os.path.join(vardir, "log"), os.path.join(vardir, "run")
        return cls(vardir=vardir, datadir=os.path.join(vardir, "data"), logdir=logdir,
                   tmpdir=os.path.join(vardir, "tmp"), rundir=rundir,
                   cnf_path=os.path.join(vardir, "my.cnf"),
                   error_log=os.path.join(logdir, "error.log"),
                   stdout_log=os.path.join(logdir, "stdout.log"),
                   pid_file=os.path.join(rundir, "my.pid"),
                   socket_file=socket_path(vardir, socket_fallback_dir, first_port))

    def make_dirs(self, user: str | None, extra: tuple[str, ...] = ()) -> None:
        """Create the vardir tree (plus extra directories), owned by user when given.

        The datadir is not created here: it comes from the bootstrap cache.
        """
        os.makedirs(self.vardir, mode=0o755, exist_ok=True)
        owned = [self.vardir]
        for d in (self.logdir, self.tmpdir, self.rundir, *extra):
            os.makedirs(d, mode=0o750, exist_ok=True)
            owned.append(d)
        if user:
            for d in owned:
                shutil.chown(d, user, user)

    def base_options(self, port: int, server_id: int, mariadb: bool) -> list[Option]:
        """The [mysqld] options kewpie sets for every server: these paths, the port on
        loopback, small InnoDB files; MySQL's X plugin and admin port kept on loopback too."""
        opts = [
            Option("datadir", self.datadir), Option("port", str(port)),
            Option("bind-address", HOST), Option("socket", self.socket_file),
            Option("pid-file", self.pid_file), Option("log-error", self.error_log),
            Option("tmpdir", self.tmpdir), Option("secure-file-priv", self.vardir),
            Option("server-id", str(server_id)), Option("skip-name-resolve"),
            Option("innodb-log-file-size", "16M"), Option("innodb-buffer-pool-size", "128M"),
            Option("core-file"),
        ]
        if not mariadb:
            opts += [Option("mysqlx", "OFF", loose=True), Option("admin-address", HOST, loose=True)]
        return opts

    def client_options(self, port: int) -> list[Option]:
        """The [client] section: the tools connect as root to this server."""
        return [Option("host", HOST), Option("port", str(port)),
                Option("socket", self.socket_file), Option("user", "root")]

    def write_cnf(self, sections: dict[str, list[Option]], user: str | None) -> None:
        """Write ``my.cnf`` from sections: 0640 root:<user's group> when running as
        root for a server user (mariadbd and the tools read it through the group),
        else 0600 owned by whoever runs kewpie."""
        write_private_file(self.cnf_path, render_cnf(sections), user)


class LayoutPath:
    """A read-only attribute of a server that is the same-named path of its ``layout``
    (``server.datadir`` is ``server.layout.datadir``: one source of truth)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> LayoutPath: ...

    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> str: ...

    def __get__(self, obj: object, objtype: type | None = None) -> LayoutPath | str:
        if obj is None:
            return self
        path: str = getattr(getattr(obj, "layout"), self.name)
        return path

    def __set__(self, obj: object, value: str) -> None:
        raise AttributeError(f"{self.name} comes from the server's layout; build a new layout")


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
