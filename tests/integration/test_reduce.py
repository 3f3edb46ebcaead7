"""--mode=reduce on real servers: the planted UDF crash (gcc-built, tests/fixtures/hunt/)
buried in a small multi-connection trace is reduced on two bots (--reduce-parallel 2)
-- interrupted once with SIGINT (nothing left running, the smallest case kept) and
resumed -- to the statements it needs; the reduced case fails under kewpie
--mode=mtr and under mysql-test-run and passes with the defect removed; the confirmation names both code trees.  A planted
differential wrong result (s1 with another div_precision_increment) is reduced to a
check that dies under both tools (the query run by the mysql client, its rows compared
with the correct server's written into the case) and passes without s1's option.  Bad input: a
folder that is no finding, a trace that does not reproduce (one ERROR line, exit 2,
nothing left running).  The parallel check (--reduce-parallel 2: two bots) gives the
same reduced case as the one-at-a-time check, and leaves nothing running.  The
sporadic planted crash (fires 1 time in 3) is reduced with --trials.  A
multi-connection trace whose replay in send order waits on locks and does not crash
is reduced from its serialized form (the start's serialized candidate), to one
connection.

Covers: lib/modes/reduce/run.py, lib/reduce/, lib/reduce/parallel.py, lib/modes/mtr/lane.py, lib/mtr/reference.py
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

import pytest

from lib.hunt.wrongresult.rowsform import DIFFERENTIAL
from lib.mtr.reference import lease_reference_ports, reference_mtr_env
from lib.platform.ports import default_lock_dir
from lib.reduce.settings import PINNED
from tests.conftest import tagged
from tests.fixtures.hunt.planted import build_plugin_dir, remove_plugin_dir
from tests.fixtures.reduce.planted import (PLANTED, SPORADIC, WRONG_OPTION,
                                           build_fixed_library, crash_trace, locked_trace,
                                           wrong_result_trace, write_finding,
                                           write_wrong_result_finding)

MTR_ROOT = "/usr/share/mysql/mysql-test"
TREE_18 = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "trees", "10.11.18")


def run_reference_mtr(suite: str, base: str, *names: str) -> subprocess.CompletedProcess:
    """MariaDB's mysql-test-run.pl on the suite's cases, on leased ports, its vardir and
    temporary files under base (nothing in /tmp's top level, no /tmp/mysql-unique-ids)."""
    tmpdir = os.path.join(base, "mtr-tmp")
    os.makedirs(tmpdir, mode=0o755, exist_ok=True)
    with lease_reference_ports(default_lock_dir()) as span:
        return subprocess.run(["perl", "./mysql-test-run.pl", "--force", f"--suite={suite}",
                               f"--vardir={os.path.join(base, 'var')}", *names],
                              cwd=MTR_ROOT, capture_output=True, text=True, timeout=300,
                              env=reference_mtr_env(span, tmpdir))


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding the planted UDF (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def _errors(out):
    return [l for l in out.splitlines() if " ERROR " in l]


def _interrupt_after(kewpie, line_re, *args):
    """Start kewpie, SIGINT it once a line matches; (exit status, output)."""
    proc = kewpie.popen(*args)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if re.search(line_re, line):
            proc.send_signal(signal.SIGINT)
            break
    rest, _ = proc.communicate(timeout=120)
    return proc.returncode, "".join(seen) + rest


def test_planted_crash_reduced_resumed_and_confirmed(kewpie, plugin_dir, tmp_path):
    finding = write_finding(str(tmp_path / "t0001-1-crash-planted"), crash_trace(10, 2, 3),
                            [f"--plugin-dir={plugin_dir}"])
    out = str(tmp_path / "out")
    args = ("--mode=reduce", finding, f"--reduce-out={out}", "--reduce-parallel=2")
    code, text = _interrupt_after(kewpie, r"reduce: pass verbs:", *args)
    assert code != 0 and not tagged(kewpie.workdir), text[-2000:]
    saved = json.load(open(os.path.join(out, "smallest.json")))
    assert "verbs" in saved["passes_done"] and len(saved["statements"]) < 16

    proc = kewpie.run(*args, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert re.search(r"reduce: resuming from \d+ statements", proc.stdout)
    figures = json.load(open(os.path.join(out, "reduce.json")))
    assert figures["statements_in"] == 16 and figures["resumed"]
    test = open(figures["test"]).read()
    kept = [l for l in test.splitlines() if l.rstrip(";") in PLANTED or "kw_armed (v) VALUES" in l
            or l.startswith("SELECT kw_planted")]
    assert len(kept) == figures["statements_out"] <= 5, test  # the INSERTs merged into one
    assert test.splitlines()[test.splitlines().index("SELECT kw_planted(COUNT(*)) FROM kw_armed;") + 1] == ""
    present = " ".join(figures["present"])
    assert "10.11.19" in present and (not os.path.isdir(TREE_18) or "10.11.18" in present)
    report = open(figures["report"]).read()
    assert "Signature: crash | signal 11 | frames: kw_planted" in report
    assert "present in 10.11.19" in report

    # the case under kewpie --mode=mtr and mysql-test-run: the planted library fails it,
    # the fixed one passes it (a copy of the suite at a path without '-', which mtr's
    # --suite cannot take)
    suite_src = os.path.dirname(os.path.dirname(figures["test"]))
    base = tempfile.mkdtemp(prefix="kwreduce", dir="/tmp")
    os.chmod(base, 0o755)  # mariadb-test runs as the server's user
    try:
        suite = os.path.join(base, "kw_reduce")
        shutil.copytree(suite_src, suite, symlinks=True)
        fixed = os.path.join(suite, "plugin", "fixed")
        build_fixed_library(fixed)
        shutil.copy(os.path.join(suite, "t", "reduced.test"), os.path.join(suite, "t", "fixed.test"))
        shutil.copy(os.path.join(suite, "r", "reduced.result"), os.path.join(suite, "r", "fixed.result"))
        open(os.path.join(suite, "t", "reduced.opt"), "w").write(
            f"--plugin-dir={os.path.join(suite, 'plugin')}\n")
        open(os.path.join(suite, "t", "fixed.opt"), "w").write(f"--plugin-dir={fixed}\n")
        mtr = kewpie.run("--mode=mtr", "--force", f"--suitepath={base}", "--suite=kw_reduce",
                         "kw_reduce.reduced", "kw_reduce.fixed", timeout=240)
        assert mtr.returncode == 1, mtr.stdout[-3000:]
        assert re.search(r"kw_reduce\.reduced\s+\[ fail \]", mtr.stdout)
        assert "Lost connection" in mtr.stdout
        assert re.search(r"kw_reduce\.fixed\s+\[ pass \]", mtr.stdout), mtr.stdout[-3000:]
        if os.path.isfile(os.path.join(MTR_ROOT, "mysql-test-run.pl")):
            real = run_reference_mtr(suite, base, "reduced", "fixed")
            assert real.returncode != 0, real.stdout[-3000:]
            assert re.search(r"kw_reduce\.reduced\s+\[ fail \]", real.stdout), real.stdout[-3000:]
            assert re.search(r"kw_reduce\.fixed\s+\[ pass \]", real.stdout), real.stdout[-3000:]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_planted_wrong_result_reduced_to_a_check_that_dies(kewpie, tmp_path):
    finding = write_wrong_result_finding(str(tmp_path / "t0001-1-wrong-result-planted"),
                                         wrong_result_trace(6, seed=2))
    out = str(tmp_path / "out")
    proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}", timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    figures = json.load(open(os.path.join(out, "reduce.json")))
    assert figures["statements_out"] <= 3 and figures["options"] == [[], [WRONG_OPTION]]
    text = open(figures["test"]).read()
    # the correct server's rows written into the case, the query run by the client and
    # compared with them: no digest, no CTE around the query
    assert f"  --die {DIFFERENTIAL}" in text.splitlines() and "MD5(" not in text
    assert "--write_file $MYSQL_TMP_DIR/kw_compared_0.rows KW_END_OF_ROWS" in text
    base = tempfile.mkdtemp(prefix="kwreduce", dir="/tmp")
    os.chmod(base, 0o755)  # mariadb-test runs as the server's user
    try:
        suite = os.path.join(base, "kw_reduce")
        shutil.copytree(os.path.dirname(os.path.dirname(figures["test"])), suite)
        # s1's option, after the settings mysql-test's config changes, pinned to s1's values
        opts = open(os.path.join(suite, "t", "reduced.opt")).read().split()
        assert opts[-1] == WRONG_OPTION and WRONG_OPTION not in opts[:-1], opts
        pinned = {"--" + n.replace("_", "-") for n in PINNED}
        assert {o.split("=", 1)[0] for o in opts[:-1]} <= pinned, opts
        # the defect removed: the same case without s1's option
        shutil.copy(figures["test"], os.path.join(suite, "t", "fixed.test"))
        shutil.copy(os.path.join(suite, "r", "reduced.result"), os.path.join(suite, "r", "fixed.result"))
        mtr = kewpie.run("--mode=mtr", "--force", f"--suitepath={base}", "--suite=kw_reduce",
                         "kw_reduce.reduced", "kw_reduce.fixed", timeout=240)
        real = None
        if os.path.isfile(os.path.join(MTR_ROOT, "mysql-test-run.pl")):
            real = run_reference_mtr(suite, base, "reduced", "fixed")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if real is not None:
        assert real.returncode != 0, real.stdout[-3000:]
        assert re.search(r"kw_reduce\.reduced\s+\[ fail \]", real.stdout), real.stdout[-3000:]
        assert DIFFERENTIAL in real.stdout, real.stdout[-3000:]
        assert re.search(r"kw_reduce\.fixed\s+\[ pass \]", real.stdout), real.stdout[-3000:]
    assert mtr.returncode == 1, mtr.stdout[-3000:]
    assert re.search(r"kw_reduce\.reduced\s+\[ fail \]", mtr.stdout)
    # the failure's one line is mysqltest's own (issue 47: the real error, once)
    assert re.search(r"INFO (mysqltest: )?At line \d+: " + re.escape(DIFFERENTIAL), mtr.stdout), \
        mtr.stdout[-3000:]
    assert re.search(r"kw_reduce\.fixed\s+\[ pass \]", mtr.stdout), mtr.stdout[-3000:]


def test_bad_input_one_error_exit_2(kewpie, plugin_dir, tmp_path):
    nothing = tmp_path / "not_a_finding"
    nothing.mkdir()
    proc = kewpie.run("--mode=reduce", str(nothing))
    assert proc.returncode == 2 and len(_errors(proc.stdout + proc.stderr)) == 1, proc.stdout
    assert "not a finding folder" in proc.stdout + proc.stderr

    # two rows only: the UDF never sees three, the trace does not crash
    harmless = [(0, PLANTED[0]), (0, PLANTED[1]), (0, PLANTED[2]), (0, PLANTED[3]),
                (0, "SELECT kw_planted(COUNT(*)) FROM kw_armed")]
    finding = write_finding(str(tmp_path / "t0001-1-crash-harmless"), harmless,
                            [f"--plugin-dir={plugin_dir}"])
    proc = kewpie.run("--mode=reduce", finding)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2 and len(_errors(out)) == 1, out[-3000:]
    assert "does not reproduce the finding's signature" in out
    assert not tagged(kewpie.workdir)


def test_parallel_check_gives_the_serial_reduction(kewpie, plugin_dir, tmp_path):
    finding = write_finding(str(tmp_path / "t0001-1-crash-parallel"), crash_trace(8, 2, 5),
                            [f"--plugin-dir={plugin_dir}"])
    reduced = {}
    for width in (2, 1):
        out = str(tmp_path / f"out{width}")
        proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}",
                          f"--reduce-parallel={width}", timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert f"{width} at once" in proc.stdout
        assert not tagged(kewpie.workdir)
        figures = json.load(open(os.path.join(out, "reduce.json")))
        assert figures["parallel"] == width
        smallest = json.load(open(os.path.join(out, "smallest.json")))
        reduced[width] = (smallest["statements"], smallest["options"],
                          open(figures["test"]).read().replace(out, "OUT"))
    assert reduced[2] == reduced[1]
    assert len(reduced[1][0]) <= 5


# Tries per candidate for the sporadic crash (it fires 1 time in 3): a candidate that
# still crashes is missed with probability (2/3)**30 ~ 5e-6, so the whole reduction
# (a few dozen failing candidates) goes wrong about once in 10,000 runs.
SPORADIC_TRIALS = 30


def test_sporadic_crash_reduced_with_trials(kewpie, plugin_dir, tmp_path):
    finding = write_finding(str(tmp_path / "t0001-1-crash-sporadic"),
                            crash_trace(6, 2, 3, crashing=SPORADIC),
                            [f"--plugin-dir={plugin_dir}"])
    # the case where the servers' user reaches it: its confirmation runs the printed lines
    # (--repeat=30 under both tools) and both must see the crash that fires 1 time in 3
    base = tempfile.mkdtemp(prefix="kwreduce", dir="/tmp")
    os.chmod(base, 0o755)
    try:
        out = os.path.join(base, "out")
        proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}",
                          f"--trials={SPORADIC_TRIALS}", timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert not tagged(kewpie.workdir)
        figures = json.load(open(os.path.join(out, "reduce.json")))
        test = open(figures["test"]).read()
        report = open(figures["report"]).read()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert figures["trials"] == SPORADIC_TRIALS and figures["statements_in"] == 12
    assert figures["statements_out"] <= 5, test
    assert SPORADIC + ";" in test.splitlines()
    assert "Signature: crash | signal 11 | frames: kw_planted" in report
    assert "10.11.19" in " ".join(figures["present"])
    assert "under kewpie only" not in " ".join(figures["present"])
    assert "under mtr only" not in " ".join(figures["present"]), figures["present"]


def test_locked_multi_connection_trace_reduced_from_its_serialized_form(kewpie, plugin_dir,
                                                                        tmp_path):
    trace = locked_trace()
    finding = write_finding(str(tmp_path / "t0001-1-crash-locked"), trace,
                            [f"--plugin-dir={plugin_dir}"])
    out = str(tmp_path / "out")
    proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}", "--reduce-parallel=2",
                      timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not tagged(kewpie.workdir)
    assert re.search(r"reduce: the serialized statements reproduce: 15 -> 1[0-9] statements",
                     proc.stdout), proc.stdout[-3000:]
    assert "lock waits at 1 s" in proc.stdout
    figures = json.load(open(os.path.join(out, "reduce.json")))
    assert figures["statements_in"] == len(trace)
    test = open(figures["test"]).read()
    assert figures["statements_out"] <= 5, test      # function, table, view, one INSERT, query
    assert "START TRANSACTION" not in test and "SLEEP" not in test
    assert not re.search(r"^connect", test, re.M)    # one connection
    assert "SELECT kw_planted(COUNT(*)) FROM kw_view;" in test.splitlines()
