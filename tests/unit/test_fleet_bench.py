"""bench/fleet_bench.py's calculation for N workers from measured per-shard costs, and the
JUnit time it sums.

Covers: bench/fleet_bench.py
"""
from __future__ import annotations

import importlib.util
import os

from tests.conftest import ROOT


def _bench():
    spec = importlib.util.spec_from_file_location("fleet_bench",
                                                  os.path.join(ROOT, "bench", "fleet_bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_costs_and_the_prediction_for_n_workers(tmp_path):
    bench = _bench()
    figures = {
        1: {"plain": {"wall": 12.0, "shards": [{"wall": 12.0, "tests": 10.0}]},
            "buildbot": {"fixed": 3.0, "shards": [{"overhead": 2.0}]}},
        2: {"plain": {"wall": 7.0, "shards": [{"wall": 7.0, "tests": 5.0},
                                              {"wall": 7.0, "tests": 5.0}]},
            "buildbot": {"fixed": 3.0, "shards": [{"overhead": 2.0}, {"overhead": 2.0}]}}}
    costs = bench.model(figures)
    assert costs == {"fleet_fixed": 3.0, "buildbot_per_shard": 2.0, "kewpie_per_shard": 2.0,
                     "work": 10.0}
    assert bench.predicted(costs, 1) == 17.0 and bench.predicted(costs, 10) == 8.0
    junit = tmp_path / "j.xml"
    junit.write_text('<testsuites><testsuite><testcase time="1.5"/><testcase time="0.25"/>'
                     '</testsuite></testsuites>')
    assert bench.junit_seconds(str(junit)) == 1.75
