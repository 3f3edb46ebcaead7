"""A hunt's trials and findings as the history records them (a trial a result, each
finding folder a sighting of its signature), and the lines of a reduction that another
worker holds.

Covers: lib/run/findings.py, lib/run/recording.py
"""
from __future__ import annotations

import logging
import time

from lib.history.findings import Claim, FindingFilter, search_findings
from lib.history.queries import SearchFilter, search
from lib.history.records import RunInfo, new_run_uuid, utcnow
from lib.history.store import open_engine
from lib.history.target import StoreTarget
from lib.history.writer import HistoryWriter
from lib.hunt.finding import Written
from lib.hunt.trial import TrialResult
from lib.run.findings import record_trial, reduction_record, refused, trial_test
from lib.run.recording import RunHistory


def _written(n: int, sig: str = "0123456789ab") -> Written:
    return Written(path=f"/ws/workdir/hunt/x/findings/t000{n}-0-crash-{sig}", kind="crash",
                   oracle="crash", signature_id=sig, signature_text="crash|SIGSEGV|f",
                   title="SIGSEGV in f", summary="signal 11 in f", tag="new", bug_id="",
                   bug_note="", trial=n, seed=100 + n, server="s0", written_at=time.time(),
                   unique_id="SIGSEGV|f|g")


def test_trials_and_findings_are_recorded(tmp_path):
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    run = RunInfo(new_run_uuid(), host="box", tree_version="10.11.19", mode="hunt",
                  labels={"node": "worker-1"})
    writer = HistoryWriter(target, run, str(tmp_path / "spool"), logging.getLogger("t"),
                           background=False)
    history = RunHistory(writer, {"WORKSPACE": "/ws", "BUILD_URL": "https://ci/job/1/"})
    record_trial(history, TrialResult(1, 101, "conf/planted.yy", "bot0", seconds=2.5,
                                      findings=[_written(1), _written(1, "ba9876543210")]))
    record_trial(history, TrialResult(2, 102, "conf/planted.yy", "bot1", seconds=1.0))
    record_trial(history, TrialResult(3, 103, "conf/planted.yy", "bot0", status="skipped"))
    history.close(1)
    engine = open_engine(target)
    with engine.connect() as conn:
        rows = search(conn, SearchFilter(status="all"))
        found = search_findings(conn, FindingFilter())
    engine.dispose()
    assert trial_test("conf/planted.yy") == "hunt.planted"
    assert sorted(r.status for r in rows) == ["fail", "pass", "skipped"]
    failed = next(r for r in rows if r.status == "fail")
    assert failed.signature == "0123456789ab" and "ba9876543210" in failed.failure
    assert failed.evidence.startswith("https://ci/job/1/artifact/workdir/hunt/")
    assert {f.signature for f in found} == {"0123456789ab", "ba9876543210"}
    assert all(f.machines == ["worker-1"] and f.trees == ["10.11.19"] for f in found)


def test_a_reduction_held_elsewhere_says_whose_it_is():
    record = reduction_record("/wd/f", "crash", "crash", "0123456789ab", "crash|x", "t",
                              {"unique_id": "U", "tag": "known", "bug": {"id": "MDEV-1"},
                               "trial": {"number": 3, "seed": 9}})
    assert (record.unique_id, record.bug_id, record.trial, record.seed) == ("U", "MDEV-1", 3, 9)
    running = refused(Claim(False, "running", "worker-2 pid 7", utcnow()), "0123456789ab")
    assert "being reduced by worker-2 pid 7" in running and "--reduce-again" in running
    done = refused(Claim(False, "done", "worker-2 pid 7", utcnow(), "/wd/r/reduced.test"),
                   "0123456789ab")
    assert "was reduced by worker-2" in done and "/wd/r/reduced.test" in done
