"""Drive recorded workloads and a fault schedule together, then check them.

::

    bank, append = Bank(nodes), Append(nodes)
    result = run_workloads([bank, append], duration=8,
                           schedule=Schedule.cycle([Kill([n2], nodes)]), settle=wait)
    result.verdict          # valid / invalid / unknown with evidence

The run: set up each workload, start every client thread and the schedule,
wait ``duration`` seconds (and for the schedule to finish), stop the
clients, heal what is still broken, ``settle`` (wait until replicas or
nodes caught up), read the final state and check each history (:func:`judge`:
a final read refused past its bound makes the verdict unknown).  Histories
are saved as JSON lines when ``history_dir`` is given.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable

from .faults import HEAL_TIMEOUT, Schedule
from .oplog import History
from .verdict import Verdict, VerdictStatus, combine
from .workload import ClientThreads, Workload
from ..errors import KewpieError
from ..platform.logsetup import get_logger
from ..servers.judging import ReadUnknownError


class WorkloadError(KewpieError):
    """The workload itself broke (a client crashed, a fault could not be healed)."""


@dataclass
class RunResult:
    """The verdict of each workload, and of all of them together."""

    verdicts: list[Verdict] = field(default_factory=list)
    fault_errors: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        """All workloads' verdicts combined (invalid beats unknown beats valid)."""
        return combine("+".join(v.checker for v in self.verdicts), self.verdicts)

    def report(self) -> str:
        """Every workload's verdict report, one after the other."""
        return "\n".join(v.report() for v in self.verdicts)


def fault_timeline(history: History | None, evidence_lines: int = 40) -> str:
    """The faults as they happened, then the full text of the first error (its evidence)."""
    if history is None:
        return ""
    events = history.events()
    lines = ["--- fault schedule ---"]
    lines += [f"+{e.start:.1f}s {e.f}: {(str(e.value).splitlines() or [''])[0]}" for e in events]
    failed = next((e for e in events if e.f.endswith("-error")), None)
    if failed is not None:
        detail = str(failed.value).splitlines()[1:evidence_lines]
        if detail:
            lines += [f"--- {failed.f} evidence ---", *detail]
    return "\n".join(lines)


def judge(workload: Workload, unsettled: str = "") -> Verdict:
    """workload's verdict over its history and final state.

    The final state is read with judging reads (lib/servers/judging.py): when
    one is still refused transiently after its bound, the verdict cannot be
    valid: it is ``unknown`` and names the reason, unless the history alone
    already proves a violation (then it stays ``invalid``).  ``unsettled`` is why
    the servers could not be settled first (the same judging reads): the final
    state is not read then.
    """
    why = unsettled
    if not why:
        try:
            return workload.check(workload.final_state())
        except ReadUnknownError as exc:
            why = str(exc)
    verdict = workload.check({})
    if verdict.invalid:
        verdict.summary += f" (final state unknown: {why})"
    else:
        verdict.status = VerdictStatus.UNKNOWN
        verdict.summary = f"final state unknown: {why}"
    return verdict


def run_workloads(workloads: list[Workload], duration: float, schedule: Schedule | None = None,
                  settle: Callable[[], None] | None = None, history_dir: str | None = None,
                  label: str = "run") -> RunResult:
    """Run workloads (and schedule) for duration seconds; return their verdicts."""
    log = get_logger()
    if settle:
        settle()  # a set left broken by an earlier test fails here, with its evidence
    t0 = time.monotonic()
    for workload in workloads:
        workload.history.t0 = t0
        workload.setup()
    if settle:
        settle()
    threads = [ClientThreads(w) for w in workloads]
    for group in threads:
        group.start()
    if schedule:
        schedule.start([w.history for w in workloads])
    try:
        deadline = time.monotonic() + duration
        # a schedule outlasts the load by its own steps and one heal at most; past that,
        # finish() gives it up and says so in schedule.errors (never wait for ever)
        limit = deadline + (schedule.span + HEAL_TIMEOUT if schedule else 0.0)
        while time.monotonic() < deadline or (
                schedule and schedule.running() and time.monotonic() < limit):
            time.sleep(0.05)
    finally:
        for group in threads:
            group.stop()
        if schedule:
            schedule.finish()
    crashes = [c for g in threads for c in g.crashes]
    if crashes:
        raise WorkloadError(f"{len(crashes)} client thread(s) crashed: {crashes[0]}")
    result = RunResult(fault_errors=list(schedule.errors) if schedule else [])
    if result.fault_errors:
        raise WorkloadError("fault schedule failed: " + "; ".join(result.fault_errors) + "\n" +
                            fault_timeline(workloads[0].history if workloads else None))
    unsettled = ""
    if settle:
        try:
            settle()
        except ReadUnknownError as exc:  # the causal reads that settle a cluster
            unsettled = f"the servers did not settle: {exc}"
    for workload in workloads:
        verdict = judge(workload, unsettled)
        if history_dir:
            os.makedirs(history_dir, exist_ok=True)
            path = os.path.join(history_dir, f"{label}-{workload.name}.jsonl")
            workload.history.save(path)
            verdict.history_file = path
        log.debug(f"{label}: {verdict.checker} {verdict.status} ({verdict.counts}): "
                 f"{verdict.summary}")
        result.verdicts.append(verdict)
    return result
