"""--mode=reduce's options and its section of the configuration (docs/hunting.md)."""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

from ...config import ModeSection
from ...errors import KewpieError
from ..onoff import OnOff

NAME = "reduce"
# the replay orders of lib/reduce/interleave.py's ORDERS (a unit test keeps them equal);
# not imported from there: --help must not load the replay's modules
ORDERS = ("serial", "ended", "interleaved", "timed", "concurrent")


@dataclass
class ReduceOptions(ModeSection):
    """--mode=reduce: a hunt's finding reduced to a minimal mysql-test case."""

    out: str = ""        # --reduce-out: the output folder ('' = FINDING/reduce)
    parallel: int = 0    # --reduce-parallel: candidates at once (0: the cores, <= 4)
    tries: int = 1       # --trials: tries per candidate (a sporadic bug)
    findings: tuple[str, ...] = ()  # the TEST arguments: a finding folder or a hunt's run
                                    # folder, made absolute
    again: bool = False  # --reduce-again: reduce a signature the results history says is
                         # being reduced or was reduced (lib/run/findings.py)
    accept: tuple[str, ...] = ()  # --reduce-accept: other signature ids that count as the bug
    order: str = ""      # --reduce-order: every candidate replayed in this order ('' = the
                         # start's candidates in turn, lib/reduce/reducer.py)
    timeout: float = 0.0  # --reduce-timeout: a run folder's reductions, each stopped after
                          # this many seconds (0: no cap; lib/modes/reduce/wholerun.py)


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
    g.add_argument("--reduce-again", action=OnOff, default=d.again,
                   help="--mode=reduce: reduce the finding even when the results history "
                   "says its signature is being reduced, or was reduced, elsewhere (a "
                   "fleet's workers reduce each signature once; a --reduce-out of its own "
                   "reduces anyway; docs/history.md); with a hunt's run folder, reduce "
                   "the signatures its findings tag as known bugs too")
    g.add_argument("--reduce-timeout", type=float, default=d.timeout, metavar="S",
                   help="--mode=reduce with a hunt's run folder: stop each signature's "
                   "reduction after S seconds (its servers stopped, its output kept to "
                   "resume) and go on with the next (default 0: no cap)")
    g.add_argument("--reduce-accept", action="append", default=[], metavar="SIG",
                   help="--mode=reduce: a try also reproduces the finding when it gives this "
                   "signature id (repeatable or comma-separated): the same bug's other "
                   "frames, e.g. one a not-reproducible record lists")
    g.add_argument("--reduce-order", default=d.order, choices=ORDERS, metavar="ORDER",
                   help="--mode=reduce: replay every candidate in this order -- "
                   + ", ".join(ORDERS) + " -- and ask only the start's candidates of "
                   "that order (default: each start candidate in its own order, the "
                   "first that reproduces keeps its order)")


def section(args: argparse.Namespace) -> ReduceOptions:
    """The reduce section of the parsed options; KewpieError for a value that cannot work."""
    if args.reduce_timeout < 0:
        raise KewpieError(f"--reduce-timeout must be 0 (no cap) or more seconds, not "
                          f"{args.reduce_timeout:g}")
    if args.reduce_parallel < 0:
        raise KewpieError(f"--reduce-parallel must be 0 (as many as the cores) or more, "
                          f"not {args.reduce_parallel}")
    return ReduceOptions(out=os.path.abspath(args.reduce_out) if args.reduce_out else "",
                         parallel=args.reduce_parallel, tries=max(1, args.trials or 1),
                         findings=tuple(os.path.abspath(t) for t in args.tests),
                         again=args.reduce_again,
                         accept=tuple(a.strip() for v in args.reduce_accept
                                      for a in v.split(",") if a.strip()),
                         order=args.reduce_order or "", timeout=args.reduce_timeout)


def test_paths(test: str) -> bool:
    """A reduce's TEST argument is a finding folder or a hunt's run folder."""
    return True
