"""A hunt's run folder read for ``--mode=reduce RUN``: its findings grouped by signature,
one picked per signature, and why a signature is skipped.

A run folder is what ``--mode=hunt`` writes under ``workdir/hunt/<run>/``: ``summary.json``
(format ``kewpie-hunt-summary/1``) beside ``findings/``, whose every complete finding
folder holds a ``finding.json`` (docs/hunting.md, "The finding folder").  The findings
are grouped by the signature id their hunt gave them (:func:`group`); of each group the
reduction takes the finding with the shortest trace, ties going to the earliest trial
(:func:`pick`); a signature the finding tags as a known bug (``tag`` ``known``, as the
hunt's ``--known-bugs`` matching wrote it) is skipped unless asked (:func:`known_bug`).
Pure reading: nothing here starts a server or writes a file.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..hunt.finding import FINDING_FILE, FORMAT, TRACE_FILE
from .case import ReduceError

SUMMARY_FILE = "summary.json"
SUMMARY_FORMAT = "kewpie-hunt-summary/1"
FINDINGS = "findings"


class RunFolderError(ReduceError):
    """A folder given as a hunt's run folder is not one (one ERROR line, exit 2)."""


@dataclass(frozen=True)
class FoundFinding:
    """One finding of a run, as its finding.json says."""

    folder: str          # its folder's absolute path
    signature: str       # the signature id its hunt gave it
    text: str            # the signature's text
    kind: str
    oracle: str
    title: str
    trial: int
    statements: int      # the statements its trace holds
    tag: str = "new"     # new, known, known-fixed
    bug: dict[str, Any] | None = None   # the known bug it matched (finding.json's "bug")

    @property
    def name(self) -> str:
        """The finding folder's name (``t0001-1-crash-7eeb1eeb9e1f``)."""
        return os.path.basename(self.folder)

    @classmethod
    def from_json(cls, folder: str, data: dict[str, Any], statements: int) -> "FoundFinding":
        """From a finding.json's data (statements: its trace's, counted when the file does
        not say)."""
        sig = data.get("signature") or {}
        bug = data.get("bug")
        return cls(os.path.abspath(folder), str(sig.get("id") or ""), str(sig.get("text") or ""),
                   str(data.get("kind") or ""), str(data.get("oracle") or ""),
                   str(data.get("title") or ""), int((data.get("trial") or {}).get("number") or 0),
                   statements, str(data.get("tag") or "new"),
                   bug if isinstance(bug, dict) else None)


@dataclass(frozen=True)
class SignatureGroup:
    """A signature's findings in the run, in trial order."""

    signature: str
    findings: tuple[FoundFinding, ...]

    @property
    def picked(self) -> FoundFinding:
        """The finding the reduction takes (:func:`pick`)."""
        return pick(self.findings)

    @property
    def trials(self) -> list[int]:
        """The trials that found the signature, in order."""
        return sorted({f.trial for f in self.findings})


def is_run_folder(path: str) -> bool:
    """Does path look like a hunt's run folder (summary.json and findings/, and no
    finding.json of its own)?"""
    return (os.path.isfile(os.path.join(path, SUMMARY_FILE))
            and os.path.isdir(os.path.join(path, FINDINGS))
            and not os.path.exists(os.path.join(path, FINDING_FILE)))


def read_run(path: str) -> list[FoundFinding]:
    """The complete findings of the run folder path (a folder without finding.json, or
    with one of another format, is not a finding); RunFolderError when path is no run
    folder or its summary.json is not a hunt's."""
    if not is_run_folder(path):
        raise RunFolderError(f"--mode=reduce {path}: not a hunt's run folder (no {SUMMARY_FILE} "
                             f"beside a {FINDINGS}/ folder)")
    try:
        with open(os.path.join(path, SUMMARY_FILE), encoding="utf-8") as fh:
            summary = json.load(fh)
    except (OSError, ValueError) as exc:
        raise RunFolderError(f"--mode=reduce {path}: {SUMMARY_FILE} cannot be read: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(summary, dict) or summary.get("format") != SUMMARY_FORMAT:
        raise RunFolderError(f"--mode=reduce {path}: not a hunt's run folder ({SUMMARY_FILE} "
                             f"is not of format {SUMMARY_FORMAT})")
    root = os.path.join(path, FINDINGS)
    found = []
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        data = _finding_json(folder)
        if data is not None:
            found.append(FoundFinding.from_json(folder, data, _trace_statements(folder, data)))
    return found


def _finding_json(folder: str) -> dict[str, Any] | None:
    """A finding folder's finding.json (None: not a complete finding of the format)."""
    if os.path.islink(folder) or not os.path.isdir(folder):
        return None
    try:
        with open(os.path.join(folder, FINDING_FILE), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def _trace_statements(folder: str, data: dict[str, Any]) -> int:
    """The statements of a finding's trace: finding.json's ``files.trace_statements``,
    else its trace.jsonl's lines (0 without one)."""
    said = (data.get("files") or {}).get("trace_statements")
    if isinstance(said, int) and said >= 0:
        return said
    try:
        with open(os.path.join(folder, TRACE_FILE), encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return 0


def pick(findings: Sequence[FoundFinding]) -> FoundFinding:
    """The finding of a signature to reduce: the shortest trace; ties: the earliest
    trial, then the folder's name."""
    return min(findings, key=lambda f: (f.statements, f.trial, f.name))


def group(findings: Iterable[FoundFinding]) -> list[SignatureGroup]:
    """The findings by signature id: each group's in trial order (then name), the groups
    in the order their signatures were first found (then by id)."""
    by_id: dict[str, list[FoundFinding]] = {}
    for finding in findings:
        by_id.setdefault(finding.signature, []).append(finding)
    groups = [SignatureGroup(sig, tuple(sorted(fs, key=lambda f: (f.trial, f.name))))
              for sig, fs in by_id.items()]
    return sorted(groups, key=lambda g: (g.findings[0].trial, g.findings[0].name, g.signature))


def known_bug(finding: FoundFinding) -> str:
    """The known bug a finding was tagged with, in words (``KW-1 (open; match
    sig:7eeb1eeb9e1f)``), or '' when its tag is not ``known`` (``new``; ``known-fixed``:
    a regression, reduced like a new one)."""
    if finding.tag != "known":
        return ""
    bug = finding.bug or {}
    said = [str(bug.get("status") or "")]
    if bug.get("match"):
        said.append(f"match {bug['match']}")
    if bug.get("quality"):
        said.append(str(bug["quality"]))
    detail = "; ".join(s for s in said if s)
    return f"{bug.get('id') or 'a known bug'}" + (f" ({detail})" if detail else "")
