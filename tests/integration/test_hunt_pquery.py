"""--mode=hunt with a pquery-style load (--sql-file) on real servers: the planted UDF crash
mined from a mysqltest script, replayed on two connections in random order, found, signed
as the grammar's planted crash is, and reduced to a mysql-test case confirmed on both code
trees; a healthy corpus over two trials with random server options finds nothing; the
surface generator's load (--sql-file=surface: its schema, then its statements on one
thread, the same every run) finds nothing on a healthy server, the error-log oracle on;
a source that does not exist is one ERROR line.

Covers: lib/hunt/pquery/, lib/hunt/surface/load.py, lib/hunt/trial.py, lib/modes/hunt/run.py, lib/randgen/channel.py
"""
import json
import os
import re
import shutil
import tempfile

import pytest

from tests.fixtures.hunt.planted import HERE, build_plugin_dir, remove_plugin_dir

PLANTED_TEST = os.path.join(HERE, "planted_crash.test")
HEALTHY = os.path.join(HERE, "pquery_healthy")


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding the planted UDF (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def _findings(stdout):
    folders = re.findall(r"^\d{8}-\d{6} INFO     (/\S+/findings/t\d{4}-\d+-[\w-]+)$", stdout, re.M)
    return {f: json.load(open(os.path.join(f, "finding.json"))) for f in folders}


def test_planted_crash_found_in_a_replayed_script_and_reduced(kewpie, plugin_dir, old_tree):
    proc = kewpie.run("--mode=hunt", f"--sql-file={PLANTED_TEST}", "--threads=2", "--trials=1",
                      "--trial-duration=60", f"--mysqld=--plugin-dir={plugin_dir}",
                      "--randgen-seed=11", timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"--sql-file \S+planted_crash.test: 9 statements from 1 file", proc.stdout)
    (folder, found), = _findings(proc.stdout).items()
    assert (found["kind"], found["tag"]) == ("crash", "new")
    assert found["signature"]["text"].startswith(
        "crash | signal 11 | frames: kw_planted < Item_func_udf_int::val_int")
    assert found["trial"]["grammar"] == PLANTED_TEST and found["trial"]["threads"] == 2
    assert f"--sql-file={PLANTED_TEST}" in found["reproduce"]
    trace = [json.loads(line) for line in open(os.path.join(folder, "trace.jsonl"))]
    sent = {r["sql"] for r in trace}
    assert "SELECT 'never sent'" not in sent and not any("$armed" in s for s in sent)
    assert {r["thread"] for r in trace} == {1, 2}
    # (two threads may both crash it: the report can stop short of the query)
    assert "SELECT kw_planted(COUNT(*)) FROM kw_armed" in [
        s["sql"] for s in found["details"]["in_flight"]]

    # the case where the servers' user can read it (pytest's folders are 0700): the
    # confirmation runs it from there under kewpie and under mtr, on trees/ too
    out = tempfile.mkdtemp(prefix="kewpie-it-pquery-", dir="/tmp")
    os.chmod(out, 0o755)
    try:
        reduced = kewpie.run("--mode=reduce", folder, f"--reduce-out={out}", timeout=300)
        assert reduced.returncode == 0, reduced.stdout[-3000:] + reduced.stderr[-2000:]
        figures = json.load(open(os.path.join(out, "reduce.json")))
        case = open(os.path.join(out, "mtr", "kw_reduce", "t", "reduced.test")).read()
    finally:
        shutil.rmtree(out, ignore_errors=True)
    # on failure: the case and the reduction's log (which candidates did not reproduce)
    assert figures["statements_out"] <= 4, case + "\n" + reduced.stdout[-6000:]
    assert "SELECT kw_planted(COUNT(*)) FROM kw_armed;" in case
    assert re.search(r"present in 10\.11\.19 \(/usr\), 10\.11\.18 ", reduced.stdout), \
        reduced.stdout[-2000:]


def test_healthy_corpus_with_random_options_finds_nothing(kewpie, tmp_path):
    options = tmp_path / "options.txt"
    options.write_text("--optimizer-switch=index_merge=off\n--join-cache-level=4\n"
                       "--innodb-flush-log-at-trx-commit=2\n")
    proc = kewpie.run("--mode=hunt", f"--sql-file={HEALTHY}", "--trials=2", "--threads=3",
                      "--trial-duration=3", f"--random-options={options}",
                      "--random-options-max=2", "--oracles=crash,hang,errorlog", timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.stdout.count("nothing found") == 2 and "(no findings)" in proc.stdout
    assert "refused: shutdown 1" in proc.stdout          # the corpus's SHUTDOWN is never sent
    assert "the errorlog oracle does not judge --sql-file trials" in proc.stdout
    summary = json.load(open(re.search(r"Summary: (\S+)", proc.stdout).group(1)))
    assert [t["seed"] for t in summary["trials"]] == [1, 2]
    assert all(t["statements"] > 20 and 1 <= len(t["options"]) <= 2 for t in summary["trials"])


def test_surface_load_on_a_healthy_server_finds_nothing(kewpie):
    # one thread, a fixed number of statements: the same statements every run
    proc = kewpie.run("--mode=hunt", "--sql-file=surface", "--trials=1", "--threads=1",
                      "--queries=400", "--trial-duration=120", "--randgen-seed=3",
                      "--oracles=crash,hang,errorlog", timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "nothing found" in proc.stdout and "(no findings)" in proc.stdout
    summary = json.load(open(re.search(r"Summary: (\S+)", proc.stdout).group(1)))
    (trial,) = summary["trials"]
    assert trial["statements"] >= 400 and trial["grammar"] == "surface"
    errors = re.search(r"trial 1 \[bot0\] .*?\(errors: (.*?)\), load ok", proc.stdout).group(1)
    refused = sum(int(e.split(" x")[1]) for e in errors.split(", ") if " x" in e)
    assert refused < trial["statements"] * 0.03, errors   # the generator's refusals


def test_missing_source_is_one_error_line(kewpie, tmp_path):
    proc = kewpie.run("--mode=hunt", f"--sql-file={tmp_path / 'nowhere.sql'}", "--trials=1")
    assert proc.returncode == 2, proc.stdout[-2000:]
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if " ERROR " in line]
    assert len(errors) == 1 and "no such file or folder" in errors[0], errors
    assert "Findings go to" not in proc.stdout
