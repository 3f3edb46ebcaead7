"""Pure logic of --mode=reduce RUN: a hunt's run folder read (complete findings only, bad
input), its findings grouped by signature, one picked per signature (the shortest trace,
ties the earliest trial), the known bug that skips a signature, and the refusal rule
--mode=reduce shares with it (a hang, a divergence, an oracle it does not know, a replication
topology; Pinolo's findings taken).

Covers: lib/reduce/runfolder.py, lib/reduce/case.py
"""
import json
import os

import pytest

from lib.reduce.case import NotReducible, read_input, refusal
from lib.reduce.runfolder import (FoundFinding, RunFolderError, group, is_run_folder,
                                  known_bug, pick, read_run)


def _found(sig, trial, statements, name="", tag="new", bug=None):
    return FoundFinding(f"/run/findings/{name or f't{trial:04d}-1-crash-{sig}'}", sig,
                        f"crash | {sig}", "crash", "crash", f"title {sig}", trial, statements,
                        tag, bug)


def test_pick_takes_the_shortest_trace_then_the_earliest_trial_then_the_name():
    a, b, c = _found("s", 3, 40), _found("s", 1, 90), _found("s", 2, 40)
    assert pick([a, b, c]) is c
    d = _found("s", 2, 40, name="t0002-0-crash-s")
    assert pick([a, b, c, d]) is d


def test_group_by_signature_in_the_order_first_found():
    found = [_found("bbb", 2, 10), _found("aaa", 3, 5), _found("bbb", 1, 20),
             _found("ccc", 3, 1, name="t0003-2-crash-ccc")]
    groups = group(found)
    assert [g.signature for g in groups] == ["bbb", "aaa", "ccc"]
    assert [f.trial for f in groups[0].findings] == [1, 2]
    assert groups[0].trials == [1, 2] and groups[0].picked.trial == 2
    assert group([]) == []


def test_known_bug_names_the_bug_of_a_known_finding_only():
    bug = {"id": "MDEV-1", "status": "open", "match": "sig:abc", "quality": ""}
    assert known_bug(_found("s", 1, 1, tag="known", bug=bug)) == "MDEV-1 (open; match sig:abc)"
    strings = {"id": "MDEV-2", "status": "fixed", "match": "uid:X|y",
               "quality": "exact UniqueID"}
    assert known_bug(_found("s", 1, 1, tag="known", bug=strings)) == \
        "MDEV-2 (fixed; match uid:X|y; exact UniqueID)"
    # a regression and a new finding are reduced
    assert known_bug(_found("s", 1, 1, tag="known-fixed", bug=bug)) == ""
    assert known_bug(_found("s", 1, 1)) == ""


def _finding(folder, trial, sig="7eeb1eeb9e1f", statements=None, **extra):
    os.makedirs(folder)
    data = {"format": "kewpie-hunt-finding/1", "kind": "crash", "oracle": "crash",
            "signature": {"id": sig, "text": "crash | signal 11", "kind": "crash",
                          "parts": ["signal 11"]},
            "title": "t", "tag": "new", "bug": None, "trial": {"number": trial},
            "topology": {"kind": "single", "servers": [{"name": "s0"}]},
            "files": {} if statements is None else {"trace_statements": statements}}
    data.update(extra)
    with open(os.path.join(folder, "finding.json"), "w") as fh:
        json.dump(data, fh)
    with open(os.path.join(folder, "trace.jsonl"), "w") as fh:
        for n in range(3):
            fh.write(json.dumps({"seq": n + 1, "server": "s0", "conn": 7, "thread": 1,
                                 "sql": f"SELECT {n}", "result": "ok"}) + "\n")
    return folder


def _run(tmp_path, summary=True):
    run = tmp_path / "20261129-040000-abcdef"
    (run / "findings").mkdir(parents=True)
    if summary:
        (run / "summary.json").write_text(json.dumps({"format": "kewpie-hunt-summary/1"}))
    return run


def test_read_run_takes_complete_findings_and_counts_traces(tmp_path):
    run = _run(tmp_path)
    _finding(str(run / "findings" / "t0001-1-crash-7eeb1eeb9e1f"), 1, statements=57)
    _finding(str(run / "findings" / "t0002-1-crash-7eeb1eeb9e1f"), 2)   # counted: 3
    (run / "findings" / "t0003-1-crash-unfinished").mkdir()              # no finding.json
    found = read_run(str(run))
    assert [(f.name, f.trial, f.statements) for f in found] == [
        ("t0001-1-crash-7eeb1eeb9e1f", 1, 57), ("t0002-1-crash-7eeb1eeb9e1f", 2, 3)]
    (only,) = group(found)
    assert only.picked.trial == 2


def test_a_run_folder_is_summary_beside_findings(tmp_path):
    run = _run(tmp_path)
    assert is_run_folder(str(run))
    finding = _finding(str(run / "findings" / "t0001-1-crash-x"), 1)
    assert not is_run_folder(finding)
    assert not is_run_folder(str(_run(tmp_path / "other", summary=False)))
    with pytest.raises(RunFolderError, match="not a hunt's run folder"):
        read_run(str(tmp_path / "other" / "20261129-040000-abcdef"))
    (run / "summary.json").write_text(json.dumps({"format": "other/1"}))
    with pytest.raises(RunFolderError, match="not of format kewpie-hunt-summary/1"):
        read_run(str(run))
    (run / "summary.json").write_text("{")
    with pytest.raises(RunFolderError, match="cannot be read"):
        read_run(str(run))


@pytest.mark.parametrize("kind, oracle, topology, words", [
    ("hang", "hang", "single", "a hang finding of oracle hang cannot be reduced yet"),
    ("divergence", "divergence", "replication", "a divergence finding"),
    ("wrong-result", "nosuch", "single", "(it is no oracle of lib/hunt/wrongresult)"),
    ("crash", "crash", "galera", "a finding on a galera topology cannot be reduced yet"),
])
def test_refusal_says_why_a_finding_cannot_be_reduced(kind, oracle, topology, words):
    assert words in refusal(kind, oracle, topology)


def test_refusal_of_what_can_be_reduced_is_empty():
    assert refusal("crash", "crash", "single") == ""
    assert refusal("wrong-result", "differential", "compare") == ""
    assert refusal("errorlog", "errorlog", "single") == ""
    assert refusal("wrong-result", "tlp", "single") == ""
    assert refusal("wrong-result", "pinolo", "single") == ""


def test_read_input_raises_not_reducible_with_the_short_why(tmp_path):
    hang = _finding(str(tmp_path / "t0001-1-hang-x"), 1, kind="hang", oracle="hang")
    with pytest.raises(NotReducible, match="cannot be reduced yet") as caught:
        read_input(hang)
    assert caught.value.why.startswith("a hang finding of oracle hang")
    assert hang not in caught.value.why
    crash = _finding(str(tmp_path / "t0002-1-crash-x"), 2)
    os.remove(os.path.join(crash, "trace.jsonl"))
    with pytest.raises(NotReducible) as caught:
        read_input(crash)
    assert caught.value.why == "no trace.jsonl"
