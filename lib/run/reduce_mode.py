"""``./kewpie.py --mode=reduce FINDING``: a hunt finding reduced to a minimal mysql-test
case, replayed on every code tree, written up as a bug report.

Before any pass, the finding folder is read (:func:`lib.reduce.case.read_input`)
and the smallest case of an interrupted reduction, else the trace's related
statements (:meth:`lib.reduce.reducer.Reducer.start`), else its whole trace, is
replayed on the finding's topology: when the whole trace does not give the
finding's signature in ``--trials`` tries, that is bad input (one ERROR line,
exit 2).  Every try's replay is capped in time by one shared
:class:`lib.reduce.budget.ReplayBudget` (measured on the trial's traced time, then
on the last try that reproduced).  With ``--reduce-parallel N`` (:mod:`lib.reduce.parallel`) candidates
are checked on N bots at once.
Then the passes of :mod:`lib.reduce.reducer` run; the case goes to
``OUT/mtr/kw_reduce/`` (:mod:`lib.reduce.mtrcase`), replayed on each code tree
kewpie knows (``--basedir``s and ``trees/``) for "present in ..., absent in
...", with the bug report ``OUT/report.txt`` and the figures ``OUT/reduce.json``.
OUT is ``--reduce-out``, else the finding's ``reduce/`` folder.  Exit status 0
when the case is written.
"""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable

from ..errors import EXIT_OK
from ..reduce.budget import ReplayBudget
from ..reduce.case import ReduceError, ReduceInput, read_input
from ..reduce.check import Checker, Outcome, requirements
from ..reduce.parallel import ParallelCheck
from ..reduce.mtrcase import WrongResultCheck, digest_query, report_text, case_text, write_case
from ..reduce.reducer import Reducer, load_smallest
from ..reduce.replay import LOCK_WAIT_SECONDS, replay
from ..servers.codetree import CodeTree
from .environment import RunEnvironment

CASE_NAME = "reduced"


def parallel_width(asked: int) -> int:
    """How many candidates are checked at once: --reduce-parallel, or for 0 as many as
    the machine has cores (at most 4: each holds servers of its own)."""
    return asked if asked > 0 else max(1, min(4, os.cpu_count() or 1))


def _progress() -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A tqdm bar of candidate runs on a terminal (else nothing); its close."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from tqdm import tqdm
    bar = tqdm(desc="reduce", unit="run", leave=False)

    def tick(left: int, runs: int) -> None:
        """Show the statements left and the runs made."""
        bar.n = runs
        bar.set_postfix(statements=left, refresh=False)
        bar.refresh()
    return tick, bar.close


def _wrong_result_check(env: RunEnvironment, case: ReduceInput, outcome: Outcome | None,
                        options: tuple[tuple[str, ...], ...], statements: list[Any]
                        ) -> WrongResultCheck | None:
    """The differing query and the digest of its rows on the correct server (s0)."""
    if case.kind != "wrong-result" or outcome is None or not outcome.replayed.differences:
        return None
    query = outcome.replayed.differences[0]
    manager = env.make_manager("digest")
    try:
        servers = manager.get_servers(requirements(case, options[:1]))
        replay([s for s in statements if s.seq < query.seq], servers[:1])
        conn = servers[0].connect(db="test")
        try:
            with conn.cursor() as cur:
                cur.execute(query.sql)
                columns = len(cur.description or ())
                cur.execute(digest_query(query.sql, columns))
                row = cur.fetchone()
        finally:
            conn.close()
        return WrongResultCheck(query.sql, columns, str(row[0]) if row else "")
    finally:
        manager.shutdown(fast=True, discard=True)


def _confirm(env: RunEnvironment, case: ReduceInput, statements: list[Any],
             options: tuple[tuple[str, ...], ...], trials: int, work: str,
             seen_on: str = "") -> tuple[list[str], list[str]]:
    """Replay the reduced case on every code tree: (versions present, versions absent).
    seen_on: the basedir of the tree where the case's own try just reproduced (not
    tried again: a sporadic bug could miss its --trials there and read as absent)."""
    present: list[str] = []
    absent: list[str] = []
    trees: list[CodeTree] = env.trees.all()
    for index, tree in enumerate(trees):
        label = tree.version.version if tree.version else tree.basedir
        if seen_on and tree.basedir == seen_on:
            present.append(f"{label} ({tree.basedir})")
            env.log.info(f"reduce: present in {label} ({tree.basedir}): the reduction's "
                         f"last try")
            continue
        manager = env.make_manager(f"tree{index}", tree=tree)
        try:
            checker = Checker(case, manager, work, trials)
            checker.options = options
            found = checker.fails(statements)
        finally:
            manager.shutdown(fast=True, discard=True)
        (present if found else absent).append(f"{label} ({tree.basedir})")
        env.log.info(f"reduce: {'present' if found else 'absent'} in {label} ({tree.basedir})")
    return present, absent


def run_reduce(env: RunEnvironment) -> int:
    """The reduction over env (see the module docstring); the exit status."""
    config, log = env.config, env.log
    if len(config.tests) != 1:
        raise ReduceError("--mode=reduce takes one finding folder (workdir/hunt/<run>/"
                          "findings/<finding>), not " + (" ".join(config.tests) or "none"))
    case = read_input(config.tests[0])
    out_dir = os.path.abspath(config.reduce_out or os.path.join(case.folder, "reduce"))
    os.makedirs(out_dir, exist_ok=True)
    work = os.path.join(env.workdir.path, "reduce", env.run_id[:6])
    os.makedirs(work, exist_ok=True)
    trials = max(1, config.hunt_trials or 1)
    width = parallel_width(config.reduce_parallel)
    started = time.monotonic()
    managers = [env.make_manager(f"bot{n}") for n in range(width)]
    budget = ReplayBudget(case.traced_seconds)
    checkers = []
    for n, manager in enumerate(managers):     # each bot its own scratch for crash reports
        scratch = os.path.join(work, f"bot{n}")
        os.makedirs(scratch, exist_ok=True)
        checkers.append(Checker(case, manager, scratch, trials, budget))
    checker = checkers[0]
    check = ParallelCheck(checkers) if width > 1 else None
    fails: Callable[..., bool] = check.fails if check is not None else checker.fails
    first = check.first if check is not None else None

    def runs() -> int:
        """Candidate tries on every bot."""
        return sum(c.runs for c in checkers)

    def last() -> Outcome | None:
        """The last try that reproduced."""
        return check.last if check is not None else checker.last

    def new_reducer() -> Reducer:
        """A reducer over this run's check."""
        return Reducer(case, fails, out_dir, runs, first=first)

    reducer = new_reducer()
    log.info(f"Reducing {case.folder}: {case.kind} ({case.oracle}) {case.signature.id} "
             f"{case.title!r}, {len(case.statements)} statements, topology {case.topology}, "
             f"{trials} tr{'y' if trials == 1 else 'ies'} per candidate, "
             f"{width} at once; output: {out_dir}")
    cap = budget.cap()
    log.info(f"reduce: replays capped at {cap:.0f} s until one reproduces (traced: "
             f"{case.traced_seconds:.0f} s); lock waits at {LOCK_WAIT_SECONDS} s" if cap is not None else
             "reduce: replays not capped until one reproduces (no traced time); lock "
             f"waits at {LOCK_WAIT_SECONDS} s")
    saved = load_smallest(out_dir, case)
    if saved is not None:
        reducer.resume(saved)
        if fails(reducer.statements, reducer.options):
            log.info(f"reduce: resuming from {len(reducer.statements)} statements (passes "
                     f"done: {', '.join(reducer.done) or 'none'})")
        else:
            log.warning("reduce: the saved smallest case no longer fails: starting over")
            reducer = new_reducer()
            saved = None
    if saved is None and not reducer.start() and not fails(case.statements):
        raise ReduceError(f"--mode=reduce {case.folder}: the trace does not reproduce the "
                          f"finding's signature {case.signature.id} ({case.title}) in "
                          f"{trials} tr{'y' if trials == 1 else 'ies'} at the start (a "
                          f"timing-dependent bug: try --trials N)")
    tick, close_bar = _progress()
    reducer.progress = tick
    try:
        result = reducer.run()
    finally:
        close_bar()
    final = result.statements
    outcome = last()
    # the case is checked again only when its own try is not the last that reproduced
    # (a sporadic bug's case that just reproduced is not tried --trials times more)
    if (outcome is None or not outcome.tried(final, result.options)) and \
            not fails(final, result.options):
        raise ReduceError(f"--mode=reduce {case.folder}: the reduced case of {len(final)} "
                          f"statements did not fail again (a sporadic bug: try --trials N)")
    outcome = last()
    assert outcome is not None
    errors = dict(outcome.replayed.errors)
    server_starts = sum(m.restarts for m in managers)
    for manager in managers:
        manager.shutdown(fast=True, discard=True)
    check_ = _wrong_result_check(env, case, outcome, checker.options, final)
    server_index = 1 if case.topology == "compare" and len(result.options) > 1 else 0
    options = list(result.options[server_index]) if result.options else []
    written = write_case(out_dir, CASE_NAME, case_text(case, final, errors, check_), options)
    seen_on = env.tree.basedir if env.tree is not None and \
        outcome.tried(final, result.options) else ""
    present, absent = _confirm(env, case, final, result.options, trials, work, seen_on)
    details = case.finding.get("details", {})
    stack = "\n".join(details.get("raw_frames") or details.get("frames") or [])
    report = os.path.join(out_dir, "report.txt")
    with open(report, "w", encoding="utf-8") as fh:
        fh.write(report_text(case, final, options, written, present, absent, stack))
    figures = {"finding": case.folder, "signature": case.signature.id,
               "statements_in": len(case.statements), "statements_out": len(final),
               "candidate_runs": runs(), "seconds": round(time.monotonic() - started, 3),
               "trials": trials, "parallel": width, "server_starts": server_starts,
               "replays_timed_out": budget.timed_out, "resumed": result.resumed, "options": [list(o) for o in result.options],
               "passes": [vars(p) for p in result.passes], "present": present,
               "absent": absent, "test": written.test, "report": report}
    with open(os.path.join(out_dir, "reduce.json"), "w", encoding="utf-8") as fh:
        json.dump(figures, fh, indent=2)
    log.info(f"reduce: {len(case.statements)} -> {len(final)} statements in "
             f"{runs()} candidate runs ({width} at once), {figures['seconds']:.0f} s")
    log.info(f"reduce: present in {', '.join(present) or 'none'}; absent in "
             f"{', '.join(absent) or 'none'}")
    log.info(f"reduce: test case {written.test}")
    log.info(f"reduce: bug report {report}")
    return EXIT_OK
