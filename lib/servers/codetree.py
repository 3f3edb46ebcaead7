"""Find the binaries of a MySQL-family code tree (--basedir) and identify it.

A code tree is an installation prefix (``/usr``), an unpacked tarball
(``bin/``, ``scripts/``) or a source build (``sql/``, ``client/``,
``extra/``).  We search each of those layouts for every tool by each of its
names, and report one clear error naming what was searched when the server
itself is missing.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from lib.errors import CodeTreeError
from lib.platform.tools import run_tool

BIN_SUBDIRS = ("bin", "sbin", "libexec", "scripts", "sql", "client", "extra",
               "extra/mariabackup", "storage/innobase/xtrabackup/src", "")

TOOL_NAMES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "server": ("mariadbd", "mysqld"),
    "install_db": ("mariadb-install-db", "mysql_install_db"),
    "client": ("mariadb", "mysql"),
    "dump": ("mariadb-dump", "mysqldump"),
    "admin": ("mariadb-admin", "mysqladmin"),
    "mariabackup": ("mariadb-backup", "mariabackup"),
    "xtrabackup": ("xtrabackup",),
    "innobackupex": ("innobackupex",),
    "mbstream": ("mbstream", "xbstream"),
})


VERSION_RE = re.compile(
    r"Ver\s+(?P<version>\d+\.\d+\.\d+)(?P<suffix>\S*)\s+for\s+(?P<os>\S+)\s+on\s+(?P<platform>\S+)"
    r"(?:\s+\((?P<comment>.*)\))?")


@dataclass
class ServerVersion:
    """What ``mysqld --version`` says about a server binary."""

    version: str
    suffix: str
    compile_os: str
    platform: str
    comment: str

    @property
    def flavor(self) -> str:
        """``mariadb``, ``percona`` or ``mysql``."""
        text = f"{self.suffix} {self.comment}".lower()
        if "mariadb" in text:
            return "mariadb"
        if "percona" in text:
            return "percona"
        return "mysql"

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        """The version as a tuple of three ints."""
        major, minor, patch = (int(p) for p in self.version.split("."))
        return major, minor, patch

    @property
    def is_galera(self) -> bool:
        """True when the build mentions wsrep (Galera-capable)."""
        return "wsrep" in f"{self.suffix} {self.comment}".lower()


def parse_version_output(text: str) -> ServerVersion:
    """Parse the output of ``mysqld --version``; raise CodeTreeError if unreadable."""
    match = VERSION_RE.search(text)
    if not match:
        raise CodeTreeError(f"cannot read the server version from: {text.strip()[:200]!r}")
    return ServerVersion(version=match["version"], suffix=match["suffix"] or "",
                         compile_os=match["os"], platform=match["platform"],
                         comment=(match["comment"] or "").strip())


def uses_initialize_insecure(version: ServerVersion) -> bool:
    """MySQL/Percona 5.7.6+ create datadirs with ``mysqld --initialize-insecure``."""
    return version.flavor != "mariadb" and version.version_tuple >= (5, 7, 6)


@dataclass
class CodeTree:
    """The binaries found under one basedir, plus the server's identity."""

    basedir: str
    tools: dict[str, str] = field(default_factory=dict)
    searched: dict[str, list[str]] = field(default_factory=dict)
    version: ServerVersion | None = None

    @property
    def server(self) -> str:
        """Path of the server binary."""
        return self.tools["server"]

    @property
    def clientbindir(self) -> str:
        """Directory holding the client (kewpie's header line)."""
        client = self.tools.get("client")
        return os.path.dirname(client) if client else ""

    def tool(self, name: str) -> str:
        """Path of an optional tool, or a CodeTreeError naming what was searched."""
        path = self.tools.get(name)
        if path:
            return path
        names = "/".join(TOOL_NAMES.get(name, (name,)))
        where = ", ".join(self.searched.get(name, [])) or self.basedir
        raise CodeTreeError(f"no {names} found for basedir {self.basedir} (searched: {where})")

    def binary_fingerprint(self) -> str:
        """A short hash of the server binary identity (path, size, mtime, version)."""
        st = os.stat(self.server)
        text = f"{os.path.realpath(self.server)}|{st.st_size}|{int(st.st_mtime)}"
        if self.version:
            text += f"|{self.version.version}{self.version.suffix}"
        return hashlib.sha1(text.encode()).hexdigest()[:12]

    def initializer(self) -> str:
        """``initialize-insecure`` (MySQL 5.7+/8) or ``install-db``."""
        if self.version and uses_initialize_insecure(self.version):
            return "initialize-insecure"
        return "install-db"


def _search_dirs(basedir: str) -> list[str]:
    dirs = [os.path.join(basedir, sub) if sub else basedir for sub in BIN_SUBDIRS]
    return [d for d in dirs if os.path.isdir(d)]


def find_tool(basedir: str, names: tuple[str, ...], extra_dirs: tuple[str, ...] = ()) -> tuple[str | None, list[str]]:
    """Return (path or None, list of candidate paths searched)."""
    searched: list[str] = []
    for directory in list(_search_dirs(basedir)) + list(extra_dirs):
        for name in names:
            candidate = os.path.join(directory, name)
            searched.append(candidate)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate, searched
    return None, searched


def read_server_version(server: str) -> ServerVersion:
    """Run ``server --version`` and parse it."""
    try:
        out = run_tool([server, "--no-defaults", "--version"], timeout=30)
    except OSError as exc:
        raise CodeTreeError(f"cannot run {server} --version: {exc}") from exc
    if out.timed_out:
        raise CodeTreeError(f"{server} --version did not answer within 30s")
    return parse_version_output(out.output)


def discover(basedir: str, tool_overrides: dict[str, str] | None = None) -> CodeTree:
    """Search basedir for every tool; raise CodeTreeError if there is no server."""
    basedir = os.path.abspath(os.path.expanduser(basedir))
    if not os.path.isdir(basedir):
        raise CodeTreeError(f"--basedir {basedir} is not a directory")
    tree = CodeTree(basedir=basedir)
    path_dirs = tuple(p for p in os.environ.get("PATH", "").split(os.pathsep) if p)
    for key, names in TOOL_NAMES.items():
        # The server and initializer must come from the code tree itself; the
        # client-side tools may come from PATH when the tree lacks them.
        extra = () if key in ("server", "install_db") else path_dirs
        path, searched = find_tool(basedir, names, extra)
        tree.searched[key] = searched
        if path:
            tree.tools[key] = path
    for key, path in (tool_overrides or {}).items():
        if path:
            tree.tools[key] = path
    if "server" not in tree.tools:
        dirs = ", ".join(_search_dirs(basedir)) or basedir
        raise CodeTreeError(f"no server binary (mariadbd or mysqld) under --basedir {basedir} "
                            f"(searched: {dirs}); point --basedir at a MariaDB/MySQL install")
    tree.version = read_server_version(tree.server)
    if tree.initializer() == "install-db" and "install_db" not in tree.tools:
        raise CodeTreeError(f"no datadir initialiser (mariadb-install-db or mysql_install_db) "
                            f"under --basedir {basedir} (searched: "
                            f"{', '.join(_search_dirs(basedir)) or basedir})")
    return tree
