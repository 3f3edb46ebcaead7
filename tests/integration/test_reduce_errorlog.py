"""--mode=reduce of an errorlog finding on a real server: the planted error-log line (the
UDF kw_logs, gcc-built from tests/fixtures/hunt/planted_errorlog.c, writes an [ERROR] line
to the server's log when its argument is 3) buried in a small multi-connection trace is
reduced to the statements it needs -- a candidate reproduces when the error log gained,
during its replay, a line the hunt's errorlog oracle signs as the finding -- and the case
fails the bug's way (its --die with the logged line) on every code tree under kewpie
--mode=mtr and mysql-test-run.pl (the confirmation: present in each); with the UDF
fixed (it logs nothing) the case passes under both tools.

Covers: lib/reduce/errorlog.py, lib/reduce/check.py, lib/reduce/mtrcase.py, lib/reduce/confirm.py, lib/reduce/case.py
"""
import json
import os
import re
import shutil
import tempfile

import pytest

from tests.fixtures.hunt.planted import (ERRORLOG_LIBRARY, ERRORLOG_SOURCE, build_plugin_dir,
                                        remove_plugin_dir)
from tests.fixtures.reduce.planted import (ERRORLOG_FUNCTION, ERRORLOG_QUERY,
                                           build_fixed_library, errorlog_trace,
                                           write_errorlog_finding)
from tests.integration.test_reduce import MTR_ROOT, TREE_18, run_reference_mtr


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding the planted UDFs (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def test_planted_errorlog_line_reduced_and_confirmed(kewpie, plugin_dir, tmp_path):
    trace = errorlog_trace(10)
    finding = write_errorlog_finding(str(tmp_path / "t0001-1-errorlog-planted"), trace,
                                     [f"--plugin-dir={plugin_dir}"])
    # the case's folder where the server's user reaches it (mariadb-test runs as that
    # user), at a path without '-' (mtr's --suite cannot take one)
    base = tempfile.mkdtemp(prefix="kwreduce", dir="/tmp")
    os.chmod(base, 0o755)
    try:
        _reduced_and_confirmed(kewpie, finding, trace, os.path.join(base, "out"))
        _passes_when_fixed(kewpie, base, os.path.join(base, "out"))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _reduced_and_confirmed(kewpie, finding, trace, out):
    proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}", "--reduce-parallel=1",
                      timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:]
    figures = json.load(open(os.path.join(out, "reduce.json")))
    test = open(figures["test"]).read()
    assert figures["statements_in"] == len(trace)
    assert figures["statements_out"] <= 5 and "kw_noise" not in test, test
    assert ERRORLOG_FUNCTION + ";" in test and ERRORLOG_QUERY + ";" in test
    # the log's size noted before the statements, the check after them
    assert test.index("let KW_ERRORLOG=") < test.index(ERRORLOG_FUNCTION) < \
        test.index(ERRORLOG_QUERY) < test.index("--die errorlog: ")
    present = figures["present"]
    assert "10.11.19" in " ".join(present) and not figures["absent"], figures["confirmation"]
    assert not any("only)" in p for p in present), present    # both tools fail it
    assert os.path.isdir(TREE_18) <= ("10.11.18" in " ".join(present))
    report = open(figures["report"]).read()
    assert "Signature: errorlog | [ERROR] kw_logs: planted error at N" in report


def _passes_when_fixed(kewpie, base, out):
    """The reduced case beside a copy run with the UDF fixed (it logs nothing)."""
    suite = os.path.join(base, "kw_reduce")
    shutil.copytree(os.path.join(out, "mtr", "kw_reduce"), suite, symlinks=True)
    fixed = os.path.join(suite, "plugin", "fixed")
    build_fixed_library(fixed, ERRORLOG_SOURCE, ERRORLOG_LIBRARY)
    for folder, ext in (("t", "test"), ("r", "result")):
        shutil.copy(os.path.join(suite, folder, f"reduced.{ext}"),
                    os.path.join(suite, folder, f"fixed.{ext}"))
    open(os.path.join(suite, "t", "reduced.opt"), "w").write(
        f"--plugin-dir={os.path.join(suite, 'plugin')}\n")
    open(os.path.join(suite, "t", "fixed.opt"), "w").write(f"--plugin-dir={fixed}\n")
    mtr = kewpie.run("--mode=mtr", "--force", f"--suitepath={base}", "--suite=kw_reduce",
                     "kw_reduce.reduced", "kw_reduce.fixed", timeout=240)
    assert re.search(r"kw_reduce\.reduced\s+\[ fail \]", mtr.stdout), mtr.stdout[-3000:]
    assert "errorlog: " in mtr.stdout and "kw_logs: planted error at 3" in mtr.stdout
    assert re.search(r"kw_reduce\.fixed\s+\[ pass \]", mtr.stdout), mtr.stdout[-3000:]
    if os.path.isfile(os.path.join(MTR_ROOT, "mysql-test-run.pl")):
        real = run_reference_mtr(suite, base, "reduced", "fixed")
        assert re.search(r"kw_reduce\.reduced\s+\[ fail \]", real.stdout), real.stdout[-3000:]
        assert "kw_logs: planted error at 3" in real.stdout, real.stdout[-3000:]
        assert re.search(r"kw_reduce\.fixed\s+\[ pass \]", real.stdout), real.stdout[-3000:]
