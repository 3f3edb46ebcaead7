"""Plots drawn on the server as SVG: the geometry of line plots (a test's durations, a
sweep's throughput) and of a pass/fail strip; lib/history/templates/_plots.html draws it.

No JavaScript and no image files: the page and its static copy carry the plots inline.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Sequence

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f")
STATUS_COLORS = MappingProxyType({"pass": "#2e9d4a", "flaky": "#e0a100", "fail": "#d62728",
                                  "timeout": "#8b1a1a", "skipped": "#b0b0b0"})


@dataclass
class Series:
    """One line: its name and (x, y) points (x a number, a time or a category index)."""

    name: str
    points: list[tuple[float, float]]


@dataclass
class Tick:
    """An axis mark: where (pixels) and its label."""

    at: float
    label: str


@dataclass
class Line:
    """A drawn series: its SVG points attribute, color, markers and legend name."""

    name: str
    color: str
    points: str
    markers: list[tuple[float, float, str]]


@dataclass
class Plot:
    """Everything the template needs to draw one plot."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    title: str
    x_label: str
    y_label: str
    lines: list[Line] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when there is nothing to draw."""
        return not any(line.markers for line in self.lines)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2, 2.5 or 5 times a power of ten)."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


def _fmt(value: float) -> str:
    if abs(value) >= 1000 and value == int(value):
        return f"{int(value):,}"
    return f"{value:g}"


def line_plot(series: Sequence[Series], title: str = "", x_label: str = "", y_label: str = "",
              width: int = 640, height: int = 260, x_labels: dict[float, str] | None = None,
              log2_x: bool = False) -> Plot:
    """A line plot of series: y from zero, x linear (or log2), with nice ticks;
    x_labels names the x ticks (and only those are drawn) when given."""
    plot = Plot(width, height, 64, 44, 28 if title else 12, 40, title, x_label, y_label)
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points]
    if not xs:
        return plot

    def tx(x: float) -> float:
        """x on the axis' scale (log2 when asked)."""
        return math.log2(x) if log2_x and x > 0 else x

    x_low, x_high = min(tx(x) for x in xs), max(tx(x) for x in xs)
    if x_high == x_low:
        x_low, x_high = x_low - 1, x_high + 1
    y_ticks = nice_ticks(0.0, max(ys) if max(ys) > 0 else 1.0)
    y_high = y_ticks[-1] or 1.0
    inner_w = width - plot.left - plot.right
    inner_h = height - plot.top - plot.bottom

    def px(x: float) -> float:
        """x in pixels."""
        return round(plot.left + (tx(x) - x_low) / (x_high - x_low) * inner_w, 1)

    def py(y: float) -> float:
        """y in pixels (up is more)."""
        return round(plot.top + inner_h - y / y_high * inner_h, 1)

    for index, s in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        pts = sorted(s.points)
        markers = [(px(x), py(y), f"{s.name}: {_fmt(y)}") for x, y in pts]
        plot.lines.append(Line(s.name, color, " ".join(f"{x},{y}" for x, y, _ in markers),
                               markers))
    plot.y_ticks = [Tick(py(v), _fmt(v)) for v in y_ticks]
    if x_labels is not None:
        plot.x_ticks = [Tick(px(x), label) for x, label in sorted(x_labels.items())]
    else:
        plot.x_ticks = [Tick(px(v), _fmt(v)) for v in nice_ticks(x_low, x_high)
                        if x_low <= v <= x_high]
    return plot


def time_plot(points: Sequence[tuple[datetime, float]], name: str, title: str = "",
              y_label: str = "ms", width: int = 640, height: int = 240) -> Plot:
    """A value over time (a test's durations): x is the run's order, labelled by date."""
    ordered = sorted(points)
    series = Series(name, [(float(i), v) for i, (_, v) in enumerate(ordered)])
    step = max(1, len(ordered) // 6)
    labels = {float(i): at.strftime("%m-%d %H:%M") for i, (at, _) in enumerate(ordered)
              if i % step == 0 or i == len(ordered) - 1}
    return line_plot([series], title, "run (oldest to newest)", y_label, width, height,
                     x_labels=labels)


@dataclass
class Cell:
    """One square of a pass/fail strip."""

    x: int
    color: str
    title: str
    run_id: int


def strip(cells: Sequence[tuple[str, str, int]], size: int = 14, gap: int = 2) -> list[Cell]:
    """Squares for (status, tooltip, run id) oldest first, left to right."""
    return [Cell(i * (size + gap), STATUS_COLORS.get(status, "#999"), title, run_id)
            for i, (status, title, run_id) in enumerate(cells)]
