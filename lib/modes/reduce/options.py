"""--mode=reduce's options and its section of the configuration (docs/hunting.md)."""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

from ...config import ModeSection
from ...errors import KewpieError

NAME = "reduce"


@dataclass
class ReduceOptions(ModeSection):
    """--mode=reduce: a hunt's finding reduced to a minimal mysql-test case."""

    out: str = ""        # --reduce-out: the output folder ('' = FINDING/reduce)
    parallel: int = 0    # --reduce-parallel: candidates at once (0: the cores, <= 4)
    tries: int = 1       # --trials: tries per candidate (a sporadic bug)
    findings: tuple[str, ...] = ()  # the TEST arguments: finding folders, made absolute


def add_options(p: argparse.ArgumentParser) -> None:
    """--mode=reduce: where the reduction goes, how many candidates at once."""
    d = ReduceOptions()
    g = p.add_argument_group("reducing: with --mode=reduce, a hunt finding (the TEST "
                             "argument: its folder) to a minimal mysql-test case "
                             "(docs/hunting.md; tries per candidate: --trials)")
    g.add_argument("--reduce-out", default=d.out, metavar="DIR",
                   help="--mode=reduce: the output folder (default: the finding's reduce/)")
    g.add_argument("--reduce-parallel", type=int, default=d.parallel,
                   metavar="N", help="--mode=reduce: check N candidates (or tries of a "
                   "sporadic one) at once, each on a bot of its own servers (1: one at a "
                   "time; default 0: as many as the machine has cores, at most 4)")


def section(args: argparse.Namespace) -> ReduceOptions:
    """The reduce section of the parsed options; KewpieError for a value that cannot work."""
    if args.reduce_parallel < 0:
        raise KewpieError(f"--reduce-parallel must be 0 (as many as the cores) or more, "
                          f"not {args.reduce_parallel}")
    return ReduceOptions(out=os.path.abspath(args.reduce_out) if args.reduce_out else "",
                         parallel=args.reduce_parallel, tries=max(1, args.trials or 1),
                         findings=tuple(os.path.abspath(t) for t in args.tests))


def test_paths(test: str) -> bool:
    """A reduce's TEST arguments are finding folders."""
    return True
