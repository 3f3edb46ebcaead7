"""A hunt's trials and findings, and a reduction's claim, in the results history
(lib/history/findings.py, docs/history.md "Findings").

``--mode=hunt`` records each trial as a result (test ``hunt.<grammar>``: ``pass``, or
``fail`` with every finding's line as its failure text and the first finding's
signature and folder) and each finding folder as a sighting of its signature
(:func:`record_trial`).  ``--mode=reduce`` claims its finding's signature in the store
before it starts (:class:`ReductionClaim`): a signature another worker is reducing,
or has reduced, is not reduced again (``--reduce-again`` reduces it anyway); the end
is recorded with the reduced case and the report (their --evidence-url links when
given).  With the history off, or its store
unreachable (a warning), a reduction runs unclaimed.
"""
from __future__ import annotations

import functools
import os
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Mapping

from ..history.findings import Claim, claim_reduction, finish_reduction
from ..history.records import FindingRecord, RunInfo, evidence_link, machine_of, utcnow
from ..hunt.finding import Written
from ..hunt.trial import TrialResult
from ..platform.logsetup import get_logger
from .environment import RunEnvironment
from .recording import RunHistory, history_target, run_info

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


def trial_test(grammar: str) -> str:
    """A trial's test name in the history: ``hunt.<grammar's stem>``."""
    return "hunt." + os.path.splitext(os.path.basename(grammar))[0]


def finding_line(w: Written) -> str:
    """One finding as a trial's failure text shows it."""
    bug = f" {w.bug_id}" if w.bug_id else ""
    return f"{w.kind} {w.signature_id} [{w.tag.upper()}]{bug} ({w.oracle}): {w.summary}\n  {w.path}"


def finding_record(w: Written, bot: str) -> FindingRecord:
    """The history's record of a written finding."""
    found = datetime.fromtimestamp(w.written_at, timezone.utc).replace(tzinfo=None) \
        if w.written_at else utcnow()
    return FindingRecord(signature=w.signature_id, kind=w.kind, oracle=w.oracle,
                         signature_text=w.signature_text, unique_id=w.unique_id,
                         title=w.title, tag=w.tag, bug_id=w.bug_id, trial=w.trial,
                         seed=w.seed, bot=bot, folder=w.path, summary=w.summary,
                         found_at=found)


def record_trial(history: RunHistory, result: TrialResult) -> None:
    """Record a finished trial (a result) and its findings (sightings)."""
    if not history.enabled:
        return
    if result.status == "skipped":
        status = "skipped"
    else:
        status = "fail" if result.findings or result.error else "pass"
    failure = "\n".join([finding_line(w) for w in result.findings]
                        + ([result.error] if result.error else []))
    first = result.findings[0] if result.findings else None
    history.record_result(trial_test(result.grammar), status,
                          int(result.seconds * 1000), failure=failure,
                          signature=first.signature_id if first else "",
                          evidence=first.path if first else "", bot=result.bot)
    for w in result.findings:
        history.record_finding(finding_record(w, result.bot))


def reduction_record(folder: str, kind: str, oracle: str, signature: str,
                     signature_text: str, title: str, finding: Mapping[str, Any]) -> FindingRecord:
    """The record a reduction claims by: its finding folder's signature and facts."""
    bug = finding.get("bug") or {}
    trial = finding.get("trial") or {}
    return FindingRecord(signature=signature, kind=kind, oracle=oracle,
                         signature_text=signature_text, unique_id=str(finding.get("unique_id") or ""),
                         title=title, tag=str(finding.get("tag") or ""),
                         bug_id=str(bug.get("id") or bug.get("bug_id") or ""),
                         trial=int(trial.get("number") or 0), seed=int(trial.get("seed") or 0),
                         folder=folder)


class ReductionClaim:
    """A reduction's claim on its signature in the store (see the module docstring)."""

    def __init__(self, env: RunEnvironment, record: FindingRecord) -> None:
        self.env = env
        self.record = record
        run: RunInfo = run_info(env, mode="reduce", version=False)
        self.owner = f"{machine_of(run)} pid {os.getpid()} run {env.run_id[:12]}"
        self.engine: "Engine | None" = None
        self.claim: Claim | None = None

    def take(self, again: bool = False) -> Claim:
        """Claim the reduction; a claim that is ours when the history is off or its
        store cannot be reached (said in a warning)."""
        if not self.env.config.history.record:
            return Claim(True)
        from ..history.store import open_engine
        try:
            self.engine = open_engine(history_target(self.env.config), writer=True, create=True)
            with self.engine.begin() as conn:
                self.claim = claim_reduction(conn, self.record, self.owner, again)
        except Exception as exc:  # noqa: BLE001 - never stops a reduction
            get_logger().warning(f"reduce: results history unreachable ({exc}): reducing "
                                 f"{self.record.signature} without claiming it")
            self.close()
            return Claim(True)
        return self.claim

    def finish(self, state: str, reduced_case: str = "", report: str = "") -> None:
        """Record the reduction's end (done, with its case and report; or failed)."""
        if self.engine is None or self.claim is None or not self.claim.ours:
            return
        try:
            link = functools.partial(evidence_link, environ=os.environ,
                                     base_url=self.env.config.history.evidence_url,
                                     workdir=self.env.workdir.path)
            with self.engine.begin() as conn:
                finish_reduction(conn, self.record.signature, self.owner, state,
                                 link(reduced_case) if reduced_case else "",
                                 link(report) if report else "")
        except Exception as exc:  # noqa: BLE001 - the reduction's files are written
            get_logger().warning(f"reduce: could not record the reduction in the results "
                                 f"history ({exc})")

    def close(self) -> None:
        """Let the store's engine go."""
        if self.engine is not None:
            self.engine.dispose()
            self.engine = None


def refused(claim: Claim, signature: str) -> str:
    """The log line of a reduction not started: whose it is."""
    since = f" since {claim.since:%Y-%m-%d %H:%M} UTC" if claim.since else ""
    if claim.state == "done":
        return (f"reduce: {signature} was reduced by {claim.owner}{since}: "
                f"{claim.reduced_case or '(no case recorded)'} (--reduce-again reduces it anyway)")
    return (f"reduce: {signature} is being reduced by {claim.owner}{since} (the results "
            f"history says {claim.state}); not started again (--reduce-again reduces it anyway)")
