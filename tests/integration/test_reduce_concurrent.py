"""--mode=reduce of a crash that needs two connections inside the server at once, on real
servers with the planted race (tests/fixtures/hunt/planted_race.c, gcc-built: ``kw_race``
crashes when two threads are inside it at the same time).

The trace's times never overlap, so every start candidate that runs one statement at a
time (related, ended, serialized) or keeps the trace's happens-before order
(interleaved, timed) finds nothing; the ``concurrent`` candidate -- every connection at
once, free-running, in rounds -- crashes the server, the passes reduce it so, and the
case runs its connections at once in rounds (send/reap, step by step) and crashes
10.11.19 and 10.11.18 under kewpie and mysql-test-run.  The same case passes with the
race fixed (the library built with -DKW_PLANTED_FIXED).  Robust by design: a call
spends 20 ms inside ``kw_race`` per row, so two statements sent together (the lanes
start at one barrier; the case sends one right after the other) are inside it
together, and every candidate and the case repeat it in up to 100 rounds.

Covers: lib/reduce/concurrent.py, lib/reduce/freerun.py, lib/reduce/check.py, lib/reduce/reducer.py, lib/reduce/mtrcase.py, lib/reduce/attempts.py, lib/modes/reduce/run.py
"""
import json
import os
import re
import shutil
import tempfile

import pytest

from tests.conftest import tagged
from tests.fixtures.hunt.planted import RACE_LIBRARY, RACE_SOURCE, build_plugin_dir, \
    remove_plugin_dir
from tests.fixtures.reduce.planted import (RACE_CRASHING, RACE_SIGNATURE, build_fixed_library,
                                           race_trace, write_finding)

TREE_18 = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "trees", "10.11.18")


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding the planted race (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def test_a_race_of_two_connections_is_reduced_concurrent(kewpie, plugin_dir, tmp_path):
    statements, times = race_trace()
    finding = write_finding(str(tmp_path / "t0001-1-crash-race"), statements,
                            [f"--plugin-dir={plugin_dir}"], signature=RACE_SIGNATURE,
                            times=times)
    # the case's folder where the server's user reaches it (mariadb-test runs as that
    # user), at a path without '-' (mtr's --suite cannot take one)
    base = tempfile.mkdtemp(prefix="kwreduce", dir="/tmp")
    os.chmod(base, 0o755)
    try:
        _reduced_concurrent(kewpie, finding, os.path.join(base, "out"))
        _passes_when_fixed(kewpie, base, os.path.join(base, "out"))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _reduced_concurrent(kewpie, finding, out):
    proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}", timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert not tagged(kewpie.workdir)
    for name, order in (("related", "serial"), ("ended", "ended"),
                        ("interleaved", "interleaved"), ("timed", "timed"),
                        ("serialized", "serial")):
        assert re.search(rf"reduce: {name} \({order} replay\): nothing", proc.stdout), \
            (name, proc.stdout[-4000:])
    assert re.search(r"reduce: the concurrent statements reproduce: \d+ -> \d+ statements",
                     proc.stdout), proc.stdout[-4000:]
    figures = json.load(open(os.path.join(out, "reduce.json")))
    assert figures["order"] == "concurrent" and figures["statements_out"] <= 5, figures
    assert figures["case_rounds"] == 100 and figures["replay_round"] >= 1
    test = open(figures["test"]).read()
    assert "--let $kw_rounds_left= 100" in test and "while ($kw_rounds_left)" in test, test
    assert test.count(f"send {RACE_CRASHING};") == 2, test
    assert "connect (con2,localhost,root,,test);" in test, test
    present = " ".join(figures["present"])
    assert "10.11.19" in present and (not os.path.isdir(TREE_18) or "10.11.18" in present), \
        figures["confirmation"]
    assert not figures["absent"], figures["confirmation"]
    assert all(run["reproduced"] for run in figures["confirmation"]), figures["confirmation"]


def _passes_when_fixed(kewpie, base, out):
    """The reduced case, copied, run with the race fixed: it passes (its rounds run out)."""
    suite = os.path.join(base, "kw_reduce")
    shutil.copytree(os.path.join(out, "mtr", "kw_reduce"), suite, symlinks=True)
    fixed = os.path.join(suite, "plugin", "fixed")
    build_fixed_library(fixed, RACE_SOURCE, RACE_LIBRARY)
    for folder, ext in (("t", "test"), ("r", "result")):
        shutil.move(os.path.join(suite, folder, f"reduced.{ext}"),
                    os.path.join(suite, folder, f"fixed.{ext}"))
    os.unlink(os.path.join(suite, "t", "reduced.opt"))
    open(os.path.join(suite, "t", "fixed.opt"), "w").write(f"--plugin-dir={fixed}\n")
    mtr = kewpie.run("--mode=mtr", f"--suitepath={base}", "--suite=kw_reduce",
                     "kw_reduce.fixed", timeout=300)
    assert re.search(r"kw_reduce\.fixed\s+\[ pass \]", mtr.stdout), mtr.stdout[-3000:]
