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

from ..errors import CodeTreeError, UsageError
from ..platform import safedirs
from ..platform.tools import run_tool
from ..platform.trustedpath import Trust, check_input
from ..platform.workdir import user_shm_root

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
    "upgrade": ("mariadb-upgrade", "mysql_upgrade"),
})

# A tree unpacked from distribution packages (``dpkg-deb -x``, ``rpm2cpio``) has the
# install prefix below it: ``<dir>/usr/sbin/mariadbd``.
PACKAGE_PREFIXES = ("usr", "usr/local")
# Where an install prefix keeps the server plugins and the language files (errmsg.sys).
PLUGIN_SUBDIRS = ("lib/mysql/plugin", "lib64/mysql/plugin", "lib/plugin", "lib/mariadb/plugin")
MESSAGES_SUBDIRS = ("share/mysql", "share/mariadb", "share")
SYSTEM_PREFIXES = ("/usr", "/usr/local")
VERSION_CACHE = "versions"  # cache/versions: the --version text of each server binary seen
VERSION_CACHE_KEEP = 64     # entries kept there


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
    given: str = ""  # the directory as named (an unpacked package tree: above basedir)

    @property
    def label(self) -> str:
        """The server version (``10.11.18``), or the basedir when unknown."""
        return self.version.version if self.version else self.basedir

    @property
    def relocated(self) -> bool:
        """True for a tree outside the system prefix (its server must be told where its
        share files and plugins are: see :meth:`server_path_options`)."""
        return os.path.realpath(self.basedir) not in SYSTEM_PREFIXES

    def server_path_options(self) -> list[tuple[str, str]]:
        """``basedir``, ``plugin-dir`` and ``lc-messages-dir`` of a relocated tree (the
        server then takes its errmsg files, charsets and plugins from the tree, and puts
        ``<basedir>/bin`` first in the PATH of the wsrep SST scripts); [] for /usr."""
        if not self.relocated:
            return []
        opts = [("basedir", self.basedir)]
        plugin = _first_dir(self.basedir, PLUGIN_SUBDIRS)
        if plugin:
            opts.append(("plugin-dir", plugin))
        for sub in MESSAGES_SUBDIRS:
            path = os.path.join(self.basedir, sub)
            if os.path.isfile(os.path.join(path, "english", "errmsg.sys")):
                opts.append(("lc-messages-dir", path))
                break
        return opts

    def plugin_dir(self) -> str:
        """The tree's server plugin directory ('' when it has none)."""
        return _first_dir(self.basedir, PLUGIN_SUBDIRS)

    def bin_dirs(self) -> list[str]:
        """The tree's directories of programs (first in PATH for what its server runs)."""
        if not self.relocated:
            return []
        dirs = (os.path.join(self.basedir, sub) for sub in ("bin", "sbin", "scripts"))
        return [d for d in dirs if os.path.isdir(d)]

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


def _first_dir(basedir: str, subdirs: tuple[str, ...]) -> str:
    """The first of basedir's subdirs that exists ('' when none)."""
    for sub in subdirs:
        path = os.path.join(basedir, sub)
        if os.path.isdir(path):
            return path
    return ""


def install_prefix(directory: str) -> str:
    """directory itself, or the install prefix inside an unpacked package tree
    (``trees/10.11.18`` holds ``usr/sbin/mariadbd``: the prefix is ``trees/10.11.18/usr``)."""
    if find_tool(directory, TOOL_NAMES["server"])[0]:
        return directory
    for sub in PACKAGE_PREFIXES:
        prefix = os.path.join(directory, sub)
        if os.path.isdir(prefix) and find_tool(prefix, TOOL_NAMES["server"])[0]:
            return prefix
    return directory


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


def version_cache_file(server: str) -> str | None:
    """Where the ``--version`` text of this very binary is kept between runs, or None.

    The file is named for the binary's identity (real path, device, inode, size,
    mtime and ctime, so a rebuilt or reinstalled server is another file), in
    ``cache/versions`` of the user's RAM tree, used only when that tree and its
    cache are ours and writable by nobody else (it is created by the first run).
    """
    try:
        st = os.stat(server)
        cache = os.path.join(user_shm_root(), "cache")
        safedirs.check_dir(os.path.dirname(cache))
        safedirs.check_dir(cache)
        directory = safedirs.make_dir(os.path.join(cache, VERSION_CACHE))
    except (OSError, UsageError):
        return None
    identity = "\0".join(str(v) for v in (os.path.realpath(server), st.st_dev, st.st_ino,
                                         st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return os.path.join(directory, hashlib.sha1(identity.encode()).hexdigest()[:20] + ".txt")


def read_server_version(server: str) -> ServerVersion:
    """Run ``server --version`` and parse it (the answer is cached per binary: running
    it costs every command 20-50 ms, see :func:`version_cache_file`)."""
    cached_at = version_cache_file(server)
    text = safedirs.read_small_file(cached_at) if cached_at else None
    if text:
        try:
            return parse_version_output(text)
        except CodeTreeError:
            pass   # unreadable: ask the binary again
    try:
        out = run_tool([server, "--no-defaults", "--version"], timeout=30)
    except OSError as exc:
        raise CodeTreeError(f"cannot run {server} --version: {exc}") from exc
    if out.timed_out:
        raise CodeTreeError(f"{server} --version did not answer within 30s")
    version = parse_version_output(out.output)
    if cached_at and out.ok:
        temporary = f"{cached_at}.{os.getpid()}.tmp"
        try:   # written whole, then renamed: a reader never sees half of it
            safedirs.write_private_file(temporary, out.output)
            os.replace(temporary, cached_at)
            _prune_versions(os.path.dirname(cached_at))
        except OSError:
            safedirs.remove_tree(temporary, ignore_errors=True)
    return version


def _prune_versions(directory: str) -> None:
    """Keep the VERSION_CACHE_KEEP newest entries (test trees come and go)."""
    entries = [e for e in os.scandir(directory) if e.is_file(follow_symlinks=False)]
    if len(entries) <= VERSION_CACHE_KEEP:
        return
    entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime_ns, reverse=True)
    for entry in entries[VERSION_CACHE_KEEP:]:
        safedirs.remove_tree(entry.path, ignore_errors=True)


def check_tree_parts(tree: CodeTree, trust: Trust | None = None) -> None:
    """The trust rule (lib/platform/trustedpath.py) over what kewpie runs or loads from a
    code tree: the folder given and the way to it, each folder programs are looked up
    in, every program found, the plugin folder and its libraries, and the language
    files with the bootstrap's SQL (the messages folder's files, ``english/``,
    ``charsets/``).  The
    rest of a tree (``/usr`` holds everything) is not kewpie's to judge; mysql-test is
    checked when mtr mode uses it.  UntrustedPathError (one line) for the first refused."""
    what = f"--basedir {tree.given or tree.basedir}:"
    check_input(tree.given or tree.basedir, "--basedir", trust)
    for folder in _search_dirs(tree.basedir):
        check_input(folder, what, trust)
    for path in sorted(set(tree.tools.values())):
        check_input(path, f"{what} program", trust)
    plugin = tree.plugin_dir()
    if plugin:  # the libraries a server loads (Debian's auth_pam_tool_dir is mysql's own)
        check_input(plugin, f"{what} plugin folder", trust, files=True)
    for sub in MESSAGES_SUBDIRS:
        messages = os.path.join(tree.basedir, sub)
        if not os.path.isfile(os.path.join(messages, "english", "errmsg.sys")):
            continue
        check_input(messages, f"{what} messages folder", trust, files=True)
        for entry in ("english", "charsets"):
            check_input(os.path.join(messages, entry), f"{what} messages folder", trust,
                        tree=True)
        break


def discover(basedir: str, tool_overrides: dict[str, str] | None = None,
             trust: Trust | None = None) -> CodeTree:
    """Search basedir for every tool; raise CodeTreeError if there is no server, and
    UntrustedPathError (before any of its programs runs) when the tree's parts fail
    the trust rule (:func:`check_tree_parts`; trust: what the user trusts on purpose)."""
    given = os.path.abspath(os.path.expanduser(basedir))
    check_input(given, "--basedir", trust)
    if not os.path.isdir(given):
        raise CodeTreeError(f"--basedir {given} is not a directory")
    basedir = install_prefix(given)
    tree = CodeTree(basedir=basedir, given=given)
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
    check_tree_parts(tree, trust)
    tree.version = read_server_version(tree.server)
    if tree.initializer() == "install-db" and "install_db" not in tree.tools:
        raise CodeTreeError(f"no datadir initialiser (mariadb-install-db or mysql_install_db) "
                            f"under --basedir {basedir} (searched: "
                            f"{', '.join(_search_dirs(basedir)) or basedir})")
    return tree
