"""The flake hunt's bookkeeping: which rounds are loaded, JUnit files read (pytest's and
kewpie's), failure rates per test and distinct failures, the busy processes stopped.

Covers: bench/flake_hunt.py, scripts/flake-hunt
"""
import importlib.util
import os
import sys

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load():
    spec = importlib.util.spec_from_file_location("flake_hunt_under_test",
                                                  os.path.join(ROOT, "bench", "flake_hunt.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


hunt = _load()

PYTEST_JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.integration.test_signals" name="test_signal_during_replication_suite[Signals.SIGINT]" time="9.1"/>
<testcase classname="tests.integration.test_signals" name="test_harness_killed_takes_servers_down" time="4.0">
<failure message="AssertionError: the server should be running&#10;assert []">trace</failure></testcase>
<testcase classname="tests.integration.test_galera" name="test_skipped" time="0"><skipped message="no galera"/></testcase>
</testsuite></testsuites>"""

KEWPIE_JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites>
<testsuite name="cluster_partitions"><testcase classname="cluster_partitions" name="shapes_test" time="50">
<failure message="error log warnings (suppress benign ones...):&#10;s1 (...)">x</failure></testcase>
<testcase classname="cluster_partitions" name="partitions_test" time="40"/></testsuite></testsuites>"""


def test_loaded_rounds_are_spread_evenly():
    assert hunt.loaded_rounds(10, 5) == {2, 4, 6, 8, 10}
    assert hunt.loaded_rounds(10, 10) == set(range(1, 11))
    assert hunt.loaded_rounds(10, 0) == set()
    assert len(hunt.loaded_rounds(7, 3)) == 3 and hunt.loaded_rounds(3, 9) == {1, 2, 3}


def test_pytest_junit_gives_node_ids_and_first_lines(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(PYTEST_JUNIT)
    results = hunt.parse_junit(str(path))
    assert [(r.test, r.outcome, r.message) for r in results] == [
        ("tests/integration/test_signals.py::test_signal_during_replication_suite[Signals.SIGINT]",
         "passed", ""),
        ("tests/integration/test_signals.py::test_harness_killed_takes_servers_down", "failed",
         "AssertionError: the server should be running"),
        ("tests/integration/test_galera.py::test_skipped", "skipped", "no galera")]
    assert hunt.parse_junit(str(tmp_path / "missing.xml")) == []


def test_kewpie_junit_names_suite_tests(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(KEWPIE_JUNIT)
    assert [(r.test, r.outcome) for r in hunt.parse_junit(str(path))] == [
        ("cluster_partitions.shapes_test", "failed"), ("cluster_partitions.partitions_test", "passed")]


def _run(round_no, loaded, outcomes, returncode=0):
    tests = [hunt.TestResult(name, outcome, message) for name, outcome, message in outcomes]
    return hunt.TargetRun(round_no, "t.py", loaded, f"/h/run-{round_no:03d}", returncode, 1.0, tests)


def test_rates_per_test_and_distinct_failures():
    runs = [_run(1, False, [("a", "passed", ""), ("b", "failed", "boom")]),
            _run(2, True, [("a", "passed", ""), ("b", "failed", "boom")]),
            _run(3, False, [("a", "error", "other"), ("b", "passed", ""), ("c", "skipped", "x")]),
            _run(4, True, [], returncode=3)]  # pytest crashed: no test reported
    tallies, distinct = hunt.summarize(runs)
    assert (tallies["a"].runs, tallies["a"].failures) == (3, 1)
    assert (tallies["b"].runs, tallies["b"].failures, tallies["b"].loaded_failures) == (3, 2, 1)
    assert (tallies["c"].runs, tallies["c"].skipped) == (0, 1)
    assert distinct[("b", "boom")] == ["1", "2L"] and distinct[("a", "other")] == ["3"]
    assert distinct[("t.py", "the run reported no test (exit 3)")] == ["4L"]
    text = hunt.report(runs, 4, 2, {2, 4}, "/h", 600)
    assert "4 round(s) (2 under a 2-process CPU load)" in text
    assert "  b: boom [1, 2L]" in text and text.endswith("TOTAL: 4 failure(s) in 7 test runs")


def test_a_clean_hunt_says_zero():
    runs = [_run(i, i % 2 == 0, [("a", "passed", ""), ("b", "passed", "")]) for i in range(1, 5)]
    text = hunt.report(runs, 4, 2, {2, 4}, "/h", 60)
    assert "distinct failures" not in text and text.endswith("TOTAL: 0 failure(s) in 8 test runs")
    assert not any(r.failed for r in runs)


def test_slugs_name_folders():
    assert hunt.slug("tests/integration/test_signals.py::test_x[Signals.SIGINT]") == \
        "test_signals-test_x-Signals.SIGINT"
    assert hunt.slug("kewpie:--suite=cluster_partitions,cluster_isolation") == \
        "kewpie-suite-cluster_partitions-cluster_isolation"


def test_the_cpu_load_is_stopped_by_pid():
    with hunt.cpu_load(2) as pids:
        assert len(pids) == 2 and all(psutil.pid_exists(p) for p in pids)
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_bad_usage_is_exit_2(capsys):
    assert hunt.main(["tests/integration/test_nonexistent.py"]) == 2
    assert "ERROR no such test file" in capsys.readouterr().err
