"""``./kewpie.py --mode=reduce RUN``: every signature of a hunt's run folder dealt with.

The run's findings are grouped by signature and one is picked per signature
(:mod:`lib.reduce.runfolder`: the shortest trace, ties the earliest trial).  In the
order the signatures were first found, each gets a verdict:

- a reduction that finished before -- its output folder ``OUT/<signature>/`` (``OUT`` is
  ``--reduce-out``, else ``RUN/reduce``) holds ``reduce.json`` or
  ``not-reproducible.json`` -- is shown as it ended, not run again;
- a signature its finding tags as a known bug is skipped, the bug named (reduced anyway
  with ``--reduce-again``);
- a finding ``--mode=reduce`` refuses (:class:`lib.reduce.case.NotReducible`: a hang, a
  divergence, Pinolo's...) is "not reducible", with why;
- the others are reduced one after the other by the single-finding reduction itself
  (``reduce_one``: :func:`.run.reduce_finding`) into ``OUT/<signature>/``, each under
  ``--reduce-timeout`` (:class:`lib.platform.timecap.TimeCap`: at the cap the reduction
  unwinds as on Ctrl-C -- its servers stopped, its smallest case kept to resume -- and
  the next one starts; the confirmation on the code trees is never cut, nor the
  results history's record of its end: the cap waits for them, :data:`DEFER_IN`).

After every signature ``OUT/triage.json`` and ``OUT/triage.md`` are written again
(:mod:`lib.reduce.triage`).  A second ``--mode=reduce RUN`` resumes what was stopped,
interrupted or failed.  Ctrl-C or SIGTERM stops the reduction in flight the same way,
writes the table (that row ``interrupted``) and goes on as the command line's interrupt.
The exit status: :func:`lib.reduce.triage.exit_status`.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable

from ...errors import CapReached, Interrupted, KewpieError
from ...platform.safewrite import OutputDir
from ...platform.timecap import TimeCap
from ...reduce import confirm, triage
from ...reduce.attempts import RECORD_FILE
from ...reduce.case import NotReducible, ReduceInput, read_input
from ...reduce.runfolder import SignatureGroup, group, is_run_folder, read_run
from ...run import findings as run_findings
from ...run.environment import RunEnvironment
from .options import ReduceOptions
from .run import Target, reduce_finding, run_reduce

ReduceOne = Callable[[RunEnvironment, ReduceInput, Target], int]
# where the cap waits: the confirmation (its tools' servers are never cut half-way) and
# the results history's claim (its record of the reduction's end)
DEFER_IN = (confirm.__name__, run_findings.__name__)
FIGURES_FILE = "reduce.json"


def run_mode(env: RunEnvironment) -> int:
    """--mode=reduce: a hunt's run folder (the one TEST argument) reduced here, anything
    else by :func:`.run.run_reduce`; the exit status."""
    own = env.config.section(ReduceOptions)
    if len(own.findings) == 1 and is_run_folder(own.findings[0]):
        return reduce_run(env, own.findings[0], reduce_finding)
    return run_reduce(env)


def reduce_run(env: RunEnvironment, run: str, reduce_one: ReduceOne) -> int:
    """Every signature of the run folder run dealt with (module docstring); the exit
    status (lib/reduce/triage.py's exit_status)."""
    own = env.config.section(ReduceOptions)
    groups = group(read_run(run))
    env.log.info(f"Reducing hunt run {run}: {sum(len(g.findings) for g in groups)} "
                 f"finding(s) of {len(groups)} signature(s)"
                 + (f", each reduction capped at {own.timeout:g} s" if own.timeout else ""))
    base = OutputDir.create(own.out or os.path.join(run, "reduce"),
                            "--reduce-out" if own.out else "the run's reduce folder",
                            env.trust, reuse=True)
    rows = [triage.row_of(g) for g in groups]
    try:
        _write(base, run, rows, own)
        for number, (found, row) in enumerate(zip(groups, rows), 1):
            try:
                _one(env, found, row, base, reduce_one, f"{number} of {len(groups)}")
            finally:
                _write(base, run, rows, own)
        for row in rows:
            env.log.info(f"reduce: {row.signature} ({row.kind}, {row.findings} finding(s)): "
                         f"{row.verdict}")
        env.log.info(f"reduce: triage {base.path_of(triage.MARKDOWN_FILE)}")
    finally:
        base.close()
    return triage.exit_status(rows)


def _one(env: RunEnvironment, found: SignatureGroup, row: triage.Row, base: OutputDir,
         reduce_one: ReduceOne, place: str) -> None:
    """One signature's verdict into row (module docstring)."""
    own = env.config.section(ReduceOptions)
    sig = found.signature
    out = base.path_of(sig)
    if _finished(base, row, sig):
        env.log.info(f"reduce: signature {place}: {sig}: reduced before: {row.verdict}")
        return
    if row.known and not own.again:
        triage.skip_known(row)
        env.log.info(f"reduce: signature {place}: {sig}: {row.verdict} (--reduce-again "
                     f"reduces it)")
        return
    try:
        case = read_input(row.finding)
    except NotReducible as exc:
        triage.not_reducible(row, exc.why)
        env.log.info(f"reduce: signature {place}: {sig}: {row.verdict}")
        return
    env.log.info(f"reduce: signature {place}: {sig} {row.kind} ({row.oracle}), "
                 f"{row.findings} finding(s) in trial(s) {', '.join(map(str, row.trials))}: "
                 f"{os.path.basename(row.finding)} ({row.statements} statements) into {out}")
    _reduce(env, case, row, base, reduce_one, own.timeout)


def _reduce(env: RunEnvironment, case: ReduceInput, row: triage.Row, base: OutputDir,
            reduce_one: ReduceOne, cap: float) -> None:
    """The single-finding reduction of case under the cap; its verdict, or why it has
    none, into row.  A signal other than the cap goes on up once the row says so."""
    sig = row.signature
    target = Target(base.path_of(sig), f"the reduce folder of {sig}", True, sig)
    try:
        with TimeCap(cap, defer_in=DEFER_IN):
            reduce_one(env, case, target)
    except CapReached:
        if not _finished(base, row, sig):
            triage.unfinished(row, triage.STOPPED, f"stopped at the cap ({cap:g} s): "
                              f"resumes on the next --mode=reduce of the run", target.out)
            env.log.warning(f"reduce: {sig}: {row.verdict}; its servers stopped")
    except Interrupted as exc:
        if not _finished(base, row, sig):
            triage.unfinished(row, triage.INTERRUPTED, f"interrupted by signal {exc.signum}: "
                              f"resumes on the next --mode=reduce of the run", target.out)
        raise
    except KewpieError as exc:   # NotReproducible too: its record is in the folder
        if not _finished(base, row, sig):
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            triage.unfinished(row, triage.FAILED, f"failed: {first}", target.out)
            env.log.error(first)
        else:
            env.log.warning(f"reduce: {sig}: {row.verdict}")
    else:
        if not _finished(base, row, sig):
            triage.unfinished(row, triage.FAILED, f"failed: the reduction wrote no "
                              f"{FIGURES_FILE}", target.out)


def _finished(base: OutputDir, row: triage.Row, sig: str) -> bool:
    """Whether sig's output folder says its reduction ended (the row filled from it)."""
    if not base.exists(sig):
        return False
    return triage.finished(row, base.path_of(sig), _json(base, f"{sig}/{FIGURES_FILE}"),
                           _json(base, f"{sig}/{RECORD_FILE}"))


def _json(base: OutputDir, rel: str) -> dict[str, Any] | None:
    """A JSON file of the output (None when absent or not a JSON object)."""
    try:
        text = base.read_text(rel)
    except OSError:
        return None
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _write(base: OutputDir, run: str, rows: list[triage.Row], own: ReduceOptions) -> None:
    """triage.json and triage.md, as they stand."""
    settings = {"trials": own.tries, "parallel": own.parallel, "timeout": own.timeout,
                "again": own.again, "order": own.order, "accept": list(own.accept)}
    base.write_text(triage.JSON_FILE, json.dumps(triage.to_json(run, rows, settings), indent=2)
                    + "\n")
    base.write_text(triage.MARKDOWN_FILE, triage.markdown(run, rows))
