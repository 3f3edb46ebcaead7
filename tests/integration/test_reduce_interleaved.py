"""--mode=reduce of multi-connection traces that only fail in the trace's own order, on
real servers with the planted UDF crash (gcc-built, tests/fixtures/hunt/):

- a lock wait: connection 2's INSERT ... SELECT waited for connection 1's table lock
  while connection 1 added a row; replayed one at a time in send order (the related
  statements) it times out, serialized it doubles one row: no crash.  The start's
  ``ended`` candidate (one at a time, in the order the statements ended) crashes; the
  case is written in that order and is present in every tree under kewpie and
  mysql-test-run;
- two statements at once: the crashing SELECT counts another connection's running
  SLEEP; one at a time (send order, end order) nothing crashes, the ``interleaved``
  candidate (statements that overlapped in the trace overlap again) does; the case is
  written with send/reap and is present in every tree;
- a trace that reproduces in no order: exit 2 with one ERROR line, and the record
  says so -- not-reproducible.json and report.txt with every candidate's tries, in the
  output folder and in the finding's own reduce folder, and the results history's
  ``kewpie history findings`` shows the reduction as no-repro.

Covers: lib/reduce/schedule.py, lib/reduce/interleave.py, lib/reduce/freerun.py, lib/reduce/attempts.py, lib/reduce/check.py, lib/reduce/reducer.py, lib/reduce/mtrcase.py, lib/modes/reduce/run.py, lib/history/findings.py
"""
import json
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import KEWPIE, tagged
from tests.fixtures.hunt.planted import build_plugin_dir, remove_plugin_dir
from tests.fixtures.reduce.planted import (CONCURRENT_CRASHING, INTERLEAVED_CRASHING,
                                           PLANTED, concurrent_trace, interleaved_trace,
                                           write_finding)

TREE_18 = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "trees", "10.11.18")


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding the planted UDF (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def _present_everywhere(figures):
    present = " ".join(figures["present"])
    assert "10.11.19" in present and (not os.path.isdir(TREE_18) or "10.11.18" in present), \
        figures["confirmation"]
    assert not figures["absent"], figures["confirmation"]


def test_lock_wait_crash_reproduced_in_the_order_statements_ended(kewpie, plugin_dir, tmp_path):
    statements, times = interleaved_trace()
    finding = write_finding(str(tmp_path / "t0001-1-crash-lockwait"), statements,
                            [f"--plugin-dir={plugin_dir}"], times=times)
    out = str(tmp_path / "out")
    proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}", timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not tagged(kewpie.workdir)
    assert re.search(r"reduce: related \(serial replay\): nothing", proc.stdout), proc.stdout
    assert re.search(r"reduce: the ended statements reproduce: 11 -> 11 statements",
                     proc.stdout), proc.stdout[-3000:]
    figures = json.load(open(os.path.join(out, "reduce.json")))
    assert figures["order"] == "ended" and figures["statements_out"] <= 6
    test = open(figures["test"]).read()
    lines = test.splitlines()
    # in the order they ended: the row added under the lock before the doubling
    doubling, = [n for n, l in enumerate(lines) if l.startswith("INSERT INTO kw_armed (v) SELECT")]
    assert lines.index(PLANTED[3] + ";") < doubling < lines.index(INTERLEAVED_CRASHING + ";"), \
        test
    _present_everywhere(figures)


def test_crash_of_two_statements_at_once_reproduced_interleaved(kewpie, plugin_dir, tmp_path):
    statements, times = concurrent_trace()
    finding = write_finding(str(tmp_path / "t0001-1-crash-concurrent"), statements,
                            [f"--plugin-dir={plugin_dir}"], times=times)
    out = str(tmp_path / "out")
    proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}", timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not tagged(kewpie.workdir)
    assert re.search(r"reduce: ended \(ended replay\): nothing", proc.stdout), proc.stdout
    assert "reduce: the interleaved statements reproduce: 5 -> 5 statements" in proc.stdout, \
        proc.stdout[-3000:]
    figures = json.load(open(os.path.join(out, "reduce.json")))
    assert figures["order"] == "interleaved" and figures["statements_out"] <= 4
    test = open(figures["test"]).read()
    assert "send SELECT SLEEP(1.5);" in test and f"send {CONCURRENT_CRASHING};" in test, test
    assert test.index("send SELECT SLEEP(1.5);") < test.index(f"send {CONCURRENT_CRASHING};")
    _present_everywhere(figures)


def test_a_trace_that_does_not_reproduce_is_recorded_so(kewpie, plugin_dir, tmp_path):
    statements, times = interleaved_trace()
    statements[-1] = (statements[-1][0], "SELECT kw_planted(COUNT(*) - 3) FROM kw_armed")
    finding = write_finding(str(tmp_path / "t0001-1-crash-never"), statements,
                            [f"--plugin-dir={plugin_dir}"], times=times)
    out = str(tmp_path / "out")
    proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}", "--trials=2",
                      timeout=400)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 2, text[-3000:]
    assert len([l for l in text.splitlines() if " ERROR " in l]) == 1, text[-3000:]
    assert "recorded as not reproducible from its trace" in text
    assert not tagged(kewpie.workdir)
    record = json.load(open(os.path.join(out, "not-reproducible.json")))
    assert record["state"] == "not reproducible from its trace" and record["trials"] == 2
    tried = {c["candidate"]: c for c in record["candidates"]}
    assert list(tried) == ["related", "ended", "interleaved", "timed", "serialized",
                           "concurrent", "whole trace"], tried
    assert tried["concurrent"]["rounds"] >= 2, tried   # each try's rounds, none reproducing
    assert all(c["tries"] == 2 and c["saw"] == {"nothing": 2} for c in tried.values()), tried
    assert "NOT REPRODUCIBLE FROM ITS TRACE" in open(os.path.join(out, "report.txt")).read()
    assert json.load(open(os.path.join(finding, "reduce", "not-reproducible.json"))) == record
    history = subprocess.run([sys.executable, KEWPIE, "history", "findings",
                              f"--workdir={kewpie.workdir}"], capture_output=True, text=True,
                             timeout=120, stdin=subprocess.DEVNULL)
    assert history.returncode == 0, history.stdout + history.stderr
    line, = [l for l in history.stdout.splitlines() if "no-repro" in l]
    assert re.search(r"\scrash\s+\w{12}\s.*\sno-repro\s+planted crash", line), history.stdout
