"""Search input as the cross-reference takes it: patterns (``*`` any text, ``?`` one
character) and times (a date or an age).

A pattern becomes a SQL ``LIKE`` (with ``%`` and ``_`` of the text escaped) plus, when
it starts with plain text, a range on that prefix, so that a server and SQLite walk
an index instead of every row.  A pattern without ``*`` or ``?`` matches the whole
value, except in failure texts, where it matches anywhere (``timeout`` is
``*timeout*``); a failure pattern with wildcards matches any line of the text
(:func:`matches_line`: ``AssertionError: *`` finds the line, wherever it is).
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from types import MappingProxyType

from sqlalchemy import ColumnElement, and_, or_
from sqlalchemy.sql.elements import ColumnClause

from .errors import HistoryUsageError
from .records import utcnow

RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)([mhdw])$")
UNITS = MappingProxyType({"m": "minutes", "h": "hours", "d": "days", "w": "weeks"})
ESCAPE = "\\"
MAX_PATTERN = 200


def has_wildcards(pattern: str) -> bool:
    """True when the pattern has ``*`` or ``?``."""
    return "*" in pattern or "?" in pattern


def to_like(pattern: str) -> str:
    """The LIKE text of a pattern (``*`` -> ``%``, ``?`` -> ``_``, the rest literal)."""
    out = []
    for char in pattern:
        if char == "*":
            out.append("%")
        elif char == "?":
            out.append("_")
        elif char in ("%", "_", ESCAPE):
            out.append(ESCAPE + char)
        else:
            out.append(char)
    return "".join(out)


def literal_prefix(pattern: str) -> str:
    """The plain text a pattern starts with (before its first wildcard)."""
    for index, char in enumerate(pattern):
        if char in "*?":
            return pattern[:index]
    return pattern


def check(pattern: str, what: str) -> str:
    """The pattern, stripped; HistoryUsageError when it is too long to be a name."""
    pattern = pattern.strip()
    if len(pattern) > MAX_PATTERN:
        raise HistoryUsageError(f"{what} pattern longer than {MAX_PATTERN} characters")
    return pattern


def prefix_range(column: ColumnClause[str] | ColumnElement[str], prefix: str
                 ) -> ColumnElement[bool]:
    """column starts with prefix, as a range an index walks."""
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return and_(column >= prefix, column < upper)


def matches(column: ColumnClause[str] | ColumnElement[str], pattern: str,
            anywhere: bool = False, use_range: bool = True) -> ColumnElement[bool]:
    """The condition 'column matches pattern' (anywhere: a plain pattern matches inside;
    use_range=False leaves out the prefix's range, for a prefix so common that walking
    the rows newest first finds a page sooner than sorting every match)."""
    if not has_wildcards(pattern):
        if anywhere:
            return column.like(f"%{to_like(pattern)}%", escape=ESCAPE)
        return column == pattern
    condition: ColumnElement[bool] = column.like(to_like(pattern), escape=ESCAPE)
    prefix = literal_prefix(pattern)
    if prefix and use_range:  # an index range the LIKE alone would not give
        condition = and_(prefix_range(column, prefix), condition)
    return condition


def matches_line(column: ColumnClause[str] | ColumnElement[str], pattern: str
                 ) -> ColumnElement[bool]:
    """The condition 'a line of column's text matches pattern' (a plain pattern: the
    text holds it anywhere): the pattern's start at the text's start or after a newline,
    its end at the text's end or before one."""
    if not has_wildcards(pattern):
        return column.like(f"%{to_like(pattern)}%", escape=ESCAPE)
    like = to_like(pattern)
    starts = (like, f"%\n{like}") if not like.startswith("%") else (like,)
    shapes = [s + end for s in starts for end in ("", "" if like.endswith("%") else "\n%")]
    return or_(*(column.like(shape, escape=ESCAPE) for shape in dict.fromkeys(shapes)))


def parse_when(text: str) -> datetime | None:
    """A time in UTC: ``2026-11-25``, ``2026-11-25 18:30`` (ISO), or an age: ``30m``,
    ``12h``, ``7d``, ``2w`` before now; None for ''; HistoryUsageError otherwise."""
    text = text.strip()
    if not text:
        return None
    age = RELATIVE.match(text)
    if age:
        return utcnow() - timedelta(**{UNITS[age.group(2)]: float(age.group(1))})
    try:
        return datetime.fromisoformat(text.replace("T", " ")).replace(tzinfo=None)
    except ValueError:
        raise HistoryUsageError(f"{text!r}: expected a date (2026-11-25, 2026-11-25 18:30) or "
                                f"an age (30m, 12h, 7d, 2w)") from None
