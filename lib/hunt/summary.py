"""The end of a hunt: findings grouped by signature, the table, summary.json, JUnit and
the exit status.

:class:`HuntSummary` collects every trial's result.  :meth:`HuntSummary.groups`
puts findings with the same signature together (count, trials, seeds, first
folder, tag and bug); :meth:`HuntSummary.table` is what the run prints;
:meth:`HuntSummary.to_json` is ``summary.json`` beside the findings;
:func:`junit` gives one JUnit testcase per signature (a failure for a new or
known-fixed one, and for a known one unless ``--allow-known``: then it is
skipped with the bug id), plus one passing testcase for the trials when
nothing was found.
"""
from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from junitparser import Failure, Skipped
from junitparser.xunit2 import JUnitXml, TestCase, TestSuite

from ..platform.safewrite import OutputDir, text_bytes, write_file
from ..platform.trustedpath import Trust
from .finding import Written
from .knownbugs import KNOWN, KNOWN_FIXED, NEW
from .trial import TrialResult


@dataclass
class Group:
    """The findings of one signature."""

    signature_id: str
    signature_text: str
    kind: str
    title: str
    tag: str
    bug_id: str
    bug_note: str
    findings: list[Written] = field(default_factory=list)
    unique_id: str = ""          # a crash's UniqueID (MariaDB QA's)
    bug_quality: str = ""        # how a known_bugs.strings line matched

    @property
    def count(self) -> int:
        """How many findings have this signature."""
        return len(self.findings)

    @property
    def first(self) -> Written:
        """The earliest finding (the lowest trial number)."""
        return min(self.findings, key=lambda w: (w.trial, w.path))

    def failing(self, allow_known: bool) -> bool:
        """Does this group fail the run?"""
        return self.tag in (NEW, KNOWN_FIXED) or (self.tag == KNOWN and not allow_known)


@dataclass
class HuntSummary:
    """Every trial's result, and what they add up to."""

    trials: list[TrialResult] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    def add(self, result: TrialResult) -> None:
        """Record one finished trial."""
        self.trials.append(result)

    @property
    def statements(self) -> int:
        """Statements the loads sent, all trials."""
        return sum(t.statements for t in self.trials)

    def groups(self) -> list[Group]:
        """Findings by signature: failing tags first, then by count."""
        groups: dict[str, Group] = {}
        for trial in self.trials:
            for w in trial.findings:
                group = groups.get(w.signature_id)
                if group is None:
                    group = groups[w.signature_id] = Group(
                        w.signature_id, w.signature_text, w.kind, w.title, w.tag, w.bug_id,
                        w.bug_note, unique_id=w.unique_id, bug_quality=w.bug_quality)
                group.findings.append(w)
        order = {NEW: 0, KNOWN_FIXED: 1, KNOWN: 2}
        return sorted(groups.values(), key=lambda g: (order.get(g.tag, 3), -g.count,
                                                      g.signature_id))

    def failed(self, allow_known: bool) -> bool:
        """True when a finding fails the run (new, known-fixed, or known without
        --allow-known)."""
        return any(g.failing(allow_known) for g in self.groups())

    def table(self) -> list[str]:
        """The summary table's lines."""
        groups = self.groups()
        lines = [f"{'SIGNATURE':<12}  {'KIND':<12} {'TAG':<11} {'COUNT':>5}  {'BUG':<12} TITLE"]
        lines.append("-" * 100)
        for g in groups:
            lines.append(f"{g.signature_id:<12}  {g.kind:<12} {g.tag:<11} {g.count:>5}  "
                         f"{g.bug_id or '-':<12} {g.title[:100]}")
            if g.unique_id:
                lines.append(f"{'':14}UniqueID: {g.unique_id}"
                             + (f"  [{g.bug_quality}]" if g.bug_quality else ""))
            lines.append(f"{'':14}first: {g.first.path}")
        if not groups:
            lines.append("(no findings)")
        return lines

    def to_json(self, settings: dict[str, Any]) -> dict[str, Any]:
        """summary.json: the settings, each trial, each signature group."""
        return {
            "format": "kewpie-hunt-summary/1", "started": self.started, "ended": time.time(),
            "settings": settings, "statements": self.statements,
            "trials": [{"number": t.number, "seed": t.seed, "grammar": t.grammar, "bot": t.bot,
                        "options": t.options, "status": t.status, "reason": t.reason,
                        "statements": t.statements, "load_seconds": round(t.load_seconds, 3),
                        "seconds": round(t.seconds, 3), "oracle_stats": t.oracle_stats,
                        "findings": [os.path.basename(w.path) for w in t.findings]}
                       for t in sorted(self.trials, key=lambda t: t.number)],
            "signatures": [{"id": g.signature_id, "text": g.signature_text, "kind": g.kind,
                            "unique_id": g.unique_id or None,
                            "title": g.title, "tag": g.tag, "bug": g.bug_id or None,
                            "bug_quality": g.bug_quality or None,
                            "count": g.count, "trials": sorted({w.trial for w in g.findings}),
                            "findings": [w.path for w in g.findings]}
                           for g in self.groups()],
        }

    def write_json(self, path: str, settings: dict[str, Any]) -> str:
        """Write summary.json (in a folder of the workdir, never through a link); its path."""
        text = json.dumps(self.to_json(settings), indent=2, default=str) + "\n"
        with OutputDir.in_trusted(os.path.dirname(os.path.abspath(path)), "the hunt") as out:
            out.write_text(os.path.basename(path), text)
        return path


def junit(summary: HuntSummary, allow_known: bool, path: str, trust: Trust | None = None) -> str:
    """Write the hunt's JUnit report (see the module docstring); its path."""
    suite = TestSuite("hunt")
    suite.timestamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    suite.hostname = socket.gethostname()
    for g in summary.groups():
        case = TestCase(f"{g.signature_id} {g.title}"[:200], classname=f"hunt.{g.kind}",
                        time=0.0)
        text = (f"{g.signature_text}\n" + (f"UniqueID: {g.unique_id}\n" if g.unique_id else "")
                + f"{g.count} finding(s) in trial(s) "
                f"{', '.join(str(t) for t in sorted({w.trial for w in g.findings}))}\n"
                f"first: {g.first.path}\n" + (f"bug: {g.bug_id} {g.bug_note}"
                                               + (f" [{g.bug_quality}]" if g.bug_quality else "")
                                               + "\n" if g.bug_id else ""))
        if g.failing(allow_known):
            failure = Failure(f"{g.tag}: {g.title}"[:500], type_=g.tag)
            failure.text = text
            case.result = [failure]
        else:
            case.result = [Skipped(f"known bug {g.bug_id}: {g.title}"[:500])]
        case.system_out = text
        suite.add_testcase(case)
    if not summary.groups():
        case = TestCase(f"{len(summary.trials)} trial(s), {summary.statements} statements",
                        classname="hunt.trials",
                        time=round(sum(t.seconds for t in summary.trials), 3))
        suite.add_testcase(case)
    suite.update_statistics()
    xml = JUnitXml("kewpie-hunt")
    xml.add_testsuite(suite)
    xml.update_statistics()
    return write_file(path, text_bytes(lambda out: xml.write(out, pretty=True)), "--junit-xml",
                      trust)
