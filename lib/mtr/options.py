"""mysqld command-line arguments (as mtr builds them) as kewpie :class:`Option` lists.

mysqld reads options in order and the last one of a name wins, except
``plugin-load-add`` (each adds plugins) and ``optimizer-switch`` (each
changes some flags): those are joined into one option, so kewpie's
last-wins merge keeps what mysqld would.  ``skip-name-resolve``, which kewpie
sets for its own servers, is turned off: mtr's servers resolve names.
"""
from __future__ import annotations

from types import MappingProxyType

from lib.errors import SuiteError
from lib.servers.options import LINE_BREAKS, Option, normalise_name

JOINED = MappingProxyType({"plugin-load-add": ";", "optimizer-switch": ","})
KEWPIE_ONLY = (Option("skip-name-resolve", "0"),)


def parse_arg(arg: str) -> Option:
    """One ``--name[=value]`` argument (SuiteError for anything else)."""
    text = arg.strip()
    if not text.startswith("--"):
        raise SuiteError(f"server option {arg!r}: only --name[=value] is supported")
    name, sep, value = text[2:].partition("=")
    name = normalise_name(name)
    loose = name.startswith("loose-")
    if loose:
        name = name[len("loose-"):]
    if not name or any(c in LINE_BREAKS for c in value):
        raise SuiteError(f"server option {arg!r} is not usable")
    return Option(name=name, value=value if sep else None, loose=loose, text=text)


def to_options(args: list[str] | None) -> list[Option]:
    """args as Options, with repeated plugin-load-add/optimizer-switch joined, after
    kewpie's name-resolution default is switched off."""
    out: list[Option] = list(KEWPIE_ONLY)
    joined: dict[str, int] = {}
    for arg in args or []:
        opt = parse_arg(arg)
        sep = JOINED.get(opt.name)
        if sep and opt.value and opt.name in joined:
            previous = out[joined[opt.name]]
            value = f"{previous.value}{sep}{opt.value}" if previous.value else opt.value
            out[joined[opt.name]] = Option(opt.name, value, previous.loose and opt.loose, opt.text)
            continue
        if sep:
            joined[opt.name] = len(out)
        out.append(opt)
    return out
