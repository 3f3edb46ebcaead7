"""Resolve an option name the way the server's my_getopt does.

For ``--<written>[=value]`` mysqld (MariaDB's ``handle_options``/``findopt``):

1. compares names with ``-`` and ``_`` alike, ignoring case;
2. takes an exact name if there is one, else the one name the written text is
   a prefix of (``--bind`` is ``--bind-address``); two or more candidates are
   an "ambiguous option" error, even for ``loose-`` options;
3. when nothing matches, strips one special prefix (``skip``, ``disable``,
   ``enable``, ``maximum``, ``loose``, ``autoset`` followed by ``-`` or ``_``)
   and tries again; prefixes chain in any order (``--skip-loose-log-bin``).

``skip-``/``disable-`` set the option to 0 (1 if the value given was 0),
``enable-`` the other way round; ``maximum-`` sets the limit for SET GLOBAL;
``loose-`` only turns "unknown option" into a warning.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Collection

SPECIAL_PREFIXES = ("skip", "disable", "enable", "maximum", "loose", "autoset")
NEGATING = frozenset({"skip", "disable"})


@dataclass(frozen=True)
class Resolution:
    """What a written option name means to one server binary.

    ``name`` is the option it resolves to (None when unknown or ambiguous);
    ``prefixes`` the special prefixes stripped on the way, in order;
    ``candidates`` the names an ambiguous prefix matches.
    """

    written: str
    name: str | None
    prefixes: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()

    @property
    def ambiguous(self) -> bool:
        """True when the server would refuse the name as an ambiguous prefix."""
        return len(self.candidates) > 1

    @property
    def abbreviated(self) -> bool:
        """True when the name was not written out in full (a prefix was expanded)."""
        stem = self.written
        for prefix in self.prefixes:
            stem = stem[len(prefix) + 1:]
        return self.name is not None and stem != self.name

    @property
    def loose(self) -> bool:
        """True when a ``loose-`` prefix makes an unknown name a warning only."""
        return "loose" in self.prefixes

    @property
    def value_prefixes(self) -> tuple[str, ...]:
        """The prefixes that change the value (all but ``loose``)."""
        return tuple(p for p in self.prefixes if p != "loose")

    def effective_value(self, value: str | None) -> str | None:
        """The value the server ends up with, as far as the prefixes decide it.

        ``maximum-`` only sets the limit for SET GLOBAL: the value is untouched (None).
        """
        if "maximum" in self.prefixes:
            return None
        flips = [p for p in self.prefixes if p in NEGATING or p == "enable"]
        if not flips:
            return value
        last = flips[-1]
        off = value == "0"
        if last in NEGATING:
            return "1" if off else "0"
        return "0" if off else "1"


def find(pattern: str, names: Collection[str]) -> tuple[str, ...]:
    """findopt: the exact name, else every name that starts with pattern (sorted)."""
    if pattern in names:
        return (pattern,)
    return tuple(sorted(n for n in names if n.startswith(pattern)))


def resolve(written: str, names: Collection[str]) -> Resolution:
    """Resolve a written name (``-`` spelling, lower case, ``loose-`` included)."""
    written = written.lower().replace("_", "-")
    prefixes: list[str] = []
    rest = written
    while True:
        found = find(rest, names)
        if len(found) == 1:
            return Resolution(written, found[0], tuple(prefixes))
        if found:
            return Resolution(written, None, tuple(prefixes), found)
        for prefix in SPECIAL_PREFIXES:
            if rest.startswith(prefix + "-"):
                prefixes.append(prefix)
                rest = rest[len(prefix) + 1:]
                break
        else:
            return Resolution(written, None, tuple(prefixes))
