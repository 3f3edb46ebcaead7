"""--mode=reduce of a crash that needs state an earlier statement left in the server
process, which a reused server keeps: the planted library kw_state.so
(tests/fixtures/hunt/planted_state.c, gcc-built now, linked with -z nodelete so it
outlives its dropped functions) crashes in kw_stateful over three rows once kw_arm() ran
in the process -- in this try or in an earlier try on the same server.  The reuse rule's
fingerprint sees nothing (the try's UDFs are dropped again), so a try on a reused server
crashes without SELECT kw_arm(), and the first round's case (what the reduction wrote
before) lacks it and crashes no fresh server.  The reduction must see that its case does
not fail on fresh servers, reduce again with every try on fresh servers, and keep the
statements that set the state: the case crashes a fresh server on every code tree under
kewpie --mode=mtr and mysql-test-run.pl (the confirmation: present, both tools), and
passes with the library fixed.

Covers: lib/reduce/check.py, lib/reduce/reducer.py, lib/modes/reduce/run.py, lib/reduce/attempts.py, tests/fixtures/hunt/planted_state.c
"""
import json
import os
import re
import shutil
import tempfile

import pytest

from tests.fixtures.hunt.planted import build_plugin_dir, remove_plugin_dir
from tests.fixtures.reduce.planted import (STATE_ARM, STATE_CRASHING, STATE_FUNCTION,
                                           STATE_SIGNATURE, build_state_library, state_trace,
                                           write_finding)
from tests.integration.test_reduce import MTR_ROOT, TREE_18, run_reference_mtr


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding the planted libraries and kw_state.so, removed after."""
    path = build_plugin_dir()
    build_state_library(path)
    yield path
    remove_plugin_dir(path)


def test_state_left_by_an_earlier_try_is_kept_in_the_case(kewpie, plugin_dir, tmp_path):
    trace = state_trace(10)
    finding = write_finding(str(tmp_path / "t0001-1-crash-state"), trace,
                            [f"--plugin-dir={plugin_dir}"], STATE_SIGNATURE)
    # the case's folder where the server's user reaches it, at a path without '-'
    base = tempfile.mkdtemp(prefix="kwreduce", dir="/tmp")
    os.chmod(base, 0o755)
    try:
        out = os.path.join(base, "out")
        proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}",
                          "--reduce-parallel=1", timeout=900)
        assert proc.returncode == 0, proc.stdout[-4000:]
        # the first round's case failed only on a server an earlier try had armed
        assert re.search(r"reduce: the case of \d+ statements does not fail on fresh servers",
                         proc.stdout), proc.stdout[-4000:]
        assert re.search(r"reduce: pass statements \(fresh servers\): ", proc.stdout)
        figures = json.load(open(os.path.join(out, "reduce.json")))
        assert figures["fresh_round"] and figures["statements_in"] == len(trace)
        assert any(p["fresh"] for p in figures["passes"])
        test = open(figures["test"]).read()
        lines = test.splitlines()
        # the statements that set the state are kept, before the crashing one
        for sql in (STATE_FUNCTION, *STATE_ARM):
            assert sql + ";" in lines, test
        assert lines.index(STATE_ARM[1] + ";") < lines.index(STATE_CRASHING + ";")
        assert figures["statements_out"] <= 7 and "kw_noise" not in test, test
        present = " ".join(figures["present"])
        assert "10.11.19" in present and not figures["absent"], figures["confirmation"]
        assert "only)" not in present, present       # both tools crash a fresh server
        assert os.path.isdir(TREE_18) <= ("10.11.18" in present)
        _passes_when_fixed(kewpie, base, out)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _passes_when_fixed(kewpie, base, out):
    """The reduced case beside a copy run with kw_state.so fixed: it fails, the copy passes."""
    suite = os.path.join(base, "kw_reduce")
    shutil.copytree(os.path.join(out, "mtr", "kw_reduce"), suite, symlinks=True)
    fixed = os.path.join(suite, "plugin", "fixed")
    build_state_library(fixed, fixed=True)
    for folder, ext in (("t", "test"), ("r", "result")):
        shutil.copy(os.path.join(suite, folder, f"reduced.{ext}"),
                    os.path.join(suite, folder, f"fixed.{ext}"))
    open(os.path.join(suite, "t", "reduced.opt"), "w").write(
        f"--plugin-dir={os.path.join(suite, 'plugin')}\n")
    open(os.path.join(suite, "t", "fixed.opt"), "w").write(f"--plugin-dir={fixed}\n")
    mtr = kewpie.run("--mode=mtr", "--force", f"--suitepath={base}", "--suite=kw_reduce",
                     "kw_reduce.reduced", "kw_reduce.fixed", timeout=240)
    assert re.search(r"kw_reduce\.reduced\s+\[ fail \]", mtr.stdout), mtr.stdout[-3000:]
    assert re.search(r"kw_reduce\.fixed\s+\[ pass \]", mtr.stdout), mtr.stdout[-3000:]
    if os.path.isfile(os.path.join(MTR_ROOT, "mysql-test-run.pl")):
        real = run_reference_mtr(suite, base, "reduced", "fixed")
        assert re.search(r"kw_reduce\.reduced\s+\[ fail \]", real.stdout), real.stdout[-3000:]
        assert re.search(r"kw_reduce\.fixed\s+\[ pass \]", real.stdout), real.stdout[-3000:]
