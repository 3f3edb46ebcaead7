"""CERT's known estimate inconsistency KW46-CERT-RANGE-KEYPART: read from optimizer traces
of the shapes of its reduced cases (docs/findings/oracles/t/cert_range_keypart*.test:
``PRIMARY KEY (a, b)`` with ``b = 1 AND a >= 0``; a system-versioned table's
``PRIMARY KEY (c0)`` -- ``(c0, row_end)`` -- under ``NOT (c0 < 9)``, ``c0 BETWEEN 0 AND
127`` and ``c0 <= 0e0``), recognised only when the selectivity it drops explains the
finding; and such a finding signed once for every shape and tagged known by the
known-bugs corpus.

Covers: lib/hunt/wrongresult/certknown.py, lib/hunt/wrongresult/cert.py,
lib/hunt/wrongresult/oracle.py, lib/hunt/wrongresult/result.py, lib/hunt/wrong.py,
randgen/conf/kewpie/known_bugs-mariadb-10.11.txt
"""
from __future__ import annotations

import json

import pytest

from lib.home import data_path
from lib.hunt.knownbugs import KNOWN, NEW, KnownBugs
from lib.hunt.wrong import finding_of
from lib.hunt.wrongresult.cert import TOLERANCE
from lib.hunt.wrongresult.certknown import (RANGE_KEYPART, lost_selectivity,
                                            point_first_part, range_keypart)
from lib.hunt.wrongresult.result import WrongResult

END = "2038-01-19 03:14:07.999999"


def trace(table: str, parts: list[str], ranges: list[str], used: list[str],
          columns: dict[str, float]) -> str:
    """An optimizer trace of one table, as 10.11.19 writes it (rows_estimation: the range
    analysis, then the selectivity)."""
    return json.dumps({"steps": [{"join_optimization": {"select_id": 1, "steps": [
        {"rows_estimation": [
            {"table": table, "range_analysis": {
                "table_scan": {"rows": 5, "cost": 6},
                "potential_range_indexes": [{"index": "PRIMARY", "usable": True,
                                             "key_parts": parts}],
                "analyzing_range_alternatives": {"range_scan_alternatives": [
                    {"index": "PRIMARY", "ranges": ranges, "rows": 5, "chosen": False}]}}},
            {"selectivity_for_indexes": [{"index_name": i, "selectivity_from_index": 1}
                                         for i in used],
             "selectivity_for_columns": [{"column_name": c, "ranges": ["..."],
                                          "selectivity_from_histogram": s}
                                         for c, s in columns.items()],
             "cond_selectivity": 1}]}]}}]})


VERSIONED = ["c0", "row_end"]
# the hand-made case: b = 1 AND a >= 0 over PRIMARY KEY (a, b) -- 50% lost
HAND = trace("t1", ["a", "b"], ["(0,1) <= (a,b)"], ["PRIMARY"], {"a": 0.9921875, "b": 0.5})
# the reduced cases' restrictions of a versioned table: row_end's 79.69% lost
NOT_LESS = trace("t1", VERSIONED, [f"(9,{END}) <= (c0,row_end)"], ["PRIMARY"],
                 {"c0": 0.2, "row_end": 0.796875})
BETWEEN = trace("t1", VERSIONED, [f"(0,{END}) <= (c0,row_end) <= (127,{END})"], ["PRIMARY"],
                {"c0": 0.9921875, "row_end": 0.796875})
AT_MOST = trace("t1", VERSIONED, ["(c0) < (3)", "(3) < (c0) < (127)",
                                  f"(127) < (c0,row_end) <= (2147483647,{END})"],
                ["PRIMARY"], {"c0": 1.0, "row_end": 0.796875})
# the query they restrict: no range, row_end's selectivity applied
PLAIN = trace("t1", VERSIONED, [], [], {"row_end": 0.796875})


@pytest.mark.parametrize("text, names, point", [
    ("(0,1) <= (a,b)", ["a", "b"], False),
    ("(a,b) <= (5,1)", ["a", "b"], False),
    (f"(0,{END}) <= (c0,row_end) <= (127,{END})", VERSIONED, False),
    (f"(127) < (c0,row_end) <= (2147483647,{END})", VERSIONED, False),
    ("(1,5) < (a,b) <= (1,9)", ["a", "b"], True),
    (f"(4,{END}) <= (c0,row_end) <= (4,{END})", VERSIONED, True),
    ("(x,y,1) <= (a,b) <= (z,1)", ["a", "b"], None),     # a value holding a comma
    ("(f(1),1) <= (a,b)", ["a", "b"], None),
])
def test_a_range_is_a_point_on_its_first_key_part_or_not(text, names, point):
    assert point_first_part(text, names) is point


@pytest.mark.parametrize("restriction", [HAND, NOT_LESS, BETWEEN, AT_MOST])
def test_the_selectivity_a_range_on_a_first_key_part_dropped(restriction):
    expected = 0.5 if restriction is HAND else 0.796875
    assert lost_selectivity(restriction) == pytest.approx(expected)
    assert lost_selectivity(PLAIN) == 1.0


def test_nothing_is_lost_by_a_point_an_unused_index_or_an_unread_trace():
    point = trace("t1", ["a", "b"], ["(1,1) <= (a,b) <= (1,1)"], ["PRIMARY"], {"b": 0.5})
    unused = trace("t1", ["a", "b"], ["(0,1) <= (a,b)"], [], {"b": 0.5})
    unread = trace("t1", ["a", "b"], ["(0,1) <= (a,b)", "(x,y,1) <= (a,b) <= (z,1)"],
                   ["PRIMARY"], {"b": 0.5})
    assert [lost_selectivity(t) for t in (point, unused, unread, "", "{truncated")] == [1.0] * 5


def test_a_finding_the_dropped_selectivity_explains_is_the_known_bug():
    # 9a4e7398e620's reduced case: the table estimated at 5 x 79.69% = 3.98, NOT (c0 < 9)
    # at 5 x 100%: 5 x 79.69% is no more than 3.98
    assert range_keypart(5.0, 3.984375, PLAIN, NOT_LESS, TOLERANCE)
    # the hand-made case: b = 1 at 10 x 50%, b = 1 AND a >= 0 at 10 x 100%
    assert range_keypart(10.0, 5.0, PLAIN, HAND, TOLERANCE)


def test_a_finding_the_dropped_selectivity_does_not_explain_is_new():
    assert not range_keypart(5.0, 1.0, PLAIN, NOT_LESS, TOLERANCE)   # 3.98 is still > 1
    assert not range_keypart(5.0, 3.984375, PLAIN, PLAIN, TOLERANCE)  # nothing dropped
    # the query lost as much itself: restored in both, the restriction is still larger
    assert not range_keypart(5.0, 3.984375, NOT_LESS, BETWEEN, TOLERANCE)


def test_a_known_cert_finding_is_one_signature_for_every_shape_and_tagged_known():
    corpus = KnownBugs.load([data_path("randgen", "conf", "kewpie",
                                       "known_bugs-mariadb-10.11.txt")])
    known = [finding_of(WrongResult("cert", shape, ("q", "r"), ("4", "5"), "more",
                                    "performance", RANGE_KEYPART), "s0")
             for shape in ("select a from t", "select b from u where c")]
    assert known[0].signature == known[1].signature
    assert known[0].signature.text == "performance | cert | known bug cert-range-keypart"
    assert known[0].details["known"] == RANGE_KEYPART
    assert known[0].details["shape"] == "select a from t"
    assert "known bug: cert-range-keypart" in known[0].texts["performance.txt"]
    tagged = corpus.tag(known[0].signature, "10.11.19-MariaDB")
    assert tagged.tag == KNOWN and tagged.bug is not None
    assert tagged.bug.bug_id == "KW46-CERT-RANGE-KEYPART"
    new = finding_of(WrongResult("cert", "select a from t", ("q", "r"), ("4", "5"), "more",
                                 "performance"), "s0")
    assert corpus.tag(new.signature, "10.11.19-MariaDB").tag == NEW
