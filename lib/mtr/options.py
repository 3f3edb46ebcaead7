"""mysqld command-line arguments (as mtr builds them) as kewpie :class:`Option` lists.

The list keeps every option in mtr's order, repeats included (mysqld applies
them in order: ``plugin-load`` after ``plugin-load-add`` resets the list, a
later value wins); :class:`lib.mtr.server.MtrServer` writes them so.
A short option (``-V10.2.1-MariaDB``) cannot go into my.cnf: it becomes an
option whose name starts with ``-``, which MtrServer passes on the command
line.  ``skip-name-resolve``, which kewpie sets for its own servers, is turned
off: mtr's servers resolve names.
"""
from __future__ import annotations

from types import MappingProxyType

from ..errors import SuiteError
from ..servers.options import LINE_BREAKS, Option, normalise_name

KEWPIE_ONLY = (Option("skip-name-resolve", "0"),)


def parse_arg(arg: str) -> Option:
    """One ``--name[=value]`` argument (SuiteError for anything else)."""
    text = arg.strip()
    if text.startswith("-") and not text.startswith("--") and len(text) > 1:
        return Option(name=text, value=None, text=text)  # a short option: command line only
    if not text.startswith("--"):
        raise SuiteError(f"server option {arg!r}: only -x and --name[=value] are supported")
    name, sep, value = text[2:].partition("=")
    name = normalise_name(name)
    loose = name.startswith("loose-")
    if loose:
        name = name[len("loose-"):]
    if not name or any(c in LINE_BREAKS for c in value):
        raise SuiteError(f"server option {arg!r} is not usable")
    return Option(name=name, value=value if sep else None, loose=loose, text=text)


def to_options(args: list[str] | None, defaults: bool = True) -> list[Option]:
    """args as Options in their order (repeats kept), after kewpie's name-resolution
    default is switched off (defaults)."""
    return [*(KEWPIE_ONLY if defaults else ()), *(parse_arg(arg) for arg in args or [])]


WILDCARDS = MappingProxyType({"*": "::1,127.0.0.1", "::": "::1,127.0.0.1",
                              "0.0.0.0": "127.0.0.1"})


def loopback_only(options: list[Option]) -> list[Option]:
    """options with every wildcard ``bind-address`` (``*``, ``::``, ``0.0.0.0``) narrowed
    to the loopback addresses of the same families: a test that listens everywhere
    to connect over 127.0.0.1 and ::1 still can, and nothing listens beyond them."""
    out = []
    for opt in options:
        if opt.name == "bind-address" and (opt.value or "").strip() in WILDCARDS:
            opt = Option(opt.name, WILDCARDS[(opt.value or "").strip()], opt.loose, opt.text)
        out.append(opt)
    return out
