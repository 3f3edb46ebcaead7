"""--mode=hunt on real servers: a planted UDF crash (gcc-built, loaded with CREATE FUNCTION
... SONAME) found and tagged new, then known, then known-fixed; a hang the grammar makes;
a planted differential difference (two servers that differ by div_precision_increment);
a planted replica divergence; a healthy run on parallel bots that finds nothing; bad
input (one ERROR line, exit 2, nothing left running).

Covers: lib/modes/hunt/run.py, lib/hunt/ (with lib/hunt/wrong.py, lib/hunt/wrongresult/), lib/randgen/trace.py, lib/checks/backtrace.py
"""
import json
import os
import re

import pytest

from tests.conftest import FIXTURE_SUITES
from tests.fixtures.hunt.planted import (CRASH_GRAMMAR, DIFFERENTIAL_GRAMMAR, DIVERGENCE_GRAMMAR,
                                         HANG_GRAMMAR, build_plugin_dir, remove_plugin_dir)

TYPES_ZZ = os.path.join(FIXTURE_SUITES, "wrongresult", "types.zz")


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding the planted UDF (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def _findings(stdout):
    """{folder: finding.json} of the findings a run printed."""
    folders = re.findall(r"^\d{8}-\d{6} INFO     (/\S+/findings/t\d{4}-\d+-[\w-]+)$", stdout, re.M)
    return {f: json.load(open(os.path.join(f, "finding.json"))) for f in folders}


def _hunt(kewpie, *args, timeout=300):
    return kewpie.run("--mode=hunt", "--trials=1", *args, timeout=timeout)


def test_planted_crash_is_new_then_known_then_known_fixed(kewpie, plugin_dir, tmp_path):
    common = [f"--grammar={CRASH_GRAMMAR}", "--threads=1", "--trial-duration=60",
              f"--mysqld=--plugin-dir={plugin_dir}", "--randgen-seed=3"]
    junit = tmp_path / "hunt.xml"
    first = _hunt(kewpie, *common, f"--junit-xml={junit}")
    assert first.returncode == 1, first.stdout[-3000:] + first.stderr[-2000:]
    (folder, found), = _findings(first.stdout).items()
    assert (found["kind"], found["tag"], found["bug"]) == ("crash", "new", None)
    sig = found["signature"]
    assert sig["text"].startswith("crash | signal 11 | frames: kw_planted < "
                                  "Item_func_udf_int::val_int")
    details = found["details"]  # one thread: one crashing statement, a whole report
    assert details["query"] == "SELECT kw_planted(COUNT(*)) FROM kw_armed"
    assert [s["sql"] for s in details["in_flight"]] == [details["query"]]
    # the per-connection trace names the crashing statement on the connection the report names
    trace = [json.loads(line) for line in open(os.path.join(folder, "trace.jsonl"))]
    assert [r["seq"] for r in trace] == sorted(r["seq"] for r in trace)
    last = [r for r in trace if r["conn"] == details["connection_id"]][-1]
    assert (last["sql"], last["result"], last["error"]) == (details["query"], "error", 2013)
    assert sum(1 for r in trace if r["sql"].startswith("INSERT INTO kw_armed")) >= 3
    assert "got signal 11" in open(os.path.join(folder, "errorlog-s0.txt")).read()
    assert "kw_planted" in open(os.path.join(folder, found["files"]["backtrace"])).read()
    assert found["reproduce"][:2] == ["./kewpie.py", "--mode=hunt"]
    assert f'type="new"' in junit.read_text()

    known = tmp_path / "known_bugs.txt"
    known.write_text(f"# the planted defect\nKW-1 open sig:{sig['id']} planted UDF crash\n")
    second = _hunt(kewpie, *common, f"--known-bugs={known}", "--allow-known")
    assert second.returncode == 0, second.stdout[-3000:]
    (_, again), = _findings(second.stdout).items()
    assert again["signature"]["id"] == sig["id"]
    assert (again["tag"], again["bug"]["id"]) == ("known", "KW-1")
    assert re.search(rf"{sig['id']}\s+crash\s+known\s+1\s+KW-1", second.stdout)

    known.write_text(f"KW-1 fixed:10.11.5 sig:{sig['id']} fixed in 10.11.5\n")
    third = _hunt(kewpie, *common, f"--known-bugs={known}", "--allow-known")
    assert third.returncode == 1, third.stdout[-3000:]
    (_, regression), = _findings(third.stdout).items()
    assert (regression["tag"], regression["bug"]["status"]) == ("known-fixed", "fixed:10.11.5")


def test_hang_found(kewpie):
    proc = _hunt(kewpie, f"--grammar={HANG_GRAMMAR}", "--threads=2", "--hang-timeout=3",
                 "--trial-duration=120")
    assert proc.returncode == 1, proc.stdout[-3000:]
    (folder, found), = _findings(proc.stdout).items()
    assert found["kind"] == "hang" and found["tag"] == "new"
    assert "Waiting for table metadata lock: select count(*) from kw_hang" in found["signature"]["text"]
    assert "SHOW FULL PROCESSLIST" in open(os.path.join(folder, "hang-s0.txt")).read()
    assert found["load"]["seconds"] < 60  # stopped by the oracle, not by the trial's end


def test_planted_differential_difference_found(kewpie):
    # s1 differs by div_precision_increment: the compared load sees the division differ,
    # and so does the differential oracle's generated SELECTs over the gendata tables
    proc = _hunt(kewpie, f"--grammar={DIFFERENTIAL_GRAMMAR}:{TYPES_ZZ}", "--topology=compare",
                 "--compare-mysqld=--div-precision-increment=8", "--oracles=differential",
                 "--wrong-result-budget=150", "--queries=30", "--randgen-seed=5")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    found = list(_findings(proc.stdout).values())
    assert found and all((f["kind"], f["oracle"], f["tag"]) == ("wrong-result", "differential", "new")
                         for f in found), found
    sources = {f["details"].get("source", "oracle") for f in found}
    assert sources == {"load (ResultsetComparator)", "oracle"}, sources
    load = next(f for f in found if f["details"].get("source"))
    assert load["signature"]["text"] == ("wrong-result | differential | "
                                         "select id, concat(?, v / ?) from kw_diff where id = ?")
    generated = next(f for f in found if not f["details"].get("source"))
    assert "/" in generated["details"]["queries"][0] or "AVG(" in generated["details"]["queries"][0]
    assert found[0]["topology"]["kind"] == "compare"


def test_replica_divergence_found(kewpie):
    proc = _hunt(kewpie, f"--grammar={DIVERGENCE_GRAMMAR}", "--topology=replication:1",
                 "--threads=1", "--queries=20")
    assert proc.returncode == 1, proc.stdout[-3000:]
    (folder, found), = _findings(proc.stdout).items()
    assert found["kind"] == "divergence" and found["server"] == "s1"
    assert found["signature"]["text"] == "divergence | replication | tables differ: test.kw_div"
    assert "on s0 but missing on s1" in open(os.path.join(folder, "divergence.txt")).read()
    assert found["topology"]["pairs"] == [[0, 1]]


def test_healthy_run_on_two_bots_finds_nothing(kewpie, tmp_path):
    junit = tmp_path / "healthy.xml"
    options = tmp_path / "options.txt"
    options.write_text("# one of these per trial\n--innodb-flush-log-at-trx-commit=0\n"
                       "--innodb-flush-log-at-trx-commit=2\n")
    proc = kewpie.run("--mode=hunt", "--grammar=conf/kewpie/transactions.yy", "--trials=3",
                      "--parallel=2", "--topology=replication:1", "--trial-duration=2",
                      "--threads=2", f"--random-options={options}", "--random-options-max=1",
                      f"--junit-xml={junit}", timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.stdout.count("nothing found") == 3 and "(no findings)" in proc.stdout
    assert re.search(r"trial \d \[bot1\]", proc.stdout)
    summary = json.load(open(re.search(r"Summary: (\S+)", proc.stdout).group(1)))
    assert summary["signatures"] == [] and [t["seed"] for t in summary["trials"]] == [1, 2, 3]
    assert all(t["statements"] > 0 for t in summary["trials"])
    # each trial's servers started with the random option its seed drew
    drawn = [t["options"] for t in summary["trials"]]
    assert all(len(o) == 1 and o[0].startswith("--innodb-flush-log-at-trx-commit=") for o in drawn)
    assert "<failure" not in junit.read_text()
    # the hunt's summary ends as every run's does: the RAM cache's size and cap
    assert re.search(r"INFO Cache \S+: \d+ MB \(cap \d+ MB; \d+ datadir template\(s\), "
                     r"\d+ cluster snapshot\(s\)\); --mode=cleanup --drop-cache empties it$",
                     proc.stdout, re.M), proc.stdout[-2000:]


@pytest.mark.parametrize("args,words", [
    (["--grammar=conf/nowhere.yy"], "--grammar conf/nowhere.yy: no such file"),
    (["--grammar=conf/kewpie/transactions.yy", "--known-bugs=/"], "cannot read it"),
])  # unknown oracles, topologies...: tests/unit/modes/hunt/test_hunt_mode.py, tests/unit/hunt/test_hunt_topology.py
def test_bad_input_is_one_error_line(kewpie, args, words):
    proc = _hunt(kewpie, *args)
    assert proc.returncode == 2, proc.stdout[-2000:]
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if " ERROR " in line]
    assert len(errors) == 1 and words in errors[0], errors
    assert "Findings go to" not in proc.stdout


def test_malformed_known_bugs_entry(kewpie, tmp_path):
    known = tmp_path / "kb.txt"
    known.write_text("# fine\nKW-1 open sig:0123456789ab ok\nKW-2 sometimes sig:0123456789ab\n")
    proc = _hunt(kewpie, "--grammar=conf/kewpie/transactions.yy", f"--known-bugs={known}")
    assert proc.returncode == 2
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if " ERROR " in line]
    assert len(errors) == 1 and f"{known}:3:" in errors[0] and "'sometimes'" in errors[0]
