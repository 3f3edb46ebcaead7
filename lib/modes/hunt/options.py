"""--mode=hunt's options and its section of the configuration (docs/hunting.md)."""
from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass, field

from ...config import ModeSection
from ...errors import KewpieError
from ..onoff import split

NAME = "hunt"
SQL_SOURCES = ("mysql-test", "surface")  # --sql-file's named sources (not paths)


@dataclass
class OracleOptions:
    """Which oracles judge each trial, and their limits."""

    names: tuple[str, ...] = ("crash", "hang", "errorlog", "divergence")  # --oracles
    hang_timeout: float = 60.0          # the Deadlock reporter's threshold
    replica_timeout: float = 120.0      # replicas' time to catch up
    wrong_result_budget: int = 500      # checks per wrong-result oracle per trial


@dataclass
class HuntOptions(ModeSection):
    """--mode=hunt: trials of randgen loads with oracles."""

    grammars: tuple[str, ...] = ()   # --grammar (repeatable): the trials take them in turn
    redefine: tuple[str, ...] = ()   # --redefine: grammar files redefining rules
    sql_files: tuple[str, ...] = ()  # --sql-file: pquery-style loads (mysql-test, surface,
                                     # a folder of .test files or an SQL file)
    gendata: str = ""                # --gendata as given (relative: under --randgen-path)
    trials: int = 0                  # 0 = no limit (1 when --duration is 0 too)
    duration: float = 0.0            # the hunt's time budget (0 = none)
    trial_duration: float = 60.0     # one trial's load
    queries: int = 0                 # sentences per thread per trial (0 = no limit)
    threads: int = 4                 # the load's connections per trial
    topology: str = "single"         # single, replication[:N], galera[:N], compare
    compare_mysqld: tuple[str, ...] = ()  # options of s1 in --topology compare
    random_options: str = ""         # --random-options FILE: options drawn per trial
    random_options_max: int = 3      # at most this many per trial
    oracles: OracleOptions = field(default_factory=OracleOptions)


def add_options(p: argparse.ArgumentParser) -> None:
    """--mode=hunt: trials, budgets, oracles (docs/hunting.md)."""
    d, o = HuntOptions(), OracleOptions()
    g = p.add_argument_group("hunting: with --mode=hunt, random loads in trials with oracles "
                             "(docs/hunting.md; the servers: --suite or --topology; seeds: "
                             "--randgen-seed; data: --gendata)")
    g.add_argument("--grammar", action="append", default=[], metavar="FILE.yy[:DATA.zz]",
                   help="a randgen grammar (relative: under --randgen-path), with its gendata "
                        "after a ':'; repeatable, the trials take them in turn; without its "
                        "own: --gendata, else the .zz of the same name beside it, else the "
                        "simple data set")
    g.add_argument("--sql-file", action="append", default=[], metavar="SOURCE",
                   help="a pquery-style load: statements replayed on --threads connections "
                        "in random order; SOURCE is mysql-test (the code tree's mysql-test "
                        "corpus, mined and cached in the workdir), surface (kewpie's "
                        "generated schema and statements over MariaDB's SQL surface), a "
                        "folder of .test/.inc files or an SQL file; repeatable, taken in "
                        "turn with the grammars")
    g.add_argument("--redefine", action="append", default=[], metavar="FILE.yy",
                   help="a grammar file that redefines rules of every --grammar; repeatable")
    g.add_argument("--trials", type=int, default=d.trials, metavar="N",
                   help="run N trials (0: until --duration; one when both are 0); with "
                        "--mode=reduce: tries per candidate (a sporadic bug)")
    g.add_argument("--duration", type=float, default=d.duration, metavar="S",
                   help="the hunt's time budget in seconds (0: until --trials)")
    g.add_argument("--trial-duration", type=float, default=d.trial_duration,
                   metavar="S", help="seconds of load per trial (default: %(default)g)")
    g.add_argument("--queries", type=int, default=d.queries, metavar="N",
                   help="sentences per thread per trial, as gentest.pl's --queries (0: no "
                        "limit, the trial's duration decides)")
    g.add_argument("--threads", type=int, default=d.threads, metavar="N",
                   help="connections of each trial's load (default: %(default)s)")
    g.add_argument("--oracles", action="append", default=[], metavar="LIST",
                   help="which oracles judge each trial: crash (always on), hang, errorlog, "
                        "divergence, norec, tlp, differential, or all (default: "
                        "crash,hang,errorlog,divergence)")
    g.add_argument("--topology", default=d.topology, metavar="KIND",
                   help="the servers of a trial without --suite: single, replication[:N], "
                        "galera[:N] or compare (default: %(default)s)")
    g.add_argument("--compare-mysqld", action="append", default=[], metavar="OPTION",
                   help="--topology compare: an option for s1 only (repeatable); a second "
                        "--basedir runs s1 on that code tree")
    g.add_argument("--random-options", default=d.random_options, metavar="FILE",
                   help="server options, one a line: each trial's servers start with 1 to "
                        "--random-options-max of them, drawn from its seed")
    g.add_argument("--random-options-max", type=int, default=d.random_options_max,
                   metavar="N", help="at most N random options per trial (default: %(default)s)")
    g.add_argument("--hang-timeout", type=float, default=o.hang_timeout, metavar="S",
                   help="the hang oracle: the load's statements stuck this long are a hang "
                        "(randgen's Deadlock reporter rule; default: %(default)g)")
    g.add_argument("--replica-timeout", type=float, default=o.replica_timeout,
                   metavar="S", help="the divergence oracle: seconds replicas (nodes) get to "
                                     "apply a trial's writes (default: %(default)g)")
    g.add_argument("--wrong-result-budget", type=int, default=o.wrong_result_budget,
                   metavar="N", help="checks of each wrong-result oracle per trial "
                                     "(default: %(default)s)")


def _path(given: str) -> str:
    """A --grammar value with its paths made absolute when they exist from here (the
    others are looked up under --randgen-path); ``G.yy:D.zz`` keeps its two parts."""
    grammar, sep, data = given.rpartition(":") if given.endswith(".zz") else (given, "", "")
    parts = [grammar, data] if sep else [given]
    return ":".join(os.path.abspath(p) if os.path.exists(p) else p for p in parts)


def _sql_source(given: str) -> str:
    """A --sql-file value: a named source (mysql-test, surface) as it is unless a file or
    folder of that name is here, else the path made absolute."""
    return given if given in SQL_SOURCES and not os.path.exists(given) else os.path.abspath(given)


def _check(args: argparse.Namespace) -> None:
    """KewpieError for a value that cannot work (whatever the mode: one error line)."""
    if args.mode == NAME and not args.grammar and not args.sql_file:
        raise KewpieError("--mode=hunt needs --grammar FILE.yy (a randgen grammar; relative "
                          "paths are under --randgen-path) or --sql-file SOURCE (a "
                          "pquery-style load)")
    for name, value in (("--trials", args.trials), ("--queries", args.queries),
                        ("--random-options-max", args.random_options_max),
                        ("--wrong-result-budget", args.wrong_result_budget)):
        if value < 0:
            raise KewpieError(f"{name} must be 0 or more, not {value}")
    if args.threads < 1:
        raise KewpieError("--threads must be at least 1")
    for name, seconds, least in (("--duration", args.duration, 0.0),
                                 ("--trial-duration", args.trial_duration, 1.0),
                                 ("--hang-timeout", args.hang_timeout, 1.0),
                                 ("--replica-timeout", args.replica_timeout, 1.0)):
        if not math.isfinite(seconds) or seconds < least:
            raise KewpieError(f"{name} must be a number of seconds of at least {least:g}, "
                              f"not {seconds:g}")


def section(args: argparse.Namespace) -> HuntOptions:
    """The hunt section of the parsed options; KewpieError for a value that cannot work."""
    _check(args)
    gendata = args.gendata
    return HuntOptions(
        grammars=tuple(_path(g) for g in args.grammar),
        redefine=tuple(os.path.abspath(r) if os.path.exists(r) else r for r in args.redefine),
        sql_files=tuple(_sql_source(s) for s in args.sql_file),
        gendata=(os.path.abspath(gendata) if os.path.exists(gendata) else gendata) if gendata else "",
        trials=args.trials, duration=args.duration, trial_duration=args.trial_duration,
        queries=args.queries, threads=args.threads, topology=args.topology,
        compare_mysqld=tuple(args.compare_mysqld),
        random_options=os.path.abspath(args.random_options) if args.random_options else "",
        random_options_max=args.random_options_max,
        oracles=OracleOptions(names=tuple(split(args.oracles)) or OracleOptions.names,
                              hang_timeout=args.hang_timeout,
                              replica_timeout=args.replica_timeout,
                              wrong_result_budget=args.wrong_result_budget))


def misplaced(args: argparse.Namespace) -> str:
    """The hunt's options given to another mode (--trials is a reduce's too: its tries)."""
    given = [flag for flag, value in (("--grammar", args.grammar), ("--redefine", args.redefine),
                                      ("--sql-file", args.sql_file),
                                      ("--trials", args.trials if args.mode != "reduce" else 0),
                                      ("--duration", args.duration),
                                      ("--random-options", args.random_options),
                                      ("--compare-mysqld", args.compare_mysqld),
                                      ("--oracles", args.oracles)) if value]
    if given and args.mode != NAME:
        return f"{', '.join(given)}: only with --mode=hunt; this run is --mode={args.mode}"
    return ""
