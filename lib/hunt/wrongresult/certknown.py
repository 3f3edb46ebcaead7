"""The known estimate inconsistency CERT recognises: KW46-CERT-RANGE-KEYPART, read from
the optimizer trace.

MariaDB 10.11's condition selectivity (``calculate_cond_selectivity_for_table``) takes a
range the range optimizer built over a key's parts as covering the conditions on all of
them, and applies no histogram to those columns.  A range whose first key part is no
single point (``a >= 0``) still lists the next parts in its bounds (the trace's
``(0,1) <= (a,b)`` for ``b = 1 AND a >= 0`` over ``PRIMARY KEY (a, b)``) though it
cannot apply them: their selectivity is lost.  ``WHERE b = 1`` is estimated at 50% and
the more restrictive ``WHERE b = 1 AND a >= 0`` at 100%.  A system-versioned table meets
it with no condition of its own on a second part: its implicit ``row_end = <max>`` is
the part the server adds to its keys (docs/findings.md, KW46-CERT-RANGE-KEYPART; cases
``docs/findings/oracles/t/cert_range_keypart*.test``).

A CERT finding is this bug (:data:`RANGE_KEYPART`) when, in the optimizer trace of an
EXPLAIN, a table's ``selectivity_for_indexes`` uses an index one of whose ranges spans
two or more key parts with a first part that is no single point, and the restriction's
estimate, with the histogram selectivity of those later parts applied (their entries in
``selectivity_for_columns``: :func:`lost_selectivity`), is no longer larger than the
query's estimate with the same applied to its own trace.  A finding that stays larger
with the lost selectivity restored is another inconsistency: a new finding.
"""
from __future__ import annotations

import json
import re
from types import MappingProxyType
from typing import Any, Iterator, Mapping

RANGE_KEYPART = "cert-range-keypart"
# the oracle's known bugs: name -> what it is (the known-bugs corpus names the bug
# randgen/conf/kewpie/known_bugs-mariadb-10.11.txt: KW46-CERT-RANGE-KEYPART)
KNOWN_BUGS: Mapping[str, str] = MappingProxyType({
    RANGE_KEYPART: "a range on a key's first part drops the histogram selectivity of the "
                   "conditions on its later parts (KW46-CERT-RANGE-KEYPART)"})
_BOUND_RE = re.compile(r"\s*(<=|<)\s*")


def _walk(node: Any) -> Iterator[list[Any]]:
    """Every ``rows_estimation`` list of a trace, in order (nested blocks included)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "rows_estimation" and isinstance(value, list):
                yield value
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


def point_first_part(text: str, names: list[str]) -> bool | None:
    """Is a range, as the trace prints it over the key parts ``names``, a single point on
    its first part?  ``(0,1) <= (a,b)`` is not, nor ``(127) < (a,b) <= (200,5)`` (a bound
    may name fewer parts); ``(1,5) < (a,b) <= (1,9)`` is; None when the text is not read
    (a value holding a comma, a parenthesis or a ``<``)."""
    marker = "(" + ",".join("k" * len(names)) + ")"
    pieces = _BOUND_RE.split(text.strip().replace("(" + ",".join(names) + ")", marker))
    tuples = pieces[0::2]
    if len(tuples) not in (2, 3) or tuples.count(marker) != 1 or \
            any(not (t.startswith("(") and t.endswith(")")) for t in tuples):
        return None
    firsts = []
    for tup in tuples:
        values = tup[1:-1].split(",")
        if len(values) > len(names) or "(" in tup[1:-1]:
            return None
        firsts.append(values[0])
    return len(tuples) == 3 and tuples[1] == marker and firsts[0] == firsts[2]


def _open_parts(ranges: list[Any], key_parts: list[str]) -> list[str]:
    """The later key parts of ranges that span two or more parts with a first part that is
    no single point ([] when none does, or a range is not read)."""
    lost: list[str] = []
    for text in ranges:
        names = next((key_parts[:n] for n in range(len(key_parts), 1, -1)
                      if "(" + ",".join(key_parts[:n]) + ")" in str(text)), None)
        if names is None:
            continue
        point = point_first_part(str(text), names)
        if point is None:
            return []
        if not point:
            lost += [n for n in names[1:] if n not in lost]
    return lost


def _table_keys(entry: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, list[Any]]]:
    """(index -> key parts, index -> ranges) of one table's range analysis."""
    analysis = entry.get("range_analysis") or {}
    parts = {str(i.get("index")): [str(p) for p in i.get("key_parts") or ()]
             for i in analysis.get("potential_range_indexes") or () if isinstance(i, dict)}
    alternatives = (analysis.get("analyzing_range_alternatives") or {}).get(
        "range_scan_alternatives") or ()
    ranges = {str(a.get("index")): list(a.get("ranges") or ()) for a in alternatives
              if isinstance(a, dict)}
    return parts, ranges


def lost_selectivity(trace: str) -> float:
    """The product, over the tables of an optimizer trace (JSON text), of the histogram
    selectivity the bug dropped: each later key part of a range with an open first part,
    on an index the table's selectivity used (1.0 when none; also when the trace is not
    read)."""
    try:
        data = json.loads(trace)
    except (TypeError, ValueError):
        return 1.0
    product = 1.0
    for steps in _walk(data):
        parts: dict[str, list[str]] = {}
        ranges: dict[str, list[Any]] = {}
        for entry in steps:
            if not isinstance(entry, dict):
                continue
            if "table" in entry:
                parts, ranges = _table_keys(entry)
            if "selectivity_for_indexes" not in entry:
                continue
            lost: list[str] = []
            for used in entry.get("selectivity_for_indexes") or ():
                index = str(used.get("index_name")) if isinstance(used, dict) else ""
                lost += [p for p in _open_parts(ranges.get(index, []), parts.get(index, []))
                         if p not in lost]
            for column in entry.get("selectivity_for_columns") or ():
                if isinstance(column, dict) and str(column.get("column_name")) in lost:
                    selectivity = column.get("selectivity_from_histogram")
                    if isinstance(selectivity, (int, float)) and 0 < selectivity < 1:
                        product *= float(selectivity)
    return product


def range_keypart(rows_r: float, bound_q: float, trace_q: str, trace_r: str,
                  tolerance: float) -> bool:
    """Is a CERT finding -- the restriction estimated at rows_r, more than the query's
    bound_q -- KW46-CERT-RANGE-KEYPART?  True when the restriction's trace (trace_r) shows
    selectivity the bug dropped and, restored in both (the query's from trace_q), the
    restriction's estimate is no longer larger (within the relative tolerance)."""
    lost_q, lost_r = lost_selectivity(trace_q), lost_selectivity(trace_r)
    return lost_r < 1.0 and rows_r * lost_r <= bound_q * lost_q * (1 + tolerance) + 1e-9
