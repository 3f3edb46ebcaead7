"""The option names a server binary accepts, learnt from the server itself and cached.

``<server> --no-defaults --verbose --help`` lists every option the server
(and its compiled-in plugins) takes, one ``--name`` per entry.  We run it
(:mod:`lib.servers.help_probe`: with a throwaway datadir in the workdir) once
per binary and keep the names as JSON, keyed by the binary's real path, size
and mtime, so a rebuilt or upgraded server is asked again.  The names are
what :mod:`lib.servers.option_names` resolves abbreviations and prefixes against.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass

from ..errors import CodeTreeError
from ..platform.safedirs import make_temp_file
from .help_probe import server_help

HELP_TIMEOUT = 60.0
CACHE_PREFIX = "server-options-"
FORMAT = 1
# "  --name[=#]  text" or "  -P, --port=#  text" in the first part of the help.
_HELP_OPTION = re.compile(r"^  (?:-\S, )?--([A-Za-z0-9_.-]+)", re.M)
# The variables table after the option list: those names are not all options.
_TABLE_START = re.compile(r"^Variables \(--variable-name=value\)", re.M)


@dataclass(frozen=True)
class OptionCatalog:
    """Every option name one server binary accepts (``-`` spelling, lower case)."""

    server: str
    names: frozenset[str]

    def __contains__(self, name: object) -> bool:
        return name in self.names


def parse_help(text: str) -> frozenset[str]:
    """The option names in ``--verbose --help`` output (the variables table is ignored)."""
    options_part = _TABLE_START.split(text, maxsplit=1)[0]
    return frozenset(m.group(1).lower().replace("_", "-") for m in _HELP_OPTION.finditer(options_part))


def cache_key(server: str) -> str:
    """A short hash of the binary's identity: real path, size and mtime."""
    real = os.path.realpath(server)
    st = os.stat(real)
    return hashlib.sha1(f"{real}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]


def ask_server(server: str, scratch_parent: str | None = None) -> frozenset[str]:
    """Run the server's ``--no-defaults --verbose --help`` (its throwaway datadir under
    scratch_parent, see :mod:`lib.servers.help_probe`) and parse the option names."""
    try:
        proc = server_help(server, scratch_parent, HELP_TIMEOUT)
    except OSError as exc:
        raise CodeTreeError(f"cannot list the options of {server}: {exc}") from None
    if proc.timed_out:
        raise CodeTreeError(f"cannot list the options of {server}: no answer within "
                            f"{HELP_TIMEOUT} s")
    names = parse_help(proc.stdout)
    if proc.returncode != 0 or len(names) < 50:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise CodeTreeError(f"cannot list the options of {server} (--verbose --help exited "
                            f"with status {proc.returncode}: {last})")
    return names


def _read_cache(path: str, server: str) -> frozenset[str] | None:
    try:
        with open(path) as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if (not isinstance(data, dict) or data.get("format") != FORMAT
            or data.get("server") != os.path.realpath(server)
            or not isinstance(data.get("names"), list)):
        return None
    return frozenset(str(n) for n in data["names"])


def _write_cache(path: str, server: str, names: frozenset[str]) -> None:
    """Write atomically (another bot may read it meanwhile); a failure only costs speed."""
    directory = os.path.dirname(path)
    try:
        fd, tmp = make_temp_file(directory, ".options-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump({"format": FORMAT, "server": os.path.realpath(server),
                       "names": sorted(names)}, fh)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def cache_path(server: str, cache_dir: str) -> str:
    """Where the catalog of this binary is kept in cache_dir."""
    return os.path.join(cache_dir, f"{CACHE_PREFIX}{cache_key(server)}.json")


def load_catalog(server: str, cache_dir: str | None = None) -> OptionCatalog:
    """The server's option names: from cache_dir when known there, else asked and cached."""
    path = cache_path(server, cache_dir) if cache_dir and os.path.isdir(cache_dir) else None
    names = _read_cache(path, server) if path else None
    if names is None:
        names = ask_server(server, cache_dir)
        if path:
            _write_cache(path, server, names)
    return OptionCatalog(server=server, names=names)
