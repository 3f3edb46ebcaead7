"""Compare a sweep with a baseline: a drop beyond tolerance plus noise is a regression."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from .sweep import SweepResult

DEFAULT_TOLERANCE = 0.10


def spread(values: list[float]) -> float:
    """Run-to-run noise of repeats: (max - min) / median (0 for one value)."""
    if len(values) < 2:
        return 0.0
    mid = statistics.median(values)
    return (max(values) - min(values)) / mid if mid else 0.0


@dataclass
class Verdict:
    """The comparison: regressed combinations, and one line per combination."""

    regressions: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing regressed."""
        return not self.regressions


def compare(current: SweepResult, baseline: SweepResult,
            tolerance: float = DEFAULT_TOLERANCE) -> Verdict:
    """Flag each (value, threads) whose median tps dropped more than tolerance + noise.

    Combinations are matched by variable value and thread count; the versions
    may differ (version against version is the point of some sweeps).
    """
    verdict = Verdict()
    base = {(val, t): tps for (_, val, t), tps in baseline.combos().items()}
    for (version, value, threads), tps_list in sorted(current.combos().items(), key=str):
        ref = base.get((value, threads))
        if not ref:
            verdict.lines.append(f"{value} threads={threads}: no baseline figure")
            continue
        cur_med, ref_med = statistics.median(tps_list), statistics.median(ref)
        noise = max(spread(tps_list), spread(ref))
        allowed = tolerance + noise
        change = (cur_med - ref_med) / ref_med if ref_med else 0.0
        where = (f"{current.spec.variable}={value} " if current.spec.variable else "") + \
            f"threads={threads}"
        line = (f"{where}: {cur_med:.1f} tps vs baseline {ref_med:.1f} ({change:+.1%}; "
                f"allowed drop {allowed:.1%} = tolerance {tolerance:.0%} + noise {noise:.1%})")
        verdict.lines.append(line)
        if -change > allowed:
            verdict.regressions.append(f"REGRESSION {line}")
    return verdict
