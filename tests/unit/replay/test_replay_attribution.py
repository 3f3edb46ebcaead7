"""The matching's quality on real release-build crashes: the crashes of MariaDB QA's
reproducers on Debian's 10.11.19 and 10.11.18 as a replay saw them (their UniqueIDs,
stacks and kewpie signature ids, recorded in tests/fixtures/replay/release_crashes.json
by bench/replay_bench.py's run), matched against ../shared/mariadb-qa/known_bugs.strings
as a replay tags them: no crash attributed to another MDEV, and on 10.11.19 at least 60%
of those whose MDEV is listed (crashes shared by several bugs' reproducers aside)
attributed to their own.

Covers: lib/replay/attribution.py, lib/hunt/bugmatch.py, lib/hunt/knownbugs.py,
lib/hunt/kbstrings.py, lib/replay/execute.py (known_verdict)
"""
import json
import os

import pytest

from tests.conftest import ROOT
from lib.hunt.kbstrings import load_strings
from lib.hunt.knownbugs import KnownBugs
from lib.hunt.signature import Signature
from lib.hunt.uniqueid import UniqueId
from lib.replay.attribution import OTHER, OWN, attribute
from lib.replay.execute import ReplayResult, known_verdict

KNOWN = os.path.normpath(os.path.join(ROOT, "..", "shared", "mariadb-qa", "known_bugs.strings"))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "replay", "release_crashes.json")


@pytest.fixture(scope="module")
def matched():
    """Each recorded crash tagged against known_bugs.strings, as a replay tags it."""
    if not os.path.isfile(KNOWN):
        pytest.fail(f"{KNOWN} is missing: the shared mariadb-qa snapshot is needed")
    bugs = KnownBugs.load([KNOWN])
    with open(KNOWN, encoding="utf-8") as fh:
        entries = load_strings(KNOWN, fh.read().splitlines())
    with open(FIXTURE, encoding="utf-8") as fh:
        crashes = json.load(fh)["crashes"]
    results = []
    for c in crashes:
        stack = tuple(c["stack"])
        uid = UniqueId(c["signal"], stack[:4], c["assertion"], stack)
        sig = Signature("crash", ("recorded", c["signature_id"]), unique_id=uid)
        results.append(ReplayResult(c["name"], c["bug"], c["name"] + ".sql", c["tree"], "",
                                    "crash", signature={"id": c["signature_id"]},
                                    unique_id={"text": uid.text},
                                    known=known_verdict(bugs, sig, c["tree"], c["bug"])))
    return results, entries


@pytest.mark.parametrize("tree", ["10.11.19", "10.11.18"])
def test_no_crash_is_attributed_to_another_mdev(matched, tree):
    results, entries = matched
    quality = attribute(results, tree, entries)
    assert quality.judged >= 20, quality.to_json()
    wrong = [(a.name, a.named, a.unique_id, a.listed) for a in quality.rows if a.verdict == OTHER]
    assert not wrong


def test_most_crashes_of_10_11_19_are_attributed_to_their_own_mdev(matched):
    results, entries = matched
    quality = attribute(results, "10.11.19", entries)
    assert quality.own_share >= 0.6, [(a.name, a.verdict, a.quality) for a in quality.rows]
    assert quality.count(OWN) >= 22
