"""--mode=reduce RUN's loop without servers (the single-finding reduction a fake that
writes what the real one writes): one finding per signature reduced, known bugs and
refused kinds skipped with the reason, the table after each; a second call shows the
finished reductions without running them again; --reduce-timeout stops one and the next
call resumes it; an error fails one signature (exit 2) and the next is still reduced; a
not-reproducible record is a verdict; a signal writes the table (the row interrupted) and
goes on up.

Covers: lib/modes/reduce/wholerun.py
"""
import json
import logging
import os
import time
from types import SimpleNamespace

import pytest

from lib.errors import Interrupted
from lib.modes.reduce.options import ReduceOptions
from lib.modes.reduce.wholerun import reduce_run
from lib.reduce.attempts import NotReproducible
from lib.reduce.case import ReduceError


class _Env:
    """What the loop reads of a RunEnvironment."""

    def __init__(self, **options):
        own = ReduceOptions(**options)
        self.config = SimpleNamespace(section=lambda cls: own)
        self.log = logging.getLogger("kewpie-test-wholerun")
        self.trust = None


def _finding(run, name, sig, trial, statements, kind="crash", oracle="crash", tag="new",
             bug=None):
    folder = run / "findings" / name
    folder.mkdir(parents=True)
    (folder / "finding.json").write_text(json.dumps({
        "format": "kewpie-hunt-finding/1", "kind": kind, "oracle": oracle,
        "signature": {"id": sig, "text": f"{kind} | {sig}", "kind": kind, "parts": [sig]},
        "title": f"title {sig}", "tag": tag, "bug": bug, "trial": {"number": trial},
        "topology": {"kind": "single", "servers": [{"name": "s0"}]},
        "files": {"trace_statements": statements}}))
    (folder / "trace.jsonl").write_text("".join(
        json.dumps({"seq": n + 1, "server": "s0", "conn": 7, "thread": 1,
                    "sql": f"SELECT {n}", "result": "ok"}) + "\n" for n in range(statements)))


@pytest.fixture
def run(tmp_path):
    """A run of four signatures: aaa (two findings), bbb (a hang), ccc (known), ddd."""
    run = tmp_path / "20261129-040000-abcdef"
    (run / "findings").mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps({"format": "kewpie-hunt-summary/1"}))
    _finding(run, "t0001-1-crash-aaa", "aaa", 1, 9)
    _finding(run, "t0002-1-hang-bbb", "bbb", 2, 4, kind="hang", oracle="hang")
    _finding(run, "t0003-1-crash-aaa", "aaa", 3, 5)
    _finding(run, "t0003-2-crash-ccc", "ccc", 3, 6, tag="known",
             bug={"id": "KW-7", "status": "open", "match": "sig:ccc"})
    _finding(run, "t0004-1-crash-ddd", "ddd", 4, 7)
    return str(run)


def _figures(statements_in, statements_out=2):
    return {"statements_in": statements_in, "statements_out": statements_out,
            "present": ["10.11.19 (/usr)"], "absent": [], "seconds": 1.0,
            "test": "/case/reduced.test"}


class _Reducer:
    """The single-finding reduction faked: each call recorded, reduce.json written, or
    what `then` says for a signature (a function of the target's folder)."""

    def __init__(self, **then):
        self.calls = []
        self.then = then

    def __call__(self, env, case, target):
        sig = os.path.basename(target.out)
        self.calls.append((sig, os.path.basename(case.folder), len(case.statements),
                           target.chosen, target.scratch))
        os.makedirs(target.out, exist_ok=True)
        if sig in self.then:
            return self.then[sig](target.out, case)
        with open(os.path.join(target.out, "reduce.json"), "w") as fh:
            json.dump(_figures(len(case.statements)), fh)
        return 0


def _table(run):
    data = json.load(open(os.path.join(run, "reduce", "triage.json")))
    return data, {r["signature"]: r for r in data["rows"]}


def test_one_finding_per_signature_known_and_refused_skipped_then_shown_as_done(run):
    reducer = _Reducer()
    assert reduce_run(_Env(), run, reducer) == 0
    # aaa's shorter trace (trial 3) is reduced; ccc is known, bbb a hang
    assert reducer.calls == [("aaa", "t0003-1-crash-aaa", 5, True, "aaa"),
                             ("ddd", "t0004-1-crash-ddd", 7, True, "ddd")]
    data, rows = _table(run)
    assert list(rows) == ["aaa", "bbb", "ccc", "ddd"] and data["exit_status"] == 0
    assert rows["aaa"]["verdict"] == "reduced 5 -> 2 statements; present in 10.11.19 (/usr)"
    assert (rows["aaa"]["findings"], rows["aaa"]["trials"]) == (2, [1, 3])
    assert rows["bbb"]["verdict"].startswith("not reducible: a hang finding of oracle hang")
    assert rows["ccc"]["verdict"] == "skipped: known KW-7 (open; match sig:ccc)"
    assert "| aaa | crash (crash) | 2 (1, 3) | t0003-1-crash-aaa (5 statements) |" in \
        open(os.path.join(run, "reduce", "triage.md")).read()

    again = _Reducer()
    assert reduce_run(_Env(again=True), run, again) == 0
    assert again.calls == [("ccc", "t0003-2-crash-ccc", 6, True, "ccc")]   # known: again
    assert _table(run)[1]["aaa"] == rows["aaa"]


def test_the_cap_stops_one_and_the_next_call_resumes_it(run):
    def slow(out, case):
        with open(os.path.join(out, "smallest.json"), "w") as fh:
            fh.write("{}")
        time.sleep(30)

    capped = _Reducer(aaa=slow)
    started = time.monotonic()
    assert reduce_run(_Env(timeout=0.3), run, capped) == 1
    assert time.monotonic() - started < 20
    data, rows = _table(run)
    assert rows["aaa"]["result"] == "stopped" and rows["ddd"]["result"] == "reduced"
    assert rows["aaa"]["verdict"].startswith("stopped at the cap (0.3 s)")
    resumed = _Reducer()
    assert reduce_run(_Env(), run, resumed) == 0
    assert [c[0] for c in resumed.calls] == ["aaa"]
    assert _table(run)[1]["aaa"]["result"] == "reduced"


def test_an_error_fails_one_signature_and_the_next_is_reduced(run, caplog):
    def broken(out, case):
        raise ReduceError("--mode=reduce x: the reduced case of 3 statements did not fail "
                          "again\nsecond line")

    reducer = _Reducer(aaa=broken)
    with caplog.at_level(logging.ERROR, logger="kewpie-test-wholerun"):
        assert reduce_run(_Env(), run, reducer) == 2
    assert [c[0] for c in reducer.calls] == ["aaa", "ddd"]
    rows = _table(run)[1]
    assert rows["aaa"]["verdict"] == ("failed: --mode=reduce x: the reduced case of 3 "
                                      "statements did not fail again")
    assert [r.getMessage() for r in caplog.records] == [
        "--mode=reduce x: the reduced case of 3 statements did not fail again"]


def test_not_reproducible_is_a_verdict(run):
    def unreproducible(out, case):
        with open(os.path.join(out, "not-reproducible.json"), "w") as fh:
            json.dump({"state": "not reproducible from its trace"}, fh)
        raise NotReproducible("--mode=reduce x: the trace does not reproduce", {})

    assert reduce_run(_Env(), run, _Reducer(ddd=unreproducible)) == 0
    rows = _table(run)[1]
    assert (rows["ddd"]["result"], rows["ddd"]["verdict"]) == (
        "not-reproducible", "not reproducible from its trace")
    again = _Reducer()
    assert reduce_run(_Env(), run, again) == 0 and again.calls == []


def test_a_signal_writes_the_table_and_goes_on_up(run):
    def interrupted(out, case):
        raise Interrupted(15)

    reducer = _Reducer(aaa=interrupted)
    with pytest.raises(Interrupted):
        reduce_run(_Env(), run, reducer)
    rows = _table(run)[1]
    assert rows["aaa"]["result"] == "interrupted" and rows["ddd"]["result"] == "pending"
    assert rows["aaa"]["verdict"].startswith("interrupted by signal 15: resumes")
