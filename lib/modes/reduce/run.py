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
Then the passes of :mod:`lib.reduce.reducer` run, and the case they leave must fail on
fresh servers (:func:`_on_fresh_servers`): a try on servers an earlier try had used may
need what that try left in them (a server's memory: 6bf08944bc00), so when the case's
last reproducing try was not on fresh servers it is checked on fresh ones (``--trials``
tries, each on servers of its own); when it does not fail there, every pass runs again
from the smallest case that failed on fresh servers, every try on fresh servers -- and
when that case does not fail on them either, the finding is recorded as not
reproducible on a fresh server (exit 2, as for a trace that does not reproduce).  The
case goes to
``OUT/mtr/kw_reduce/`` (:mod:`lib.reduce.mtrcase`), a folder that travels, with the
lines that run it from itself on each code tree kewpie knows (``--basedir``s and
``trees/``) under kewpie --mode=mtr and mysql-test-run.pl (:mod:`lib.mtr.travel`), which
the confirmation runs as printed (:mod:`lib.reduce.confirm`) for "present in ...,
absent in ...", with the bug report ``OUT/report.txt`` and the figures ``OUT/reduce.json``;
when neither tool fails the case on any tree (each run starts fresh servers), the
report says it is not reproduced and the exit status is 2 (:data:`attempts.NOT_CONFIRMED`).
OUT is ``--reduce-out``, else the finding's ``reduce/`` folder (:class:`Target`:
``--mode=reduce RUN`` calls :func:`reduce_finding` for one finding per signature of a
hunt's run folder, each into ``RUN/reduce/<signature>/``: :mod:`.wholerun`).  Exit status 0
when the case is written and present on a tree, or when the results history says another worker is
reducing (or has reduced) the finding's signature (lib/run/findings.py;
``--reduce-again``, or a ``--reduce-out`` of its own, reduces it anyway).
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from ...errors import EXIT_OK, UsageError
from ...reduce import attempts, concurrent
from ...reduce.attempts import Attempt, NotReproducible
from ...reduce.budget import ReplayBudget
from ...reduce.case import ReduceError, ReduceInput, Statement, read_input
from ...reduce.check import Checker, Outcome, requirements
from ...reduce.confirm import Confirmation, Places, confirm
from ...reduce.parallel import ParallelCheck
from ...reduce.mtrcase import (SUITE, WrittenCase, WrongResultCheck, case_text, report_text,
                                write_case)
from ...reduce.reducer import Reduced, Reducer, load_smallest
from ...reduce.replay import LOCK_WAIT_SECONDS, raw_conversions, replay
from ...hunt.wrongresult.rowsform import listed_rows
from ...reduce.schedule import in_end_order
from ...reduce.settings import Settings, pinned_options
from ...mtr.travel import CaseCommands, Tree, TreeCommands, kewpie_command, mysql_test_dir, \
    readme_text
from ...config.sections import Servers
from ...platform.ports import default_lock_dir, ensure_lock_dir
from ...platform.safewrite import OutputDir
from ...run.environment import RunEnvironment
from ...run.findings import ReductionClaim, reduction_record, refused
from ...run.setup import check_reachable
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
    """The differing query and the rows the correct server (s0) gives for it on a
    connection of its own, as the case's mysql client does (lib/hunt/wrongresult/rowsform.py),
    after the statements before it; a warning when the other server gives the same rows
    there (the difference needs the statements' session: the case will pass)."""
    if case.kind != "wrong-result" or outcome is None or not outcome.replayed.differences:
        return None
    query = outcome.replayed.differences[0]
    manager = env.make_manager("rows")
    try:
        servers = manager.get_servers(requirements(case, options))
        replay([s for s in statements if s.seq < query.seq], servers, compare=True)
        rows = [_client_rows(server, query.sql) for server in servers[:2]]
    finally:
        manager.shutdown(fast=True, discard=True)
    if len(rows) > 1 and rows[0] == rows[1]:
        env.log.warning(
            "reduce: the differing query gives the same rows on both servers on a connection "
            "of its own (the mysql client's, as the case runs it): the difference needs the "
            "session the statements before it built, and the case will pass where it "
            "should fail")
    return WrongResultCheck(query.sql, tuple(listed_rows(rows[0])))


def _client_rows(server: Any, sql: str) -> list[tuple[bytes | None, ...]]:
    """The rows of sql on a new connection to server in schema ``test``, speaking utf8mb4
    as the case's mysql client does, each value the server's text (None: NULL)."""
    conn = server.connect(db="test", use_unicode=False, charset="utf8mb4",
                          conv=raw_conversions())
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return [tuple(v if v is None or isinstance(v, bytes) else str(v).encode()
                          for v in row) for row in cur.fetchall()]
    finally:
        conn.close()


def _commands(env: RunEnvironment, trials: int) -> list[TreeCommands]:
    """The lines that run the case from its folder on every code tree kewpie knows (the
    --basedirs and trees/), under kewpie --mode=mtr and mysql-test-run.pl; a sporadic
    bug's with --repeat=--trials."""
    trees = [Tree(f"{t.version.version if t.version else t.basedir} ({t.basedir})", t.basedir)
             for t in env.trees.all()]
    roots = [r for r in (mysql_test_dir(t.basedir) for t in trees) if r]
    commands = CaseCommands(SUITE, CASE_NAME, roots[0] if roots else "",
                            kewpie_command(env.config.workdir), trials,
                            Servers.basedir)
    return commands.for_trees(trees)


def _confirm(env: RunEnvironment, case: ReduceInput, commands: list[TreeCommands],
             written: WrittenCase, work: str) -> Confirmation:
    """The case run from its folder on every tree, as printed (lib/reduce/confirm.py); mtr's
    temporary files in the workdir's tree in RAM when it has one, else the lock directory
    (paths short enough for mtr's sockets)."""
    if env.server_user:
        try:
            check_reachable(written.test, env.server_user)
        except UsageError as exc:
            env.log.warning(f"reduce: {str(exc).split(';')[0]}: kewpie --mode=mtr cannot run "
                            f"the case from {written.suite_dir} (its servers and mariadb-test "
                            f"run as that user); give --reduce-out a folder it can reach")
    lock_dir = ensure_lock_dir(env.config.servers.lock_dir or default_lock_dir())
    shm = env.workdir.shm_path
    places = Places(os.path.join(work, "confirm"), shm if os.path.isdir(shm) else lock_dir,
                    lock_dir)
    os.makedirs(places.scratch, exist_ok=True)
    return confirm(commands, written.suite_dir, places, case.kind, SUITE, CASE_NAME,
                   case.signature)


@dataclass(frozen=True)
class Target:
    """Where one finding's reduction writes: its output folder (``what`` names it in
    messages); whether that folder was chosen for it (``--reduce-out``, a run folder's
    ``reduce/<signature>``: the results history's claim is then taken anyway); the name
    of its scratch folder under ``workdir/reduce/<run>/`` ('' for the folder itself)."""

    out: str
    what: str
    chosen: bool
    scratch: str = ""


def run_reduce(env: RunEnvironment) -> int:
    """The reduction of one finding folder over env (see the module docstring; a hunt's
    run folder goes to :mod:`.wholerun` first); the exit status."""
    own = env.config.section(ReduceOptions)
    if len(own.findings) != 1:
        raise ReduceError("--mode=reduce takes one finding folder (workdir/hunt/<run>/"
                          "findings/<finding>) or a hunt's run folder (workdir/hunt/<run>), "
                          "not " + (" ".join(own.findings) or "none"))
    case = read_input(own.findings[0])
    return reduce_finding(env, case, Target(
        own.out or os.path.join(case.folder, "reduce"),
        "--reduce-out" if own.out else "the finding's reduce folder", bool(own.out)))


def reduce_finding(env: RunEnvironment, case: ReduceInput, target: Target) -> int:
    """One finding's reduction into target (see the module docstring): claimed in the
    results history, reduced, confirmed, written; the exit status (0; NotReproducible,
    ReduceError... as the module docstring says)."""
    own = env.config.section(ReduceOptions)
    signed = str((case.finding.get("signature") or {}).get("id") or "")
    if signed and signed != case.signature.id:
        env.log.info(f"reduce: {case.signature.id} ({case.signature.text}) is the finding's "
                     f"line signed today: its hunt signed it {signed}, every number masked")
    claim = ReductionClaim(env, reduction_record(
        case.folder, case.kind, case.oracle, case.signature.id, case.signature.text,
        case.title, case.finding))
    # one reduction per signature across a fleet; an output of its own asks for one anyway
    taken = claim.take(own.again or target.chosen)
    if not taken.ours:
        env.log.info(refused(taken, case.signature.id))
        claim.close()
        return EXIT_OK
    out = OutputDir.create(target.out, target.what, env.trust, reuse=True)  # never
    # through a link: lib/platform/safewrite.py
    state, figures = "failed", dict[str, Any]()
    try:
        status = _reduce(env, case, out, target.scratch)
        state, figures = "done", json.loads(out.read_text("reduce.json") or "{}")
        return status
    except NotReproducible as exc:
        state, figures = attempts.STATE, _not_reproducible(env, case, out, exc.record)
        raise
    finally:
        claim.finish(state, str(figures.get("test", "")), str(figures.get("report", "")))
        claim.close()
        out.close()


def _not_reproducible(env: RunEnvironment, case: ReduceInput, out: OutputDir,
                      record: dict[str, Any]) -> dict[str, Any]:
    """The record of a finding no start candidate reproduced (lib/reduce/attempts.py),
    logged and written to the output folder -- and to the finding's own ``reduce/``
    folder when the output is elsewhere, so the finding says so; the figures the
    results history links to."""
    for line in attempts.lines([Attempt(**t) for t in record["tries"]]):
        env.log.info(f"reduce: not reproduced: {line}")
    text = attempts.to_text(record)
    out.write_text(attempts.RECORD_FILE, text)
    report = out.write_text("report.txt", attempts.report(record))
    own = os.path.join(case.folder, "reduce")
    if os.path.realpath(out.path) != os.path.realpath(own):
        try:
            folder = OutputDir.create(own, "the finding's reduce folder", env.trust, reuse=True)
            try:
                folder.write_text(attempts.RECORD_FILE, text)
            finally:
                folder.close()
        except (OSError, UsageError) as exc:
            env.log.warning(f"reduce: the finding's folder does not say it is not "
                            f"reproducible ({exc}); {out.path} does")
    return {"test": "", "report": report}


def _reduce(env: RunEnvironment, case: ReduceInput, out: OutputDir, scratch: str) -> int:
    """The reduction of case into the output folder out, its scratch files in the folder
    scratch of the run's (see the module docstring)."""
    own = env.config.section(ReduceOptions)
    work = os.path.join(env.workdir.path, "reduce", env.run_id[:6], scratch)
    os.makedirs(work, exist_ok=True)
    trials = max(1, own.tries or 1)
    width = parallel_width(own.parallel)
    started = time.monotonic()
    bots = _Bots(env, case, work, trials, width)
    try:
        reducer = _started_reducer(env, case, bots, out, trials, width)
        result = _on_fresh_servers(env, case, bots, reducer, _reduced(reducer), trials)
        outcome = _reproduced(case, bots, result)
    except BaseException:   # an error, Ctrl-C, a run's time cap: no server left behind
        bots.shutdown()
        raise
    errors = dict(outcome.replayed.errors)
    server_starts = bots.shutdown()
    check_ = _wrong_result_check(env, case, outcome, bots.checker.options, result.statements)
    settings, options = _case_options(case, result, outcome)
    commands = _commands(env, trials)
    # a reduction replayed in the order the statements ended writes its case in that
    # order; one replayed at once sends and reaps them as the trace did (schedule.py)
    in_order = in_end_order(result.statements) if reducer.order == "ended" else \
        result.statements
    rounds = concurrent.ROUNDS if reducer.order == concurrent.NAME else 0
    written = write_case(out, CASE_NAME, case_text(case, in_order, errors, check_,
                                                   outcome.rebuilt, reducer.order in
                                                   ("interleaved", "timed"), rounds,
                                                   settings),
                         options, readme_text(commands, f"{case.title} ({case.signature.id})",
                                              SUITE))
    confirmation = _confirm(env, case, commands, written, work)
    present, absent = confirmation.split([c.tree.label for c in commands])
    report = _write_report(out, case, result.statements, options, written, present,
                           absent, commands)
    figures = {"finding": case.folder, "signature": case.signature.id,
               "statements_in": len(case.statements), "statements_out": len(result.statements),
               "candidate_runs": bots.runs(),
               "seconds": round(time.monotonic() - started, 3), "trials": trials,
               "parallel": width, "server_starts": server_starts,
               "replays_timed_out": bots.budget.timed_out, "resumed": result.resumed,
               "options": [list(o) for o in result.options], "order": reducer.order,
               "fresh_round": reducer.fresh_only,
               "case_rounds": rounds, "replay_round": outcome.replayed.rounds,
               "accepted": sorted(bots.checker.accept),
               "passes": [vars(p) for p in result.passes], "present": present,
               "absent": absent, "confirmation": confirmation.to_json(),
               "test": written.test, "report": report}
    out.write_text("reduce.json", json.dumps(figures, indent=2))
    _log_summary(env, case, result.statements, figures, width)
    if not present:
        raise _not_confirmed(case, len(result.statements), written.test, absent,
                             bots.attempts(), trials, confirmation, work)
    return EXIT_OK


def _case_options(case: ReduceInput, result: Reduced, outcome: Outcome
                  ) -> tuple[Settings, list[str]]:
    """The settings the case pins and its server options: those of the server the case
    runs on (a compare topology's second), what mysql-test's config changes pinned to
    what the reduction's server had, ahead of the finding's own options."""
    server_index = 1 if case.topology == "compare" and len(result.options) > 1 else 0
    options = list(result.options[server_index]) if result.options else []
    settings = outcome.settings[server_index] if len(outcome.settings) > server_index \
        else Settings()
    return settings, pinned_options(settings, options) + options


def _not_confirmed(case: ReduceInput, statements: int, test: str, absent: list[str],
                   tries: list[Attempt], trials: int, confirmation: Confirmation,
                   work: str) -> NotReproducible:
    """The error and record of a case neither tool failed on any tree (each on fresh
    servers), though it failed on fresh servers in the reduction's replay."""
    return NotReproducible(
        f"--mode=reduce {case.folder}: the reduced case of {statements} statements failed "
        f"on the reduction's fresh servers, but neither kewpie --mode=mtr nor "
        f"mysql-test-run.pl failed it the bug's way on any code tree (each on fresh "
        f"servers; their logs: {os.path.join(work, 'confirm')}); recorded as "
        f"{attempts.NOT_CONFIRMED}",
        dict(attempts.record(case.folder, case.signature.id, case.title,
                             len(case.statements), trials, tries, attempts.NOT_CONFIRMED,
                             f"the reduced case {test} ({statements} statements) failed on "
                             f"fresh servers in the reduction's replay, but under the printed "
                             f"commands it is absent in {', '.join(absent)} (confirmation "
                             f"runs in reduce.json)."),
             confirmation=confirmation.to_json()))


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
            self.checkers[-1].accept = frozenset(env.config.section(ReduceOptions).accept)
        self.order = env.config.section(ReduceOptions).order   # --reduce-order
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
        """A reducer over these bots' check, saving its smallest case in out (its
        candidates replayed serially until it says otherwise)."""
        self.reorder("serial", "start")
        reducer = Reducer(case, self.fails, out, self.runs, first=self.first,
                          reorder=self.reorder, last=self.last)
        reducer.only = self.order
        return reducer

    def reorder(self, order: str, candidate: str) -> None:
        """Every bot replays the next candidates in this order (lib/reduce/check.py), its
        tries recorded as candidate's."""
        for checker in self.checkers:
            checker.order, checker.candidate = order, candidate

    def fresh_only(self, on: bool) -> None:
        """Every bot runs each try on fresh servers (lib/reduce/check.py), or as the reuse
        rule says."""
        for checker in self.checkers:
            checker.fresh_only = on

    def attempts(self) -> list[Attempt]:
        """Every bot's tries so far, in the order they ended on each bot."""
        return [a for checker in self.checkers for a in checker.attempts]

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
    if bots.checker.accept:
        env.log.info(f"reduce: a try also reproduces with signature "
                     f"{', '.join(sorted(bots.checker.accept))} (--reduce-accept)")
    saved = load_smallest(out, case)
    if saved is not None:
        reducer.resume(saved)
        bots.fresh_only(reducer.fresh_only)
        if reducer.check(reducer.statements):
            env.log.info(f"reduce: resuming from {len(reducer.statements)} statements "
                         f"(passes done: {', '.join(reducer.done) or 'none'})")
        else:
            env.log.warning("reduce: the saved smallest case no longer fails: starting over")
            reducer = bots.reducer(case, out)
            bots.fresh_only(False)
            saved = None
    if saved is None and not reducer.start() and (reducer.only not in ("", "serial") or
                                                  not reducer.check(case.statements)):
        raise NotReproducible(
            f"--mode=reduce {case.folder}: the trace does not reproduce the "
            f"finding's signature {case.signature.id} ({case.title}) in "
            f"{trials} tr{'y' if trials == 1 else 'ies'} at the start (a "
            f"timing-dependent bug: try --trials N); recorded as not reproducible from "
            f"its trace", attempts.record(case.folder, case.signature.id, case.title,
                                          len(case.statements), trials, bots.attempts()))
    bots.reorder(reducer.order, "pass")
    return reducer


def _reduced(reducer: Reducer) -> Reduced:
    """The reducer's passes run, with a progress bar on a terminal."""
    tick, close_bar = _progress()
    reducer.progress = tick
    try:
        return reducer.run()
    finally:
        close_bar()


def _on_fresh_servers(env: RunEnvironment, case: ReduceInput, bots: _Bots, reducer: Reducer,
                      result: Reduced, trials: int) -> Reduced:
    """The reduced case, failing on fresh servers (the module docstring): as it is when
    its last reproducing try was on fresh servers or it fails on them now, else the
    second round's; NotReproducible when the round's start fails on none either."""
    last = bots.last()
    if last is not None and last.fresh and last.tried(result.statements, result.options):
        return result
    tries = f"{trials} tr{'y' if trials == 1 else 'ies'}"
    bots.fresh_only(True)
    if reducer.check(result.statements, result.options):
        env.log.info(f"reduce: the case of {len(result.statements)} statements fails on "
                     f"fresh servers too")
        return result
    base = reducer.fresh
    env.log.warning(
        f"reduce: the case of {len(result.statements)} statements does not fail on fresh "
        f"servers ({tries}, each on servers of its own): its tries failed on servers an "
        f"earlier try had used, which kept something the reuse rule does not see (the "
        f"server's memory, a library's state); reducing again from the smallest case that "
        f"failed on fresh servers ("
        + (f"{len(base[0])} statements" if base else "none did: the whole trace")
        + "), every try on fresh servers")
    reducer.again_fresh()
    if not reducer.check(reducer.statements):
        raise NotReproducible(
            f"--mode=reduce {case.folder}: the reduction's cases gave the finding's signature "
            f"{case.signature.id} only on servers an earlier try had used: on fresh servers "
            f"neither its case of {len(result.statements)} statements nor the "
            f"{len(reducer.statements)} statements it came from did in {tries}; recorded as "
            f"{attempts.NOT_FRESH}",
            attempts.record(case.folder, case.signature.id, case.title, len(case.statements),
                            trials, bots.attempts(), attempts.NOT_FRESH,
                            f"the reduction's cases gave the finding's signature only on "
                            f"servers an earlier try had used (state the reuse rule does not "
                            f"see); on fresh servers neither the reduced case "
                            f"({len(result.statements)} statements) nor the "
                            f"{len(reducer.statements)} statements it came from did in "
                            f"{tries}."))
    second = _reduced(reducer)
    second.passes = result.passes + second.passes
    second.started_with, second.resumed = result.started_with, result.resumed
    return second


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
                  absent: list[str], commands: list[TreeCommands]) -> str:
    """The bug report OUT/report.txt (with the finding's stack); its path."""
    details = case.finding.get("details", {})
    stack = "\n".join(details.get("raw_frames") or details.get("frames") or [])
    return out.write_text("report.txt", report_text(case, final, options, written, present,
                                                    absent, stack, commands))


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
