"""A wrong-result finding, and how result sets are rendered and compared.

:class:`WrongResult` is what every oracle returns (the interface the hunt
mode reads): the oracle, the query's shape, the exact SQL run and what each
statement returned, rendered, and a one-paragraph detail.

Result sets are compared as multisets of rows (:func:`multiset_difference`):
order never matters, duplicates do.  A value is rendered by
:func:`render_value`: ``NULL``, integers and decimals exactly, floats to
:data:`FLOAT_DIGITS` significant digits (so two servers that compute a
double in a different order still agree), strings as text (bytes that are not
printable UTF-8 in hex), temporal values in ISO form, a SET's members sorted.
A zero fraction of a second is no part of a temporal value's text: the
server's ``DATETIME``/``TIME`` values come without it, and a string that
holds one (``DATE_ADD`` of a string shows as many digits as its argument is
declared to have: ``'2004-12-09 12:30:00'`` or ``'2004-12-09
12:30:00.000000'``, depending on the argument's form) is shown without it too.
"""
from __future__ import annotations

import datetime
import decimal
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

FLOAT_DIGITS = 10
MAX_ROWS_SHOWN = 20
Row = tuple[str, ...]
_ZERO_FRACTION_RE = re.compile(r"^(-?(?:\d{4}-\d\d-\d\d )?\d{2,3}:\d\d:\d\d)\.0+$")


@dataclass(frozen=True)
class WrongResult:
    """One wrong-result finding.

    oracle: ``'norec'``, ``'tlp'`` or ``'differential'``; shape: the query's
    shape (:func:`~lib.hunt.wrongresult.shape.query_shape`: literals ``?``,
    names by role and type), stable across seeds and machines; queries: the
    exact SQL run, in order; results: what each query returned, rendered
    (same order as queries; for the differential oracle, one entry per
    server: ``'server N: ...'``); detail: what disagreed, in one paragraph;
    kind: ``'wrong-result'``, or ``'performance'`` for a CERT finding (an
    estimate that contradicts a restriction: never a wrong result); known: the
    name of the known bug of the server the oracle recognised it as ('' for a new
    one: :meth:`~lib.hunt.wrongresult.oracle.OracleBase.recognise`).
    """

    oracle: str
    shape: str
    queries: tuple[str, ...]
    results: tuple[str, ...]
    detail: str
    kind: str = "wrong-result"  # 'performance' for CERT's (a row estimate, not a result)
    known: str = ""  # the known bug the oracle recognised it as (CERT's cert-range-keypart)

    def to_json(self) -> dict[str, Any]:
        """A JSON-friendly dict (lists for the tuples)."""
        d = asdict(self)
        d["queries"] = list(self.queries)
        d["results"] = list(self.results)
        return d

    def summary(self) -> str:
        """A few lines: the oracle and detail, then each query with its result."""
        lines = [f"{self.oracle}: {self.detail}", f"shape: {self.shape}"]
        if self.known:
            lines.append(f"known bug: {self.known}")
        for i, q in enumerate(self.queries):
            lines.append(f"  query {i + 1}: {q}")
        for i, r in enumerate(self.results):
            lines.append(f"  result {i + 1}: {r}")
        return "\n".join(lines)


def render_value(value: Any) -> str:
    """One value as text, the same on every server and machine (see the module docstring)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        if value != value:
            return "NaN"
        return "0" if value == 0 else format(value, f".{FLOAT_DIGITS}g")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        try:
            text = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return "0x" + bytes(value).hex()
        return _temporal_text(text) if text.isprintable() else "0x" + bytes(value).hex()
    if isinstance(value, str):
        return _temporal_text(value)
    if isinstance(value, (set, frozenset)):
        return ",".join(sorted(str(v) for v in value))
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat(" ") if isinstance(value, datetime.datetime) else value.isoformat()
    if isinstance(value, datetime.timedelta):
        return _render_timedelta(value)
    return str(value)


def _temporal_text(text: str) -> str:
    """text, without the zero fraction of a second of a datetime or time it holds."""
    m = _ZERO_FRACTION_RE.match(text)
    return m.group(1) if m else text


def _render_timedelta(value: datetime.timedelta) -> str:
    sign = "-" if value < datetime.timedelta(0) else ""
    total = abs(value)
    seconds = total.days * 86400 + total.seconds
    text = f"{sign}{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return text + (f".{total.microseconds:06d}" if total.microseconds else "")


def render_row(row: Sequence[Any]) -> Row:
    """A row as a tuple of rendered values."""
    return tuple(render_value(v) for v in row)


def render_rows(rows: Iterable[Sequence[Any]]) -> list[Row]:
    """Rows rendered and sorted (a canonical multiset)."""
    return sorted(render_row(r) for r in rows)


def multiset_difference(first: Iterable[Row], second: Iterable[Row]) -> tuple[list[Row], list[Row]]:
    """(rows only in first, rows only in second), counting duplicates; both empty when equal."""
    a, b = Counter(first), Counter(second)
    return sorted((a - b).elements()), sorted((b - a).elements())


def same_multiset(first: Iterable[Row], second: Iterable[Row]) -> bool:
    """True when both hold the same rows the same number of times, in any order."""
    return Counter(first) == Counter(second)


def distinct(rows: Iterable[Row]) -> list[Row]:
    """The distinct rows, sorted."""
    return sorted(set(rows))


def describe_rows(rows: Sequence[Row], limit: int = MAX_ROWS_SHOWN) -> str:
    """'N row(s): (a, b); (c, d)...' with the first limit rows."""
    shown = "; ".join("(" + ", ".join(r) + ")" for r in rows[:limit])
    more = f"; ... {len(rows) - limit} more" if len(rows) > limit else ""
    return f"{len(rows)} row(s)" + (f": {shown}{more}" if rows else "")
