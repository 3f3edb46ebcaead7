"""mysql-test-run's config files: groups of options, ``!include``, ``#!`` magic lines and
``@group.option`` references (``@mysqld.1.port``, ``@ENV.MYSQLTEST_VARDIR``).

A suite's ``my.cnf`` (or a test's ``.cnf``, or ``include/default_my.cnf``) is a
template: :class:`MtrConfig` reads it as mtr's My::Config does (an option set
twice in a group keeps its first position and takes the later value, except
``plugin-load-add`` and ``optimizer-switch``, which may repeat), kewpie fills
in what mtr would generate for each ``[mysqld.N]`` (paths, ports, server ids:
the rule tables of :mod:`lib.mtr.config`) and then resolves the references.
Its groups are the one my.cnf model's (:class:`lib.servers.cnf.CnfGroup`).  The
result is written as the ``my.cnf`` that mariadb-test and the client tools read,
and flattened into each server's option list (:meth:`MtrConfig.server_options`).
"""
from __future__ import annotations

import os
import re

from ..errors import SuiteError
from ..servers.cnf import CnfGroup

SPECIAL_GROUPS = frozenset({"ENV", "OPT"})
# Groups mariadbd reads (each also with the server's suffix, ``.1``).
SERVER_GROUPS = ("mysqld", "server", "mariadb", "mariadbd", "mysqld-10.11", "mariadb-10.11",
                 "client-server")
REFERENCE = re.compile(r"@((?:\w+\.)+)(#?[-\w]+)")


def end_comment_removed(value: str) -> str:
    """A value without its end comment, as mysqld's option-file reader cuts it (its
    remove_end_comment: a ``#`` outside quotes starts a comment): mtr keeps
    ``wsrep_sync_wait=6 # why`` whole in the my.cnf it writes, where mysqld drops the
    comment (galera_3nodes.MDEV-38147)."""
    quote, escape = "", False
    for index, char in enumerate(value):
        if char in "'\"" and not escape:
            quote = "" if quote == char else (quote or char)
        if not quote and char == "#":
            return value[:index].rstrip()
        escape = bool(quote) and char == "\\" and not escape
    return value


def _strip_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


class MtrConfig:
    """A parsed mtr config: ordered groups, ``[ENV]`` and ``[OPT]`` included."""

    def __init__(self) -> None:
        self.groups: list[CnfGroup] = [CnfGroup("ENV"), CnfGroup("OPT")]
        self.port_pool: list[int] = []  # what each @OPT.port hands out, in turn

    @classmethod
    def read(cls, path: str, search_dirs: tuple[str, ...] = ()) -> "MtrConfig":
        """Read path and what it includes (relative to the including file, else to the
        search directories, as mtr tries its own directory)."""
        config = cls()
        config._read(path, search_dirs, depth=0)
        return config

    def group(self, name: str, create: bool = False) -> CnfGroup | None:
        """The group called name (created at the end when create)."""
        for group in self.groups:
            if group.name == name:
                return group
        if not create:
            return None
        group = CnfGroup(name)
        self.groups.append(group)
        return group

    def like(self, prefix: str) -> list[CnfGroup]:
        """Groups whose name starts with prefix (``mysqld.`` for the servers), in order."""
        return [g for g in self.groups if g.name.startswith(prefix)]

    def servers(self) -> list[CnfGroup]:
        """The ``[mysqld.N]`` groups in file order."""
        return [g for g in self.like("mysqld.") if g.name[len("mysqld."):].isdigit()]

    def _read(self, path: str, search_dirs: tuple[str, ...], depth: int) -> None:
        if depth > 10:
            raise SuiteError(f"{path}: !include nested too deeply")
        try:
            with open(path, errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError as exc:
            raise SuiteError(f"cannot read mtr config {path}: {exc.strerror}") from None
        current: CnfGroup | None = None
        for number, raw in enumerate(lines, start=1):
            line = raw.rstrip("\r").strip()
            if not line:
                continue
            if line.startswith("["):
                end = line.find("]")
                current = self.group(line[1:end].strip(), create=True)
                continue
            if line.startswith("#!"):
                if current is None:
                    raise SuiteError(f"{path}:{number}: magic comment outside a group")
                magic, _, arg = line.partition(" ")
                current.insert(magic, arg.strip() or None)
                continue
            if line.startswith("!include"):
                self._include(path, line[len("!include"):].strip(), search_dirs, depth)
                continue
            if line.startswith("!includedir"):
                continue
            if line.startswith(";") or (line.startswith("#") and not re.match(r"#[\w-]+\s*(=|$)", line)):
                continue
            if current is None:
                raise SuiteError(f"{path}:{number}: option {line!r} outside a group")
            name, sep, value = line.partition("=")
            if sep and current.name not in SPECIAL_GROUPS:
                value = end_comment_removed(value)  # as mysqld reads its option files
            current.insert(name.strip(), _strip_quotes(value.strip()) if sep else None)

    def _include(self, path: str, name: str, search_dirs: tuple[str, ...], depth: int) -> None:
        candidates = [os.path.join(os.path.dirname(path), name), name,
                      *(os.path.join(d, name) for d in search_dirs)]
        for candidate in candidates:
            if os.path.isfile(candidate):
                self._read(candidate, search_dirs, depth + 1)
                return
        raise SuiteError(f"{path}: the included file {name} does not exist")

    # ------------------------------------------------------------------ references
    def resolve(self) -> None:
        """Replace every ``@group.option`` in values by that option's value (an unknown
        option gives '', as mtr does; an unknown group is an error)."""
        for group in self.groups:
            for option in group.options:
                self._resolve_option(option, group.name, 0)

    def _resolve_option(self, option: list[str | None], where: str, depth: int) -> str | None:
        value = option[1]
        if value and "@" in value:
            if depth > 10:
                raise SuiteError(f"mtr config: [{where}] {option[0]}: references loop")
            option[1] = value = self._substitute(value, where, depth)
        return value

    def _substitute(self, value: str, where: str, depth: int) -> str:
        def replace(match: re.Match[str]) -> str:
            """The value one reference stands for (@OPT.port: the next free port)."""
            group_name, option_name = match.group(1)[:-1], match.group(2)
            if group_name == "OPT" and option_name == "port" and self.port_pool:
                return str(self.port_pool.pop(0))
            group = self.group(group_name)
            if group is None:
                raise SuiteError(f"mtr config: [{where}] refers to @{group_name}.{option_name}, "
                                 f"but there is no group [{group_name}]")
            found = group.find(option_name)
            if found is None:
                return ""
            resolved = self._resolve_option(found, group_name, depth + 1)
            return "" if resolved is None else resolved
        return REFERENCE.sub(replace, value)

    # ------------------------------------------------------------------ outputs
    def render(self) -> str:
        """The config as mtr writes ``var/my.cnf`` (without ``[ENV]`` and ``[OPT]``)."""
        out: list[str] = []
        for group in self.groups:
            if group.name in SPECIAL_GROUPS:
                continue
            out.append(f"[{group.name}]")
            for name, value in group.options:
                out.append(str(name) if value is None else f"{name}={value}")
            out.append("")
        return "\n".join(out)

    def server_options(self, server_group: str) -> list[str]:
        """Every option mariadbd reads for ``[mysqld.N]`` (its groups in file order,
        with the suffix ``.N``), as ``--name[=value]``, magic and ``#`` lines left out."""
        suffix = server_group[len("mysqld"):]
        wanted = set(SERVER_GROUPS) | {g + suffix for g in SERVER_GROUPS}
        args: list[str] = []
        for group in self.groups:
            if group.name not in wanted:
                continue
            for name, value in group.options:
                if str(name).startswith("#"):
                    continue
                args.append(f"--{name}" if value is None else f"--{name}={value}")
        return args

    def env(self) -> dict[str, str]:
        """The ``[ENV]`` group: variables the test sees."""
        group = self.group("ENV")
        assert group is not None
        return {str(n): v or "" for n, v in group.options}
