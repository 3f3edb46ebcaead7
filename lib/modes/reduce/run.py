"""``./kewpie.py --mode=reduce FINDING``: a hunt finding reduced to a minimal mysql-test
case, replayed on every code tree, written up as a bug report.

Before any pass, the finding folder is read (:func:`lib.reduce.case.read_input`)
and the smallest case of an interrupted reduction, else the trace's related
statements (:meth:`lib.reduce.reducer.Reducer.start`), else its whole trace, is
replayed on the finding's topology: when the whole trace does not give the
finding's signature in ``--trials`` tries, that is bad input (one ERROR line,
exit 2).  Every try's replay is capped in time by one shared
:class:`lib.reduce.budget.ReplayBudget` (measured on the trial's traced time, then
on the last try that reproduced).  With ``--reduce-parallel N``
(:mod:`lib.reduce.parallel`) candidates are checked on N bots at once.
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

from ...errors import EXIT_OK
from ...reduce.budget import ReplayBudget
from ...reduce.case import ReduceError, ReduceInput, Statement, read_input
from ...reduce.check import Checker, Outcome, requirements
from ...reduce.parallel import ParallelCheck
from ...reduce.mtrcase import (WrittenCase, WrongResultCheck, case_text, digest_query,
                                report_text, write_case)
from ...reduce.reducer import Reduced, Reducer, load_smallest
from ...reduce.replay import LOCK_WAIT_SECONDS, replay
from ...platform.safewrite import OutputDir
from ...servers.codetree import CodeTree
from ...run.environment import RunEnvironment
from .options import ReduceOptions

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
    own = env.config.section(ReduceOptions)
    if len(own.findings) != 1:
        raise ReduceError("--mode=reduce takes one finding folder (workdir/hunt/<run>/"
                          "findings/<finding>), not " + (" ".join(own.findings) or "none"))
    case = read_input(own.findings[0])
    out = OutputDir.create(own.out or os.path.join(case.folder, "reduce"),
                           "--reduce-out" if own.out else "the finding's reduce folder",
                           env.trust, reuse=True)  # never through a link: lib/platform/safewrite.py
    try:
        return _reduce(env, case, out)
    finally:
        out.close()


def _reduce(env: RunEnvironment, case: ReduceInput, out: OutputDir) -> int:
    """The reduction of case into the output folder out (see the module docstring)."""
    own = env.config.section(ReduceOptions)
    work = os.path.join(env.workdir.path, "reduce", env.run_id[:6])
    os.makedirs(work, exist_ok=True)
    trials = max(1, own.tries or 1)
    width = parallel_width(own.parallel)
    started = time.monotonic()
    bots = _Bots(env, case, work, trials, width)
    reducer = _started_reducer(env, case, bots, out, trials, width)
    result = _reduced(reducer)
    outcome = _reproduced(case, bots, result)
    errors = dict(outcome.replayed.errors)
    server_starts = bots.shutdown()
    check_ = _wrong_result_check(env, case, outcome, bots.checker.options, result.statements)
    server_index = 1 if case.topology == "compare" and len(result.options) > 1 else 0
    options = list(result.options[server_index]) if result.options else []
    written = write_case(out, CASE_NAME, case_text(case, result.statements, errors, check_),
                         options)
    seen_on = env.tree.basedir if env.tree is not None and \
        outcome.tried(result.statements, result.options) else ""
    present, absent = _confirm(env, case, result.statements, result.options, trials, work,
                               seen_on)
    report = _write_report(out, case, result.statements, options, written, present,
                           absent)
    figures = {"finding": case.folder, "signature": case.signature.id,
               "statements_in": len(case.statements), "statements_out": len(result.statements),
               "candidate_runs": bots.runs(),
               "seconds": round(time.monotonic() - started, 3), "trials": trials,
               "parallel": width, "server_starts": server_starts,
               "replays_timed_out": bots.budget.timed_out, "resumed": result.resumed,
               "options": [list(o) for o in result.options],
               "passes": [vars(p) for p in result.passes], "present": present,
               "absent": absent, "test": written.test, "report": report}
    out.write_text("reduce.json", json.dumps(figures, indent=2))
    _log_summary(env, case, result.statements, figures, width)
    return EXIT_OK


class _Bots:
    """The reduction's bots, a manager and a checker each (checked together through a
    ParallelCheck when there are several)."""

    def __init__(self, env: RunEnvironment, case: ReduceInput, work: str, trials: int,
                 width: int) -> None:
        self.managers = [env.make_manager(f"bot{n}") for n in range(width)]
        self.budget = ReplayBudget(case.traced_seconds)  # one per-replay cap for all bots
        self.checkers: list[Checker] = []
        for n, manager in enumerate(self.managers):  # each bot its own scratch for crash reports
            scratch = os.path.join(work, f"bot{n}")
            os.makedirs(scratch, exist_ok=True)
            self.checkers.append(Checker(case, manager, scratch, trials, self.budget))
        self.checker = self.checkers[0]
        self.check = ParallelCheck(self.checkers) if width > 1 else None
        self.fails: Callable[..., bool] = (self.check.fails if self.check is not None
                                           else self.checker.fails)
        self.first = self.check.first if self.check is not None else None

    def runs(self) -> int:
        """Candidate tries on every bot."""
        return sum(c.runs for c in self.checkers)

    def last(self) -> Outcome | None:
        """The last try that reproduced."""
        return self.check.last if self.check is not None else self.checker.last

    def reducer(self, case: ReduceInput, out: OutputDir) -> Reducer:
        """A reducer over these bots' check, saving its smallest case in out."""
        return Reducer(case, self.fails, out, self.runs, first=self.first)

    def shutdown(self) -> int:
        """Every bot's servers stopped and discarded; the servers they started."""
        server_starts = sum(m.restarts for m in self.managers)
        for manager in self.managers:
            manager.shutdown(fast=True, discard=True)
        return server_starts


def _started_reducer(env: RunEnvironment, case: ReduceInput, bots: _Bots, out: OutputDir,
                     trials: int, width: int) -> Reducer:
    """The reducer, resumed from the smallest case saved in out when that still fails,
    else started; ReduceError when the whole trace does not reproduce."""
    reducer = bots.reducer(case, out)
    env.log.info(f"Reducing {case.folder}: {case.kind} ({case.oracle}) {case.signature.id} "
                 f"{case.title!r}, {len(case.statements)} statements, topology "
                 f"{case.topology}, {trials} tr{'y' if trials == 1 else 'ies'} per "
                 f"candidate, {width} at once; output: {out.path}")
    cap, lock = bots.budget.cap(), f"lock waits at {LOCK_WAIT_SECONDS} s"
    env.log.info(f"reduce: replays capped at {cap:.0f} s until one reproduces (traced: "
                 f"{case.traced_seconds:.0f} s); {lock}" if cap is not None else
                 f"reduce: replays not capped until one reproduces (no traced time); {lock}")
    saved = load_smallest(out, case)
    if saved is not None:
        reducer.resume(saved)
        if bots.fails(reducer.statements, reducer.options):
            env.log.info(f"reduce: resuming from {len(reducer.statements)} statements "
                         f"(passes done: {', '.join(reducer.done) or 'none'})")
        else:
            env.log.warning("reduce: the saved smallest case no longer fails: starting over")
            reducer = bots.reducer(case, out)
            saved = None
    if saved is None and not reducer.start() and not bots.fails(case.statements):
        raise ReduceError(f"--mode=reduce {case.folder}: the trace does not reproduce the "
                          f"finding's signature {case.signature.id} ({case.title}) in "
                          f"{trials} tr{'y' if trials == 1 else 'ies'} at the start (a "
                          f"timing-dependent bug: try --trials N)")
    return reducer


def _reduced(reducer: Reducer) -> Reduced:
    """The reducer's passes run, with a progress bar on a terminal."""
    tick, close_bar = _progress()
    reducer.progress = tick
    try:
        return reducer.run()
    finally:
        close_bar()


def _reproduced(case: ReduceInput, bots: _Bots, result: Reduced) -> Outcome:
    """The last try that reproduced the reduced case: its own (when it was the last that
    reproduced: a sporadic bug's case that just reproduced is not tried --trials times
    more), else a new check; ReduceError when it does not fail again."""
    final = result.statements
    outcome = bots.last()
    if (outcome is None or not outcome.tried(final, result.options)) and \
            not bots.fails(final, result.options):
        raise ReduceError(f"--mode=reduce {case.folder}: the reduced case of {len(final)} "
                          f"statements did not fail again (a sporadic bug: try --trials N)")
    outcome = bots.last()
    assert outcome is not None
    return outcome


def _write_report(out: OutputDir, case: ReduceInput, final: list[Statement],
                  options: list[str], written: WrittenCase, present: list[str],
                  absent: list[str]) -> str:
    """The bug report OUT/report.txt (with the finding's stack); its path."""
    details = case.finding.get("details", {})
    stack = "\n".join(details.get("raw_frames") or details.get("frames") or [])
    return out.write_text("report.txt", report_text(case, final, options, written, present,
                                                    absent, stack))


def _log_summary(env: RunEnvironment, case: ReduceInput, final: list[Statement],
                 figures: dict[str, Any], width: int) -> None:
    """The reduction's closing lines: the sizes, where the case is present, the files."""
    log = env.log
    log.info(f"reduce: {len(case.statements)} -> {len(final)} statements in "
             f"{figures['candidate_runs']} candidate runs ({width} at once), "
             f"{figures['seconds']:.0f} s")
    log.info(f"reduce: present in {', '.join(figures['present']) or 'none'}; absent in "
             f"{', '.join(figures['absent']) or 'none'}")
    log.info(f"reduce: test case {figures['test']}")
    log.info(f"reduce: bug report {figures['report']}")
