"""kewpie.toml: config files with named profiles, merged under the command line.

A run's settings come from four places, each overriding the one before it
(docs/configuration.md):

1. the defaults (``RunConfig``'s, as ``--help`` shows them);
2. the ``[defaults]`` tables of the config files;
3. the ``[profiles.NAME]`` tables of the profile ``--profile NAME`` picks;
4. the environment (``KEWPIE_HISTORY_DSN``: a secret kept off the command line);
5. the command line.

The config files are ``kewpie.toml`` in the run root (the checkout, or the
current directory for an installed kewpie) and ``kewpie.toml`` in each
``--suitepath`` directory given on the command line; ``--config FILE`` reads
that file instead and ``--no-config`` none.  Between files, the one nearer the
suites wins: a ``--suitepath`` directory's over the run root's, and the first
``--suitepath``'s over later ones (the order suites are looked up in).

Keys are the long options without their dashes, spelt with ``-`` or ``_``
(``test-timeout`` or ``test_timeout``).  Every on/off option is a boolean
(``force = true``; ``no-shm = true`` is ``shm = false``); a repeatable option
takes an array (or one string); the others a string or a number as the
option does.  Relative paths in a file are taken from the file's folder.

A file that holds a password (a DSN's, ``history-dsn = "mysql://u:PASSWORD@..."``) is
refused when its group or others may read it, as libpq refuses such a ``~/.pgpass``;
``--list-options`` shows every secret as ``***`` (lib/platform/secrets.py).

This module knows nothing of kewpie's options: the command line hands it the
argparse parser, and it reads the options' kinds from there.
"""
from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from ..errors import UsageError
from ..platform.secrets import exposed_secret, has_url_password, readers, redact
from ..platform.usertrust import SAFE_DIRECTORIES, user_config_path

CONFIG_NAME = "kewpie.toml"
TOP_TABLES = ("defaults", "profiles")
# What a user trusts on purpose is theirs to say, never a kewpie.toml's
# (lib/platform/usertrust.py): these keys get that answer, not "unknown key".
TRUST_KEYS = ("trust", SAFE_DIRECTORIES)
COMMAND_LINE = "command line"
DEFAULT = "default"


class Kind(StrEnum):
    """How a config file writes an option's value."""

    flag = "flag"      # on/off (--force / --no-force): a TOML boolean
    value = "value"    # one value: a TOML string or number
    values = "values"  # a repeatable option: a TOML array (or one string)


@dataclass(frozen=True)
class OptionSpec:
    """One long option as a config file may set it: the key is the option without
    its dashes (``test-timeout``)."""

    key: str
    dest: str
    kind: Kind
    value_type: type = str               # int, float or str (values and their items)
    choices: tuple[str, ...] = ()
    negated: bool = False                # the "no-" form of an on/off option
    path: bool = False                   # relative values are taken from the file's folder
    comma_list: bool = False             # "a,b" is two values (split before paths resolve)


@dataclass(frozen=True)
class Setting:
    """One option's value and where it came from (``default``, ``command line`` or
    ``FILE: [TABLE] KEY``)."""

    value: Any
    source: str = DEFAULT

    @property
    def from_file(self) -> bool:
        """Whether a config file set it."""
        return self.source not in (DEFAULT, COMMAND_LINE)


@dataclass(frozen=True)
class ConfigFile:
    """One read and checked config file: its ``[defaults]`` and its profiles, as
    settings by argparse dest."""

    path: str
    defaults: Mapping[str, Setting]
    profiles: Mapping[str, Mapping[str, Setting]]


@dataclass(frozen=True)
class Resolved:
    """Every setting of a run by argparse dest, the files read (weakest first) and the
    profile picked."""

    settings: Mapping[str, Setting]
    files: tuple[str, ...]
    profile: str | None

    def namespace(self) -> argparse.Namespace:
        """The settings as argparse would have parsed them."""
        return argparse.Namespace(**{dest: s.value for dest, s in self.settings.items()})


def option_specs(parser: argparse.ArgumentParser, *, not_in_files: Iterable[str] = (),
                 paths: Iterable[str] = (), comma_lists: Iterable[str] = ()
                 ) -> Mapping[str, OptionSpec]:
    """The options a config file may set, by key.  ``not_in_files`` are dests of
    options that only the command line takes (``--config``, ``--profile``...);
    ``paths`` and ``comma_lists`` are keys.  ValueError for an option kind this
    module cannot read (a new kind of option needs a rule here)."""
    skip, path_keys, comma_keys = set(not_in_files), set(paths), set(comma_lists)
    specs: dict[str, OptionSpec] = {}
    for action in parser._actions:  # noqa: SLF001 - argparse's one list of its options
        if not action.option_strings or action.dest in skip or \
                isinstance(action, argparse._HelpAction):  # noqa: SLF001
            continue
        longs = [o for o in action.option_strings if o.startswith("--")]
        if isinstance(action, argparse.BooleanOptionalAction):
            for option in longs:
                negated = option.startswith("--no-") and "--" + option[5:] in longs
                specs[option[2:]] = OptionSpec(option[2:], action.dest, Kind.flag,
                                               bool, negated=negated)
            continue
        if isinstance(action, argparse._AppendAction):  # noqa: SLF001
            kind = Kind.values
        elif type(action) is argparse._StoreAction and action.nargs is None:  # noqa: SLF001
            kind = Kind.value
        else:
            raise ValueError(f"{longs}: a config file cannot set a {type(action).__name__}")
        value_type = action.type if action.type in (int, float) else str
        for option in longs:
            key = option[2:]
            specs[key] = OptionSpec(key, action.dest, kind, value_type,
                                    tuple(action.choices or ()), path=key in path_keys,
                                    comma_list=key in comma_keys)
    return MappingProxyType(specs)


def find_config_files(explicit: str | None, suitepaths: Sequence[str], root: str,
                      read_none: bool = False) -> list[str]:
    """The config files a run reads, weakest first: ``explicit`` alone when given;
    else the run root's ``kewpie.toml`` and then each suite path's, the first
    suite path last (strongest); only those that exist."""
    if read_none:
        return []
    if explicit:
        return [os.path.abspath(explicit)]
    found: list[str] = []
    for folder in [root, *reversed(suitepaths)]:
        path = os.path.join(os.path.abspath(folder), CONFIG_NAME)
        if os.path.isfile(path):
            real = os.path.realpath(path)
            found = [p for p in found if os.path.realpath(p) != real] + [path]
    return found


def read_config_file(path: str, specs: Mapping[str, OptionSpec]) -> ConfigFile:
    """Read and check one config file; UsageError (one line naming the file and, when
    there is one, the key) for a file that is missing, not TOML, or sets an unknown
    key, a value of the wrong type or outside the option's choices."""
    import tomllib  # only when a file exists: --help stays fast

    try:
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode  # the file read, not a name's later target
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such config file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the config file: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    folder = os.path.dirname(os.path.abspath(path))
    for key, value in data.items():
        if key not in TOP_TABLES:
            hint = (f"; put settings under [defaults] or [profiles.NAME]"
                    if _spec_for(key, specs) is not None else
                    "; a config file has only [defaults] and [profiles.NAME] tables")
            raise UsageError(f"{path}: unknown key {key!r} at the top level{hint}")
        if not isinstance(value, dict):
            raise UsageError(f"{path}: {key} must be a table ([{key}]), not {_toml(value)}")
    defaults = _read_table(path, "defaults", data.get("defaults", {}), specs, folder)
    profiles: dict[str, Mapping[str, Setting]] = {}
    for name, table in data.get("profiles", {}).items():
        if not isinstance(table, dict):
            raise UsageError(f"{path}: profiles.{name} must be a table ([profiles.{name}]), "
                             f"not {_toml(table)}")
        profiles[name] = _read_table(path, f"profiles.{name}", table, specs, folder)
    if readers(mode):
        _check_private(path, mode, [defaults, *profiles.values()])
    return ConfigFile(path, defaults, MappingProxyType(profiles))


def _check_private(path: str, mode: int, tables: Sequence[Mapping[str, Setting]]) -> None:
    """UsageError when a file others may read holds a password (a URL's)."""
    for table in tables:
        for setting in table.values():
            if _has_url_password(setting.value):
                raise UsageError(exposed_secret(setting.source, path, mode))


def _has_url_password(value: Any) -> bool:
    """Whether a setting's value holds a URL with a password."""
    items = value if isinstance(value, list) else [value]
    return any(isinstance(item, str) and has_url_password(item) for item in items)


def resolve(defaults: Mapping[str, Any], given: Mapping[str, Any], files: Sequence[ConfigFile],
            profile: str | None, environment: Mapping[str, Setting] = MappingProxyType({})
            ) -> Resolved:
    """Merge, each over the one before: ``defaults``, every file's ``[defaults]``,
    every file's ``[profiles.<profile>]`` (files weakest first), ``environment``
    (settings the environment gave, by dest) and ``given`` (what the command line
    set).  UsageError for a profile no file has."""
    settings: dict[str, Setting] = {dest: Setting(value) for dest, value in defaults.items()}
    for config in files:
        settings.update(config.defaults)
    if profile:
        having = [config for config in files if profile in config.profiles]
        if not having:
            raise UsageError(_unknown_profile(profile, files))
        for config in having:
            settings.update(config.profiles[profile])
    settings.update(environment)
    settings.update((dest, Setting(value, COMMAND_LINE)) for dest, value in given.items())
    return Resolved(MappingProxyType(settings), tuple(c.path for c in files), profile)


def format_settings(resolved: Resolved, groups: Sequence[tuple[str, Sequence[tuple[str, str]]]]
                    ) -> str:
    """``--list-options``' text: the files and profile, then per group each option
    (label, dest) with its value, as a config file would write it (its secrets as
    ``***``), and its source."""
    files = ", ".join(resolved.files) or "none"
    lines = [f"# config files (weakest first): {files}",
             f"# profile: {resolved.profile or 'none'}",
             "# order: default < [defaults] < [profiles.NAME] < environment < command line"]
    width = max((len(label) for _, rows in groups for label, _ in rows), default=10) + 2
    values = [_toml(redact(s.value)) for s in resolved.settings.values()]
    value_width = min(max((len(v) for v in values), default=10), 36)
    for title, rows in groups:
        shown = [(label, resolved.settings[dest]) for label, dest in rows
                 if dest in resolved.settings]
        if not shown:
            continue
        lines.append(f"{title}:")
        for label, setting in shown:
            value = _toml(redact(setting.value))
            lines.append(f"  {label:<{width}}{value:<{value_width}}  {setting.source}")
    return "\n".join(lines)


def _spec_key(key: str) -> str:
    return key.lstrip("-").replace("_", "-")


def _spec_for(key: str, specs: Mapping[str, OptionSpec]) -> OptionSpec | None:
    return specs.get(_spec_key(key))


def _read_table(path: str, table: str, values: Mapping[str, Any],
                specs: Mapping[str, OptionSpec], folder: str) -> Mapping[str, Setting]:
    """One table's settings by dest (an option set twice in one table is an error)."""
    out: dict[str, Setting] = {}
    keys: dict[str, str] = {}
    for key, value in values.items():
        where = f"{path}: [{table}] {key}"
        spec = _spec_for(key, specs)
        if spec is None and _spec_key(key) in TRUST_KEYS:
            raise UsageError(f"{where}: trust is never taken from a kewpie.toml (a file "
                             f"in the folder it would trust): --trust PATH on the command "
                             f"line, or safe-directories in your own {user_config_path()} "
                             f"(docs/configuration.md)")
        if spec is None:
            raise UsageError(f"{where}: unknown key: not a long option of kewpie.py "
                             f"({_suggest(key, specs)}see --help)")
        if spec.dest in keys:
            raise UsageError(f"{where}: sets the same option as {keys[spec.dest]!r}")
        keys[spec.dest] = key
        out[spec.dest] = Setting(_convert(spec, value, where, folder), where)
    return MappingProxyType(out)


def _convert(spec: OptionSpec, value: Any, where: str, folder: str) -> Any:
    """A file's value as argparse would have stored it for the command line."""
    if spec.kind is Kind.flag:
        if not isinstance(value, bool):
            raise UsageError(f"{where} = {_toml(value)}: must be true or false")
        return value != spec.negated
    if spec.kind is Kind.values:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise UsageError(f"{where} = {_toml(value)}: must be a string or an array of "
                             f"strings")
        if spec.path:
            if spec.comma_list:
                items = [p.strip() for i in items for p in i.split(",") if p.strip()]
            items = [_path(i, folder) for i in items]
        return list(items)
    return _scalar(spec, value, where, folder)


def _scalar(spec: OptionSpec, value: Any, where: str, folder: str) -> Any:
    """One value of the option's type (a whole number is also a number, and for a
    string option its text: ``randgen-seed = 7``)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if spec.value_type is int and isinstance(value, int) and not isinstance(value, bool):
        converted: Any = value
    elif spec.value_type is float and number:
        converted = float(value)
    elif spec.value_type is str and (isinstance(value, str) or (number and isinstance(value, int))):
        converted = str(value)
    else:
        wanted = {int: "a whole number", float: "a number"}.get(spec.value_type, "a string")
        raise UsageError(f"{where} = {_toml(value)}: must be {wanted}")
    if spec.choices and converted not in spec.choices:
        raise UsageError(f"{where} = {_toml(value)}: must be one of "
                         f"{', '.join(map(str, spec.choices))}")
    if spec.path and converted:
        converted = _path(converted, folder)
    return converted


def _path(value: str, folder: str) -> str:
    return os.path.join(folder, os.path.expanduser(value))  # an absolute value stays


def _suggest(key: str, specs: Mapping[str, OptionSpec]) -> str:
    import difflib   # only for a misspelt key: not on every command's path
    close = difflib.get_close_matches(key.replace("_", "-"), list(specs), n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def _unknown_profile(profile: str, files: Sequence[ConfigFile]) -> str:
    if not files:
        return (f"--profile {profile}: no config file was read (none named {CONFIG_NAME} in "
                f"the run root or the --suitepath directories; --config FILE names one)")
    names = sorted({name for config in files for name in config.profiles})
    return (f"--profile {profile}: no [profiles.{profile}] in "
            f"{', '.join(c.path for c in files)} (profiles: {', '.join(names) or 'none'})")


def _toml(value: Any) -> str:
    """A value as a TOML file writes it (for messages and --list-options)."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return "{...}"
    return json.dumps(value) if isinstance(value, str) else str(value)
