"""--mode=replay's options and its section of the configuration (docs/hunting.md)."""
from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass

from ...config import ModeSection
from ...errors import KewpieError

NAME = "replay"


@dataclass
class ReplayOptions(ModeSection):
    """--mode=replay: a corpus of reproducers on every code tree (--known-bugs,
    --parallel and --junit-xml are the common sections')."""

    timeout: float = 60.0           # --replay-timeout: one reproducer's time on one tree
    out: str = ""                   # --replay-out: the output folder ('' = workdir/replay/...)
    corpus: tuple[str, ...] = ()    # the TEST arguments: .sql/.test files or folders, absolute


def add_options(p: argparse.ArgumentParser) -> None:
    """--mode=replay: a reproducer's timeout and the output folder."""
    d = ReplayOptions()
    g = p.add_argument_group("replay: with --mode=replay CORPUS..., reproducers on every "
                             "code tree (docs/hunting.md; --known-bugs, --parallel, "
                             "--junit-xml apply)")
    g.add_argument("--replay-timeout", type=float, default=d.timeout, metavar="S",
                   help="one reproducer's time on one tree (default: %(default)g)")
    g.add_argument("--replay-out", default=d.out, metavar="DIR",
                   help="the output folder: replay.json, known_bugs.txt, evidence "
                        "(default: workdir/replay/<time>-<run>)")


def misplaced(args: argparse.Namespace) -> str:
    """The replay's options given to another mode."""
    given = [flag for flag, value in (("--replay-timeout",
                                       args.replay_timeout != ReplayOptions.timeout),
                                      ("--replay-out", args.replay_out)) if value]
    if given and args.mode != NAME:
        return f"{' and '.join(given)}: only with --mode=replay; this run is --mode={args.mode}"
    return ""


def section(args: argparse.Namespace) -> ReplayOptions:
    """The replay section of the parsed options; KewpieError for a value that cannot work
    (--allow-known judges a run's failures: a replay has none to allow)."""
    if not math.isfinite(args.replay_timeout) or args.replay_timeout < 1:
        raise KewpieError(f"--replay-timeout must be a number of seconds of at least 1, not "
                          f"{args.replay_timeout:g}")
    if args.mode != NAME:
        return ReplayOptions(timeout=args.replay_timeout)
    if args.allow_known:
        raise KewpieError("--allow-known: not with --mode=replay (its --known-bugs name the "
                          "crashes' bugs; a replay fails no run over them)")
    return ReplayOptions(timeout=args.replay_timeout,
                         out=os.path.abspath(args.replay_out) if args.replay_out else "",
                         corpus=tuple(os.path.abspath(t) for t in args.tests))


def test_paths(test: str) -> bool:
    """A replay's TEST arguments are reproducer files and folders."""
    return True
