"""The monitors' side-by-side cost measure (bench/sweep_overhead.py): the balanced block
schedule, the driver that switches the monitor on sysbench's report lines, the pairs
of blocks, the bootstrap estimate and the verdict; sysbench's report line read alone.

Covers: lib/sysbench/overhead.py, lib/sysbench/parse.py (parse_interval)
"""
import math

import pytest

from lib.sysbench.overhead import (BlockDriver, Schedule, balanced_schedule, estimate,
                                   pair_blocks, sample_second, verdict)
from lib.sysbench.parse import Interval, parse_interval

LINE = ("[ 7s ] thds: 8 tps: 2016.55 qps: 32264.80 (r/w/o: 28231.70/0.00/4033.10) "
        "lat (ms,95%): 7.04 err/s: 0.00 reconn/s: 0.00")


def test_parse_interval_reads_one_report_line_and_nothing_else():
    assert parse_interval(LINE) == Interval(7, 8, 2016.55, 32264.80, 7.04, 0.0, 0.0)
    assert parse_interval("Threads started!") is None
    assert parse_interval("    transactions:  5739   (1910.55 per sec.)") is None


@pytest.mark.parametrize("pairs", [1, 2, 7, 40])
def test_random_schedule_is_balanced_pairs_of_one_block_each_way(pairs):
    schedule = balanced_schedule(pairs, 3, "random", seed=5)
    assert schedule.pairs == pairs and schedule.seconds == 2 * 3 * pairs
    firsts = [schedule.states[2 * k] for k in range(pairs)]
    for k in range(pairs):
        assert schedule.states[2 * k + 1] is not schedule.states[2 * k]
    assert abs(firsts.count(True) - firsts.count(False)) <= pairs % 2
    assert balanced_schedule(pairs, 3, "random", seed=5) == schedule  # seeded


def test_random_schedules_differ_by_seed_and_abba_alternates():
    assert len({balanced_schedule(20, 1, "random", seed=s).states for s in range(5)}) > 1
    assert balanced_schedule(3, 2, "abba").states == (True, False, False, True, True, False)


def test_schedule_bad_input():
    with pytest.raises(ValueError):
        balanced_schedule(0, 2)
    with pytest.raises(ValueError):
        balanced_schedule(2, 0)
    with pytest.raises(ValueError):
        balanced_schedule(2, 2, "zigzag")


def test_schedule_maps_seconds_to_blocks():
    schedule = Schedule((True, False, False, True), 2)
    # second n is the one sysbench's line [ n s ] reports: seconds 1-2 block 0, 3-4 block 1...
    assert [schedule.block_of(s) for s in range(1, 9)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [schedule.state_of(s) for s in (1, 2, 3, 4, 7, 8)] == [True, True, False, False,
                                                                 True, True]
    assert schedule.block_of(9) == 3 and schedule.block_of(0) == 0  # past either end
    assert list(schedule.seconds_of(1)) == [3, 4] and list(schedule.seconds_of(1, 1)) == [4]


class FakeMonitor:
    """Records what the driver asks of the monitor."""

    def __init__(self):
        self.calls = []

    def mark(self, at=None):
        self.calls.append(("mark", at))

    def pause(self):
        self.calls.append("pause")

    def resume(self):
        self.calls.append("resume")


def report(second, tps=1000.0):
    return LINE.replace("[ 7s ]", f"[ {second}s ]").replace("2016.55", str(tps))


def test_driver_switches_on_report_lines_and_records_each_seconds_state():
    schedule = Schedule((False, True, True, False), 2)
    monitor = FakeMonitor()
    now = [100.0]
    driver = BlockDriver(schedule, monitor, interval=1.0, clock=lambda: now[0])
    driver.begin()
    assert monitor.calls == ["pause"]  # second 1 runs paused
    driver.on_line("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)")
    driver.on_line("Threads started!")
    assert monitor.calls[-1] == ("mark", 99.5)  # the monitor reads mid-second
    for second in range(1, 9):
        now[0] = 100.0 + second + 0.01
        driver.on_line(report(second))
    assert monitor.calls[1:] == [("mark", 99.5), "resume", "pause"]
    # the state of second n + 1 is set at the line of second n
    assert driver.applied == {1: False, 2: False, 3: True, 4: True, 5: True, 6: True,
                              7: False, 8: False, 9: False}
    assert driver.lags == pytest.approx([0.01] * 8)
    assert driver.first_readings == 1


def test_driver_ignores_report_lines_before_the_threads_start():
    driver = BlockDriver(Schedule((True, False), 1), FakeMonitor())
    driver.begin()
    driver.on_line(report(1))
    assert driver.applied == {} and driver.lags == [] and driver.monitor.calls == []


def test_sample_second_is_the_sysbench_second_it_was_read_in():
    # the monitor's clock starts half an interval early: its sample at t = 3 was read
    # at sysbench's 2.5 s, in second 3
    assert [sample_second(t) for t in (1.0, 2.98, 3.02)] == [1, 3, 3]
    assert [sample_second(t, 0.1) for t in (0.1, 0.95, 1.05, 1.15)] == [1, 1, 1, 2]


def test_pair_blocks_means_of_the_seconds_that_count():
    schedule = Schedule((True, False, False, True), 2)
    tps = {1: 90.0, 2: 110.0, 3: 200.0, 4: 200.0, 5: 50.0, 6: 70.0, 7: 66.0, 8: 60.0}
    applied = {s: schedule.state_of(s) for s in range(1, 9)}
    pairs = pair_blocks(schedule, tps, applied)
    assert [(p.index, p.on_first, p.on_tps, p.off_tps) for p in pairs] == \
        [(1, True, 100.0, 200.0), (2, False, 63.0, 60.0)]
    assert pairs[0].ratio == 0.5 and pairs[1].ratio == 1.05
    settled = pair_blocks(schedule, tps, applied, settle=1)
    assert [(p.on_tps, p.off_tps, p.on_seconds) for p in settled] == [(110.0, 200.0, 1),
                                                                      (60.0, 70.0, 1)]


def test_pair_blocks_skip_seconds_not_run_in_their_state_and_empty_pairs():
    schedule = Schedule((True, False, False, True), 2)
    tps = {1: 100.0, 2: 100.0, 3: 80.0, 4: 90.0, 5: 10.0, 6: 10.0}  # seconds 7-8 never came
    applied = {1: True, 2: True, 3: True, 4: False, 5: False, 6: False}  # 3 ran sampling
    pairs = pair_blocks(schedule, tps, applied)
    assert [(p.index, p.on_tps, p.off_tps, p.off_seconds) for p in pairs] == [(1, 100.0, 90.0, 1)]
    assert pair_blocks(schedule, {1: 5.0, 3: 0.0}, applied) == []  # an off block at 0 tps


def test_estimate_of_identical_ratios_has_a_point_interval():
    est = estimate([0.98] * 10)
    assert est.pairs == 10 and est.median_ratio == 0.98
    assert est.low == pytest.approx(0.98) and est.high == pytest.approx(0.98)
    assert est.cost_pct == pytest.approx(2.0) and est.cost_low_pct == pytest.approx(2.0)


def test_estimate_geometric_mean_median_and_a_seeded_interval_around_it():
    ratios = [0.9, 1.1, 1.0, 0.95, 1.05, 1.02, 0.97, 1.0]
    est = estimate(ratios, resamples=2000, seed=3)
    assert est.mean_ratio == pytest.approx(math.exp(sum(map(math.log, ratios)) / len(ratios)))
    assert est.median_ratio == 1.0 and est.confidence == 0.95
    assert est.low < est.mean_ratio < est.high
    assert est.cost_low_pct == pytest.approx((1 - est.high) * 100)
    assert est.cost_high_pct == pytest.approx((1 - est.low) * 100)
    assert estimate(ratios, resamples=2000, seed=3) == est
    # swapping on and off turns the geometric mean into its inverse
    assert estimate([1 / r for r in ratios]).mean_ratio == pytest.approx(1 / est.mean_ratio)


def test_estimate_of_one_pair_is_unbounded_and_bad_input_raises():
    est = estimate([0.99])
    assert est.pairs == 1 and est.cost_low_pct == -math.inf
    assert verdict(est.cost_low_pct, est.cost_high_pct, 2.0) == "INCONCLUSIVE"
    with pytest.raises(ValueError):
        estimate([])
    with pytest.raises(ValueError):
        estimate([1.0, 0.0])


@pytest.mark.parametrize("low, high, expected", [
    (-1.0, 1.5, "PASS"), (-1.0, 2.0, "PASS"), (1.0, 2.5, "INCONCLUSIVE"),
    (-3.0, 3.0, "INCONCLUSIVE"), (2.0, 4.0, "INCONCLUSIVE"), (2.1, 4.0, "MISS")])
def test_verdict_against_the_target(low, high, expected):
    assert verdict(low, high, 2.0) == expected
