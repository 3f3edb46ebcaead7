"""--mode=reduce RUN on a real hunt's run folder: a hunt of two trials finds the planted UDF
crash twice (one signature, tagged as the known bug of a --known-bugs file); the run is
reduced one finding per signature -- skipped as known, then (--reduce-again) stopped at a
2-second --reduce-timeout with nothing left running, then resumed to a reduced case present
on the code trees -- and a last call shows the finished reduction without running it again;
the triage table (triage.json, triage.md) is asserted after each.  Bad input: a folder that
is neither a finding nor a run folder (one ERROR line, exit 2).

Covers: lib/modes/reduce/wholerun.py, lib/reduce/runfolder.py, lib/reduce/triage.py, lib/platform/timecap.py, lib/modes/reduce/run.py
"""
import json
import os
import re

import pytest

from tests.conftest import tagged
from tests.fixtures.hunt.planted import CRASH_GRAMMAR, build_plugin_dir, remove_plugin_dir


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding the planted UDF (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def _triage(run):
    """The run's triage.json, and its one row."""
    data = json.load(open(os.path.join(run, "reduce", "triage.json")))
    (row,) = data["rows"]
    return data, row


def _errors(text):
    return [line for line in text.splitlines() if " ERROR " in line]


def test_a_hunts_run_reduced_one_finding_per_signature(kewpie_reachable, plugin_dir, tmp_path):
    kewpie = kewpie_reachable
    known = tmp_path / "known_bugs.txt"
    known.write_text("KW-7 open re:'frames: kw_planted' the planted UDF crash\n")
    hunt = kewpie.run("--mode=hunt", f"--grammar={CRASH_GRAMMAR}", "--threads=1", "--trials=2",
                      "--trial-duration=60", f"--mysqld=--plugin-dir={plugin_dir}",
                      "--randgen-seed=3", f"--known-bugs={known}", "--allow-known", timeout=300)
    assert hunt.returncode == 0, hunt.stdout[-3000:] + hunt.stderr[-2000:]
    run = os.path.dirname(re.search(r"Summary: (\S+/summary\.json)", hunt.stdout).group(1))
    findings = sorted(os.listdir(os.path.join(run, "findings")))
    assert len(findings) == 2, findings
    traces = {f: json.load(open(os.path.join(run, "findings", f, "finding.json")))
              for f in findings}
    assert len({t["signature"]["id"] for t in traces.values()}) == 1
    sig = traces[findings[0]]["signature"]["id"]
    shortest = min(findings, key=lambda f: (traces[f]["files"]["trace_statements"],
                                            traces[f]["trial"]["number"]))

    # 1. the signature is a known bug: skipped, the bug named
    first = kewpie.run("--mode=reduce", run, timeout=120)
    assert first.returncode == 0, first.stdout[-3000:]
    data, row = _triage(run)
    assert (row["signature"], row["findings"], row["trials"]) == (sig, 2, [1, 2])
    assert row["result"] == "skipped-known" and row["verdict"].startswith("skipped: known KW-7")
    assert os.path.basename(row["finding"]) == shortest
    assert not os.path.exists(os.path.join(run, "reduce", sig))

    # 2. --reduce-again, capped at 2 s: stopped cleanly, exit 1, nothing left running
    capped = kewpie.run("--mode=reduce", run, "--reduce-again", "--reduce-timeout=2",
                        timeout=180)
    assert capped.returncode == 1, capped.stdout[-3000:]
    assert not tagged(kewpie.workdir)
    data, row = _triage(run)
    assert row["result"] == "stopped" and row["verdict"].startswith("stopped at the cap (2 s)")
    assert data["exit_status"] == 1 and not os.path.exists(os.path.join(row["output"],
                                                                        "reduce.json"))

    # 3. resumed without a cap: reduced, confirmed on the trees, the table says so
    resumed = kewpie.run("--mode=reduce", run, "--reduce-again", timeout=300)
    assert resumed.returncode == 0, resumed.stdout[-4000:] + resumed.stderr[-2000:]
    data, row = _triage(run)
    assert row["result"] == "reduced", row
    assert row["statements_out"] <= 5 and row["statements"] > row["statements_out"]
    assert re.fullmatch(rf"reduced {row['statements']} -> {row['statements_out']} statements; "
                        r"present in 10\.11\.19 \(/usr\).*", row["verdict"]), row["verdict"]
    assert "SELECT kw_planted(COUNT(*)) FROM kw_armed;" in open(row["case"]).read()
    assert row["output"] == os.path.join(run, "reduce", sig)
    assert (data["exit_status"], data["results"]) == (0, {"reduced": 1})
    md = open(os.path.join(run, "reduce", "triage.md")).read()
    assert f"| {sig} | crash (crash) | 2 (1, 2) | {shortest} " in md
    assert "[known: KW-7" in md and row["case"] in md

    # 4. again: the finished reduction is shown, not run again
    again = kewpie.run("--mode=reduce", run, timeout=120)
    assert again.returncode == 0, again.stdout[-3000:]
    assert re.search(rf"signature 1 of 1: {sig}: reduced before: reduced ", again.stdout)
    assert "Reducing " + row["finding"] not in again.stdout
    assert _triage(run)[1] == row
    assert not tagged(kewpie.workdir)


def test_a_folder_neither_finding_nor_run_is_one_error(kewpie, tmp_path):
    (tmp_path / "findings").mkdir()        # findings/ without summary.json: no run folder
    proc = kewpie.run("--mode=reduce", str(tmp_path), timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2 and len(_errors(out)) == 1, out[-2000:]
    assert "not a finding folder" in out and "run folder" in out
