"""sysbench output parsing, sweep specs, the results database and the regression check.

Covers: lib/sysbench/parse.py, lib/sysbench/sweep.py, lib/sysbench/results.py,
lib/sysbench/regression.py
"""
import pytest

from lib.errors import UsageError
from lib.sysbench.parse import SysbenchOutputError, parse_output
from lib.sysbench.parse import SysbenchResult
from lib.sysbench.regression import compare, spread
from lib.sysbench.results import ResultsDB
from lib.sysbench.sweep import RunRecord, SweepResult, SweepSpec

OUTPUT = """sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Threads started!

[ 1s ] thds: 2 tps: 981.31 qps: 19668.13 (r/w/o: 13772.29/3930.23/1965.62) lat (ms,95%): 5.88 err/s: 1.00 reconn/s: 0.00
[ 2s ] thds: 2 tps: 1621.40 qps: 32451.00 (r/w/o: 22721.60/6485.60/3243.80) lat (ms,95%): 2.39 err/s: 1.00 reconn/s: 0.00
SQL statistics:
    queries performed:
        read:                            80374
        write:                           22960
        other:                           11480
        total:                           114814
    transactions:                        5739   (1910.55 per sec.)
    queries:                             114814 (38222.36 per sec.)
    ignored errors:                      2      (0.67 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          3.0027s
    total number of events:              5739

Latency (ms):
         min:                                    0.51
         avg:                                    1.04
         max:                                   42.09
         95th percentile:                        2.61
         sum:                                 5993.02
"""


def test_parse_summary_and_intervals():
    r = parse_output(OUTPUT)
    assert (r.tps, r.qps, r.transactions, r.queries) == (1910.55, 38222.36, 5739, 114814)
    assert (r.errors, r.reconnects, r.percentile) == (2, 0, 95)
    assert (r.latency_min_ms, r.latency_avg_ms, r.latency_max_ms, r.latency_pct_ms) == (0.51, 1.04, 42.09, 2.61)
    assert r.total_time_s == 3.0027
    assert [(i.second, i.threads, i.tps, i.errors_per_s) for i in r.intervals] == \
        [(1, 2, 981.31, 1.0), (2, 2, 1621.40, 1.0)]


def test_parse_failure_says_what_is_missing():
    with pytest.raises(SysbenchOutputError, match="transactions"):
        parse_output("FATAL: Cannot find benchmark 'oltp_nope'")


def test_spec_validation():
    spec = SweepSpec.from_dict({"name": "x", "workload": "oltp_read_only", "threads": [1, 2],
                                "variable": {"name": "innodb_spin_wait_delay", "values": [0, 4]}})
    assert spec.variable == "innodb_spin_wait_delay" and spec.values == [0, 4]
    with pytest.raises(UsageError, match="unknown sysbench workload"):
        SweepSpec.from_dict({"name": "x", "workload": "oltp_nope", "threads": [1]})
    with pytest.raises(UsageError, match="threads"):
        SweepSpec.from_dict({"name": "x", "workload": "oltp_read_only", "threads": []})
    with pytest.raises(UsageError, match="unknown sweep keys"):
        SweepSpec.from_dict({"name": "x", "workload": "oltp_read_only", "threads": [1], "typo": 1})


def _result(tps):
    return SysbenchResult(tps=tps, qps=tps * 20, transactions=int(tps), queries=int(tps * 20),
                          errors=0, reconnects=0, latency_min_ms=1, latency_avg_ms=2,
                          latency_max_ms=3, latency_pct_ms=2.5, percentile=95, total_time_s=1)


def _sweep(tps_by_threads, name="s"):
    spec = SweepSpec(name=name, workload="oltp_read_only", threads=sorted(tps_by_threads))
    sweep = SweepResult(spec, {"key": "k1"})
    for threads, values in tps_by_threads.items():
        for rep, tps in enumerate(values, 1):
            sweep.runs.append(RunRecord("", "10.11", None, threads, rep, _result(tps)))
    return sweep


def test_regression_beyond_tolerance_and_noise():
    base = _sweep({1: [1000, 1010], 4: [3000, 3100]})
    assert compare(_sweep({1: [990, 1000], 4: [2950, 3050]}), base).ok
    slowed = compare(_sweep({1: [1000, 1005], 4: [2000, 2050]}), base)
    assert not slowed.ok and len(slowed.regressions) == 1
    assert "threads=4" in slowed.regressions[0] and "-33" in slowed.regressions[0]
    noisy = _sweep({1: [1000, 1500], 4: [3000, 3000]})  # 40% noise on 1 thread
    assert compare(_sweep({1: [800, 800], 4: [3000, 3000]}), noisy).ok
    assert spread([10.0]) == 0.0 and round(spread([90.0, 100.0, 110.0]), 3) == 0.2


def test_results_db_roundtrip_and_baselines(tmp_path):
    db = ResultsDB(sqlite_path=str(tmp_path / "r.sqlite"))
    first = db.save(_sweep({1: [1000.5]}), "relaxed")
    second = db.save(_sweep({1: [900.0]}), "synced")
    assert db.find("relaxed", "k1") == first
    assert db.find("last", "k1", exclude_id=second) == first
    assert db.find("nope", "k1") is None
    loaded = db.load(first)
    assert loaded.runs[0].result.tps == 1000.5 and loaded.spec.workload == "oltp_read_only"
