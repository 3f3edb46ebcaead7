"""The resource monitors' cost, measured side by side inside one sysbench run.

On a shared virtual machine two runs of the same command differ by tens of per
cent, far more than the 2% the monitors may cost; seconds next to each other
differ much less.  So bench/sweep_overhead.py runs sysbench once, with a report
line every second, and switches the monitor between sampling and paused in
short blocks; this module holds the logic:

- :func:`balanced_schedule`: the blocks, in pairs of one block each way (on
  then off, or off then on), the orders balanced (as many of each) and either
  shuffled (``random``, seeded) or alternating (``abba``: on off off on ...);
- :class:`BlockDriver`: reads sysbench's output as it comes and, at each report
  line ``[ n s ]``, switches the monitor to the state of second n + 1, so the
  state changes on sysbench's own second boundaries; it records the state each
  second ran in.  It starts the monitor's clock half an interval before
  sysbench's, so the monitor reads the server mid-second, never near a switch:
  each second that samples holds its readings, and no other does;
- :func:`pair_blocks`: the mean tps of each block (from sysbench's report
  lines, the first ``settle`` seconds of every block left out), as pairs;
- :func:`estimate`: the pairs' ratios on/off: their median, their geometric
  mean with a bootstrap confidence interval, the cost in % and the verdict
  against the target (:func:`verdict`).
"""
from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol, Sequence

from .parse import parse_interval
from .tool import THREADS_STARTED

ORDERS = ("random", "abba")


@dataclass(frozen=True)
class Schedule:
    """Blocks of ``block_s`` seconds, each with the monitor sampling (True) or paused
    (False); blocks 2k and 2k + 1 are pair k, one of each state."""

    states: tuple[bool, ...]
    block_s: int

    @property
    def seconds(self) -> int:
        """How long the schedule runs."""
        return len(self.states) * self.block_s

    @property
    def pairs(self) -> int:
        """How many pairs of blocks it has."""
        return len(self.states) // 2

    def block_of(self, second: int) -> int:
        """The block (0-based) that sysbench's second ``second`` falls in: the report
        line ``[ n s ]`` covers second n (1-based); past the end, the last block."""
        return min(max(second - 1, 0) // self.block_s, len(self.states) - 1)

    def state_of(self, second: int) -> bool:
        """Whether the monitor samples during sysbench's second ``second``."""
        return self.states[self.block_of(second)]

    def seconds_of(self, block: int, settle: int = 0) -> range:
        """The seconds of a block that count: all but its first ``settle``."""
        first = block * self.block_s + 1
        return range(first + settle, first + self.block_s)


def balanced_schedule(pairs: int, block_s: int, order: str = "random",
                      seed: int = 0) -> Schedule:
    """``pairs`` pairs of ``block_s``-second blocks; as many pairs start on as start
    off (one more at random when pairs is odd), shuffled with ``seed`` (``random``) or
    alternating (``abba``)."""
    if pairs < 1 or block_s < 1:
        raise ValueError("a schedule needs at least one pair of blocks of at least 1 s")
    if order not in ORDERS:
        raise ValueError(f"unknown block order {order!r}; known: {', '.join(ORDERS)}")
    rng = random.Random(seed)
    if order == "abba":
        on_first = [k % 2 == 0 for k in range(pairs)]
    else:
        on_first = [True] * (pairs // 2) + [False] * (pairs // 2)
        if pairs % 2:
            on_first.append(rng.random() < 0.5)
        rng.shuffle(on_first)
    states: list[bool] = []
    for first in on_first:
        states += [first, not first]
    return Schedule(tuple(states), block_s)


class Switch(Protocol):
    """What :class:`BlockDriver` switches: a ResourceMonitor."""

    def mark(self, at: float | None = None) -> None:
        """The run started now (or at ``at``)."""

    def pause(self) -> None:
        """Stop sampling."""

    def resume(self) -> None:
        """Sample again."""


@dataclass
class BlockDriver:
    """Follows sysbench's output line by line (:meth:`on_line`) and switches the
    monitor on its report lines, as the schedule says.

    ``applied`` maps each second to the state it ran in (set when the line of the
    second before came); ``lags`` holds how late each report line came, in
    seconds after its second ended by the harness's clock (from "Threads started!");
    ``resumes`` counts the switches on (each starts with a reading that ends no sample).
    ``interval`` is the monitor's: its clock starts half of it before sysbench's.
    """

    schedule: Schedule
    monitor: Switch
    interval: float = 1.0
    clock: Callable[[], float] = time.monotonic
    applied: dict[int, bool] = field(default_factory=dict)
    lags: list[float] = field(default_factory=list)
    resumes: int = 0
    sampling: bool = True
    _started: float | None = field(default=None, init=False)

    def begin(self) -> None:
        """Before sysbench starts: put the monitor in the first second's state."""
        self._set(self.schedule.state_of(1))

    def on_line(self, line: str) -> None:
        """One line of sysbench's output, as it came."""
        if line.startswith(THREADS_STARTED):
            self._started = self.clock()
            self.applied[1] = self.sampling
            self.monitor.mark(self._started - self.interval / 2)
            return
        interval = parse_interval(line)
        if interval is None or self._started is None:
            return
        self.lags.append(self.clock() - self._started - interval.second)
        state = self.schedule.state_of(interval.second + 1)
        self._set(state)
        self.applied[interval.second + 1] = state

    @property
    def first_readings(self) -> int:
        """The readings that begin a stretch of sampling (at the mark, if sampling
        then, and at each resume): they end no sample."""
        return self.resumes + int(self.applied.get(1, False))

    def _set(self, state: bool) -> None:
        if state != self.sampling:
            (self.monitor.resume if state else self.monitor.pause)()
            self.sampling = state
            self.resumes += state


def sample_second(t: float, interval: float = 1.0) -> int:
    """The sysbench second a sample ending at ``t`` (the monitor's clock, which
    :class:`BlockDriver` starts half an interval early) was read in."""
    return math.ceil(t - interval / 2)


@dataclass(frozen=True)
class Pair:
    """One pair of adjacent blocks: the mean per-second tps of each (what counts of it)."""

    index: int
    on_first: bool
    on_tps: float
    off_tps: float
    on_seconds: int
    off_seconds: int

    @property
    def ratio(self) -> float:
        """tps with the monitor sampling over tps with it paused."""
        return self.on_tps / self.off_tps


def pair_blocks(schedule: Schedule, tps: Mapping[int, float], applied: Mapping[int, bool],
                settle: int = 0) -> list[Pair]:
    """The pairs of the schedule, each block's tps the mean of its seconds' (sysbench's
    report lines, ``tps`` by second) less its first ``settle``; a second counts only
    if it ran in its block's state (``applied``), a pair only if both blocks have a
    second that counts and the off block's tps is above 0."""
    pairs: list[Pair] = []
    for k in range(schedule.pairs):
        means: dict[bool, tuple[float, int]] = {}
        for block in (2 * k, 2 * k + 1):
            state = schedule.states[block]
            values = [tps[s] for s in schedule.seconds_of(block, settle)
                      if s in tps and applied.get(s) == state]
            if values:
                means[state] = (statistics.fmean(values), len(values))
        if len(means) == 2 and means[False][0] > 0:
            pairs.append(Pair(k + 1, schedule.states[2 * k], means[True][0], means[False][0],
                              means[True][1], means[False][1]))
    return pairs


@dataclass(frozen=True)
class Estimate:
    """The pairs' ratios on/off summed up; ``low``..``high`` is the confidence interval
    of ``mean_ratio`` (their geometric mean)."""

    pairs: int
    median_ratio: float
    mean_ratio: float
    low: float
    high: float
    confidence: float

    @property
    def cost_pct(self) -> float:
        """The monitor's cost in % of tps (negative: faster with it)."""
        return (1 - self.mean_ratio) * 100

    @property
    def cost_low_pct(self) -> float:
        """The low end of the cost's confidence interval."""
        return (1 - self.high) * 100

    @property
    def cost_high_pct(self) -> float:
        """The high end of the cost's confidence interval."""
        return (1 - self.low) * 100


def verdict(cost_low: float, cost_high: float, target: float) -> str:
    """PASS when the whole interval is at or under the target, MISS when it is all
    above it, INCONCLUSIVE when it straddles it."""
    if cost_high <= target:
        return "PASS"
    if cost_low > target:
        return "MISS"
    return "INCONCLUSIVE"


def estimate(ratios: Sequence[float], confidence: float = 0.95, resamples: int = 10000,
             seed: int = 0) -> Estimate:
    """The median and geometric mean of the ratios, with a percentile-bootstrap
    interval of the mean of their logarithms (``resamples`` resamplings of the pairs,
    seeded); with fewer than two ratios the interval is unbounded."""
    if not ratios or min(ratios) <= 0:
        raise ValueError("estimate needs at least one ratio, all above 0")
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return Estimate(len(logs), ratios[0], math.exp(mean), 0.0, math.inf, confidence)
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(logs, k=len(logs))) for _ in range(resamples))
    tail = (1 - confidence) / 2
    low = means[int(tail * resamples)]
    high = means[min(resamples - 1, math.ceil((1 - tail) * resamples) - 1)]
    return Estimate(len(logs), statistics.median(ratios), math.exp(mean), math.exp(low),
                    math.exp(high), confidence)
