"""sysbench output parsing (summary, intervals, histogram, the TPC-C-like block, the
reconnect count), sweep specs, sweeps stored in the results history's store with their
details tables, the output tables and the regression check.

Covers: lib/sysbench/parse.py, lib/sysbench/sweep.py, lib/sysbench/results.py,
lib/sysbench/regression.py, lib/sysbench/outputs.py, lib/history/schema.py (the sweeps' tables)
"""
import os
import sqlite3

import pytest

from lib.errors import UsageError
from lib.history.store import open_engine
from lib.history.target import StoreTarget
from lib.sysbench.parse import SysbenchOutputError, parse_output
from lib.sysbench.monitor import Sample
from lib.sysbench.outputs import markdown, table, write_all
from lib.sysbench.parse import SysbenchResult, histogram_percentile
from lib.sysbench.sweep import CheckRecord
from lib.sysbench.tool import failure_lines
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


@pytest.fixture
def store(tmp_path):
    """The path of a new results history store (SQLite) and its engine."""
    path = str(tmp_path / "history.sqlite")
    engine = open_engine(StoreTarget(sqlite_path=path), writer=True, create=True)
    yield path, engine
    engine.dispose()


def test_results_db_roundtrip_and_baselines(store):
    db = ResultsDB(store[1])
    first = db.save(_sweep({1: [1000.5]}), "relaxed")
    second = db.save(_sweep({1: [900.0]}), "synced")
    assert db.find("relaxed", "k1") == first
    assert db.find("last", "k1", exclude_id=second) == first
    assert db.find("nope", "k1") is None
    loaded = db.load(first)
    assert loaded.runs[0].result.tps == 1000.5 and loaded.spec.workload == "oltp_read_only"


def test_a_sweeps_secrets_are_stored_and_written_as_stars(tmp_path, store):
    sweep = _sweep({1: [1000.5]})
    sweep.spec.server_options = ["--loose-wsrep-sst-auth=sst:Sw-s3cr3t", "--max-connections=9"]
    sweep.context["options"] = list(sweep.spec.server_options)
    db = ResultsDB(store[1])
    loaded = db.load(db.save(sweep, "x"))
    assert loaded.spec.server_options == ["--loose-wsrep-sst-auth=***", "--max-connections=9"]
    assert loaded.context["options"] == loaded.spec.server_options
    paths = write_all(sweep, str(tmp_path / "out"))
    text = open(paths["json"]).read()
    assert "Sw-s3cr3t" not in text and "--loose-wsrep-sst-auth=***" in text
    assert sweep.spec.server_options[0].endswith("Sw-s3cr3t")  # what runs keeps its value
    import glob  # the store's file and its log
    assert [f for f in glob.glob(store[0] + "*") if b"Sw-s3cr3t" in open(f, "rb").read()] == []


HISTOGRAM_OUTPUT = OUTPUT.replace("SQL statistics:", """Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.510 |**                                       1
       0.520 |**********                               5
       1.010 |****************************************  20
       2.610 |********                                 4
      42.090 |**                                       1

SQL statistics:""")

TPCC_BLOCK = """
TPC-C-like statistics (not TPC-C results):
    measured over:                       5.012s
    tpmC-like (New-Order per minute):    10199.48
    transactions per minute (all five):  23032.63
    reconnects (--reconnect):            12
    transaction     count  rollbacks   retries  mix %    avg ms    p50 ms    p95 ms    p99 ms    max ms
    new_order         852          6         3  44.28    14.407    12.301    29.194    51.945    72.517
    payment           841          0         0  43.71     6.498     5.570    13.953    20.736    24.995
    order_status       88          0         0   4.57     2.039     1.697     5.090    10.274    10.328
    delivery           79          0         0   4.11    23.314    22.284    39.650    73.135    73.767
    stock_level        64          0         0   3.33     3.502     2.347     4.028    52.889    52.755
"""


def test_histogram_and_percentiles_by_sysbench_rule():
    r = parse_output(HISTOGRAM_OUTPUT)
    assert r.histogram == [(0.51, 1), (0.52, 5), (1.01, 20), (2.61, 4), (42.09, 1)]
    # 31 events: p50 wants floor(15.5 + 0.5) = 16 -> 1.01; p95 wants 29 -> 2.61; p99 31 -> 42.09
    assert (r.latency_at(50), r.latency_at(99)) == (1.01, 42.09)
    assert histogram_percentile(r.histogram, 95) == 2.61 == r.latency_at(95)
    assert r.percentiles() == {"p50": 1.01, "p95": 2.61, "p99": 42.09, "max": 42.09}
    assert histogram_percentile([], 50) == 0.0
    assert parse_output(OUTPUT).histogram == []


def test_tpcc_block_and_reconnect_lines():
    r = parse_output(OUTPUT + TPCC_BLOCK)
    assert r.tpcc is not None and (r.tpcc.measured_s, r.tpcc.tpmc_like, r.tpcc.reconnects) == \
        (5.012, 10199.48, 12)
    assert [t.name for t in r.tpcc.txns] == ["new_order", "payment", "order_status", "delivery",
                                             "stock_level"]
    assert (r.tpcc.txns[0].count, r.tpcc.txns[0].rollbacks, r.tpcc.txns[0].p99_ms) == (852, 6, 51.945)
    assert r.planned_reconnects == 12
    wrapped = parse_output(OUTPUT + "kewpie reconnect: 5737 reconnects (a new connection every 1 events)\n")
    assert wrapped.planned_reconnects == 5737 and wrapped.tpcc is None
    with pytest.raises(SysbenchOutputError, match="TPC-C-like statistics have no"):
        parse_output(OUTPUT + "TPC-C-like statistics (not TPC-C results):\n")


def _detailed_sweep():
    spec = SweepSpec.from_dict({"name": "d", "workload": "tpcc_like", "threads": [2],
                                "matrix": {"reconnect": [0, 1]}})
    sweep = SweepResult(spec, {"key": "k2"})
    for value, text in (("reconnect=0", HISTOGRAM_OUTPUT + TPCC_BLOCK),
                        ("reconnect=1", OUTPUT + TPCC_BLOCK)):
        samples = [Sample(float(t), source, {"cpu_user_pct": 10.0 * t, "bp_reads_per_s": 5.0,
                                              "bp_read_requests_per_s": 500.0})
                   for t in (1, 2) for source in ("machine", "s0")]
        sweep.runs.append(RunRecord("", "10.11", value, 2, 1, parse_output(text),
                                    {"reconnect": int(value[-1])}, samples, f"run-{value}.log"))
    sweep.checks.append(CheckRecord("10.11", "tpcc_like", True, "consistency: 11 of 11 conditions hold"))
    return sweep


def test_details_tables_roundtrip(store):
    db = ResultsDB(store[1])
    sweep_id = db.save(_detailed_sweep(), "detailed")
    loaded = db.load(sweep_id)
    first = loaded.runs[0]
    assert first.result.histogram == [(0.51, 1), (0.52, 5), (1.01, 20), (2.61, 4), (42.09, 1)]
    assert first.cell == {"reconnect": 0} and first.log == "run-reconnect=0.log"
    assert first.result.tpcc.txns[4].name == "stock_level" and first.result.planned_reconnects == 12
    assert [(s.t, s.source, s.values["cpu_user_pct"]) for s in first.samples] == \
        [(1.0, "machine", 10.0), (1.0, "s0", 10.0), (2.0, "machine", 20.0), (2.0, "s0", 20.0)]
    assert loaded.checks[0].passed is True
    with sqlite3.connect(store[0]) as raw:
        rows = raw.execute("SELECT lat_p50, lat_p95, lat_p99, lat_max, tpmc_like FROM "
                           "kewpie_run_details ORDER BY run_id").fetchall()
        assert rows[0] == (1.01, 2.61, 42.09, 42.09, 10199.48)
        assert raw.execute("SELECT COUNT(*) FROM kewpie_run_txns").fetchone()[0] == 10


def test_tables_and_files_show_percentiles_resources_and_checks(tmp_path):
    sweep = _detailed_sweep()
    text = table(sweep)
    assert "reconnect=0" in text and "p99 ms" in text and "tpmC-like" in text
    assert "bp miss %" in text and "1.00" in text  # 5 misses of 500 requests
    assert "TPC-C-like consistency, tpcc_like on 10.11: all hold" in text
    md = markdown(sweep)
    assert "| threads | reconnect=0 | reconnect=1 |" in md and "*latency*" in md
    paths = write_all(sweep, str(tmp_path / "out"))
    for key in ("csv", "json", "plot_threads", "plot_time", "plot_latency", "table", "markdown"):
        assert os.path.getsize(paths[key]) > 0, key
    assert sorted(os.listdir(tmp_path / "out" / "latency")) == \
        ["10.11_reconnect=0_2t_r1.png"]  # the other run printed no histogram
    assert len(os.listdir(tmp_path / "out" / "timeline")) == 2


def test_failure_lines_quote_fatal_lines_before_a_scripts_report():
    text = ("Threads started!\n"
            "FATAL: mysql_drv_query() returned error 1054 (Unknown column) for query 'X'\n"
            "FATAL: `thread_run' function failed: tpcc_like.lua:695: SQL error\n"
            "TPC-C-like statistics (not TPC-C results):\n"
            "    new_order 279 4 0\n")
    quoted = failure_lines(text)
    assert quoted.splitlines() == text.splitlines()[1:3]


def test_failure_lines_fall_back_to_the_last_lines():
    text = "\n".join(f"line {n}" for n in range(10)) + "\n"
    assert failure_lines(text, keep=3) == "line 7\nline 8\nline 9"
