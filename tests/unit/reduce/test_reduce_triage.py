"""Pure logic of --mode=reduce RUN's triage table: a row per signature, its verdict read back
from a reduction's files (reduced with the per-tree presence, not reproducible, not
confirmed), skipped as a known bug, not reducible, stopped at the cap; the exit status;
triage.json and triage.md.

Covers: lib/reduce/triage.py
"""
from lib.reduce import triage
from lib.reduce.runfolder import FoundFinding, SignatureGroup


def _group(sig="7eeb1eeb9e1f", tag="new", bug=None):
    findings = tuple(FoundFinding(f"/r/findings/t000{t}-1-crash-{sig}", sig, "crash | x",
                                  "crash", "crash", "signal 11 in kw_planted", t, n, tag, bug)
                     for t, n in ((1, 57), (2, 31)))
    return SignatureGroup(sig, findings)


FIGURES = {"statements_in": 31, "statements_out": 3, "present": ["10.11.19 (/usr)"],
           "absent": ["10.11.18 (trees/10.11.18/usr)"], "seconds": 42.5,
           "test": "/r/reduce/7eeb1eeb9e1f/mtr/kw_reduce/t/reduced.test"}


def test_a_row_is_the_signature_and_its_picked_finding():
    row = triage.row_of(_group())
    assert (row.findings, row.trials, row.statements) == (2, [1, 2], 31)
    assert row.finding.endswith("t0002-1-crash-7eeb1eeb9e1f")
    assert (row.result, row.known, row.tag) == (triage.PENDING, "", "new")


def test_a_finished_reduction_read_back_from_its_files():
    row = triage.row_of(_group())
    assert not triage.finished(row, "/r/reduce/x", None, None)
    assert triage.finished(row, "/r/reduce/x", FIGURES, None)
    assert row.result == triage.REDUCED and row.output == "/r/reduce/x"
    assert row.verdict == ("reduced 31 -> 3 statements; present in 10.11.19 (/usr); absent "
                           "in 10.11.18 (trees/10.11.18/usr)")
    assert (row.statements_out, row.case, row.seconds) == (3, FIGURES["test"], 42.5)


def test_not_reproducible_and_not_confirmed_are_verdicts():
    row = triage.row_of(_group())
    assert triage.finished(row, "/o", None, {"state": "not reproducible from its trace"})
    assert (row.result, row.verdict) == (triage.NOT_REPRODUCIBLE,
                                         "not reproducible from its trace")
    row = triage.row_of(_group())   # a case written that no tool failed on any tree
    state = "not reproduced by the printed commands on any code tree"
    assert triage.finished(row, "/o", dict(FIGURES, present=[]), {"state": state})
    assert (row.result, row.verdict, row.case) == (triage.NOT_REPRODUCIBLE, state,
                                                   FIGURES["test"])


def test_skipped_known_not_reducible_and_stopped():
    bug = {"id": "KW-7", "status": "open", "match": "re:kw_planted"}
    row = triage.row_of(_group(tag="known", bug=bug))
    triage.skip_known(row)
    assert row.verdict == "skipped: known KW-7 (open; match re:kw_planted)"
    other = triage.row_of(_group("a1"))
    triage.not_reducible(other, "a hang finding of oracle hang cannot be reduced yet")
    assert other.verdict.startswith("not reducible: a hang finding")
    assert triage.exit_status([row, other]) == 0
    stopped = triage.row_of(_group("b2"))
    triage.unfinished(stopped, triage.STOPPED, "stopped at the cap (5 s)", "/o")
    assert triage.exit_status([row, other, stopped]) == 1
    failed = triage.row_of(_group("c3"))
    triage.unfinished(failed, triage.FAILED, "failed: boom", "/o")
    assert triage.exit_status([row, failed, stopped]) == 2
    assert triage.exit_status([triage.row_of(_group())]) == 1   # pending: no verdict yet
    assert triage.exit_status([]) == 0


def test_triage_json_and_markdown():
    reduced = triage.row_of(_group(tag="known-fixed",
                                   bug={"id": "KW-1", "status": "fixed:10.11.5"}))
    triage.finished(reduced, "/r/reduce/7eeb1eeb9e1f", FIGURES, None)
    known = triage.row_of(_group("a|b", tag="known", bug={"id": "MDEV-9", "status": "open"}))
    triage.skip_known(known)
    data = triage.to_json("/r", [reduced, known], {"trials": 1})
    assert data["format"] == "kewpie-reduce-triage/1" and data["exit_status"] == 0
    assert (data["signatures"], data["findings"]) == (2, 4)
    assert data["results"] == {"reduced": 1, "skipped-known": 1}
    assert data["rows"][0]["present"] == ["10.11.19 (/usr)"]
    text = triage.markdown("/r", [reduced, known])
    lines = text.splitlines()
    assert lines[0] == "# Triage of hunt run /r"
    assert lines[2] == "2 signatures, 4 findings: 1 reduced, 1 skipped-known"
    assert lines[6] == ("| 7eeb1eeb9e1f | crash (crash) | 2 (1, 2) | t0002-1-crash-7eeb1eeb9e1f "
                        "(31 statements) [known-fixed] | reduced 31 -> 3 statements; present "
                        "in 10.11.19 (/usr); absent in 10.11.18 (trees/10.11.18/usr) | "
                        + FIGURES["test"] + " |")
    assert lines[7].startswith("| a\\|b | crash (crash) |") and "skipped: known MDEV-9" in lines[7]
    assert lines[7].endswith("| - |")
