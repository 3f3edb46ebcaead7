"""--mode=sweep's options and its section of the configuration (docs/sysbench.md)."""
from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass

from ...config import ModeSection
from ...errors import KewpieError

NAME = "sweep"


@dataclass
class SweepOptions(ModeSection):
    """--mode=sweep: a sysbench sweep file and its regression check."""

    file: str = ""        # --sweep-file
    label: str = ""       # --label NAME: the sweep's label in the history
    out: str = ""         # --sweep-out: where the table, CSV, JSON and PNGs go
    baseline: str = ""    # --baseline LABEL|last
    tolerance: float = 0.10


def add_options(p: argparse.ArgumentParser) -> None:
    """--mode=sweep: sysbench sweeps and their regression check (docs/sysbench.md)."""
    d = SweepOptions()
    g = p.add_argument_group("sweeps: with --mode=sweep (docs/sysbench.md)")
    g.add_argument("--sweep-file", default=d.file, metavar="PATH",
                   help="the JSON sweep to run")
    g.add_argument("--sweep-out", default=d.out, metavar="DIR",
                   help="where the table, CSV, JSON and PNGs go "
                        "(default: workdir/sweeps/<name>-<time>)")
    g.add_argument("--baseline", default=d.baseline, metavar="LABEL|last",
                   help="compare with a stored sweep (a label, or 'last' with the same "
                        "context); exit 1 on a regression")
    g.add_argument("--tolerance", type=float, default=d.tolerance, metavar="FRACTION",
                   help="allowed throughput drop beyond the repeats' noise (default: %(default)s)")



def section(args: argparse.Namespace) -> SweepOptions:
    """The sweep section of the parsed options (its --label NAME: sweep_label, which the
    command line splits from the run's KEY=VALUE labels)."""
    if not math.isfinite(args.tolerance) or not 0 <= args.tolerance < 1:
        raise KewpieError(f"--tolerance must be a fraction in [0, 1), not {args.tolerance:g}")
    if args.mode == NAME and not args.sweep_file:
        raise KewpieError("--mode=sweep needs --sweep-file PATH")
    names = [v for v in args.label if "=" not in v]
    return SweepOptions(file=os.path.abspath(args.sweep_file) if args.sweep_file else "",
                        label=names[0] if names else "",
                        out=os.path.abspath(args.sweep_out) if args.sweep_out else "",
                        baseline=args.baseline, tolerance=args.tolerance)
