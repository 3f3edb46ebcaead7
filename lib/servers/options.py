"""Server option lists: parsing, normalising and rendering into my.cnf.

Suites write options the way people type them on a command line:
``["--innodb-file-per-table", "--log-bin=mysql-bin"]``; kewpie's old suites
also put several options in one string (``"--a=1 --b=2"``).  We split those,
normalise names (``_`` and ``-`` are the same to mysqld) and keep order, so a
later option overrides an earlier one with the same name.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from ..errors import SuiteError

# Options whose value matters when a datadir is created: a pristine datadir is
# bootstrapped once per distinct set of these.
BOOTSTRAP_OPTIONS = frozenset({
    "innodb-page-size", "innodb-data-file-path", "innodb-undo-tablespaces",
    "lower-case-table-names", "innodb-checksum-algorithm", "innodb-log-file-size",
    "innodb-data-home-dir", "innodb-undo-directory", "character-set-server",
    "collation-server", "innodb-file-per-table",
})

# Options the harness owns; a suite cannot move them out of the workdir or off
# the loopback interface and its leased ports.  lib/servers/option_safety.py matches
# them as mysqld resolves names (prefixes, abbreviations); reject_owned only
# catches the names written in full, before the code tree is known.
HARNESS_OWNED = frozenset({
    "datadir", "port", "socket", "pid-file", "log-error", "tmpdir", "bind-address",
    "basedir", "user", "secure-file-priv", "wsrep-provider", "wsrep-sst-receive-address",
    "admin-address", "admin-port", "mysqlx", "mysqlx-bind-address", "mysqlx-port",
    "mysqlx-socket",
})
# Characters that would end a my.cnf line and start another option.
LINE_BREAKS = frozenset("\n\r\0")


@dataclass(frozen=True)
class Option:
    """One mysqld option: normalised name, optional value, and loose- prefix.

    ``text`` is the option as the suite wrote it, for error messages; it takes
    no part in comparisons.
    """

    name: str
    value: str | None = None
    loose: bool = False
    text: str = field(default="", compare=False, repr=False)

    def render(self) -> str:
        """The my.cnf line for this option."""
        name = ("loose-" if self.loose else "") + self.name
        if self.value is None:
            return name
        value = self.value
        if value == "" or any(c in value for c in " #;\"'\\"):
            value = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return f"{name}={value}"

    def as_arg(self) -> str:
        """The command-line form (``--name=value``)."""
        name = ("loose-" if self.loose else "") + self.name
        return f"--{name}" if self.value is None else f"--{name}={self.value}"


def normalise_name(name: str) -> str:
    """mysqld treats ``_`` and ``-`` alike in option names; we use ``-``."""
    return name.strip().lower().replace("_", "-")


def parse_option(text: str) -> Option:
    """Parse one ``--name[=value]`` token."""
    token = text.strip()
    if token.startswith("--"):
        token = token[2:]
    elif token.startswith("-"):
        raise SuiteError(f"server option {text!r}: use the long form --name[=value]")
    if not token:
        raise SuiteError(f"empty server option {text!r}")
    name, sep, value = token.partition("=")
    loose = False
    name = normalise_name(name)
    if name.startswith("loose-"):
        loose, name = True, name[len("loose-"):]
    if not name or not all(c.isalnum() or c in "-." for c in name):
        raise SuiteError(f"server option {text!r} has an invalid name")
    if any(c in LINE_BREAKS for c in value):
        raise SuiteError(f"server option {text!r}: a value cannot hold a line break")
    return Option(name=name, value=value if sep else None, loose=loose, text=text.strip())


def parse_options(items: list[str] | tuple[str, ...] | str) -> list[Option]:
    """Parse a list of option strings (each may hold several options)."""
    if isinstance(items, str):
        items = [items]
    result: list[Option] = []
    for item in items:
        if not isinstance(item, str):
            raise SuiteError(f"server option {item!r} is not a string")
        try:
            tokens = shlex.split(item)
        except ValueError as exc:
            raise SuiteError(f"server options {item!r}: {exc}") from exc
        result.extend(parse_option(tok) for tok in tokens)
    return result


def merge(*groups: list[Option]) -> list[Option]:
    """Merge option groups in order; a later option with the same name wins.

    The position of the first occurrence is kept so the file reads naturally.
    """
    order: list[str] = []
    latest: dict[str, Option] = {}
    for group in groups:
        for opt in group:
            key = opt.name
            if key not in latest:
                order.append(key)
            latest[key] = opt
    return [latest[k] for k in order]


def reject_owned(options: list[Option], where: str = "") -> None:
    """Raise SuiteError if a suite sets an option the harness owns (name in full)."""
    prefix = f"{where}: " if where else ""
    for opt in options:
        if opt.name in HARNESS_OWNED:
            shown = opt.text or opt.as_arg()
            raise SuiteError(f"{prefix}server option {shown!r}: --{opt.name} is set by kewpie "
                             f"for every server (it keeps servers in the workdir, on 127.0.0.1 "
                             f"and leased ports); remove it")


def bootstrap_subset(options: list[Option]) -> list[Option]:
    """The options that matter when a datadir is created."""
    return [o for o in options if o.name in BOOTSTRAP_OPTIONS]
