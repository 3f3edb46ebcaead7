"""Findings and their folders on disk (the format is docs/hunting.md's, for issue
"reduce" and for people).

An oracle returns :class:`Finding` objects: kind, the oracle, a signature, a
one-line summary, the server, JSON-able details, and the evidence as files
(text to write, or paths to copy).  :func:`write_finding` gives each one a
folder ``<findings>/t<trial>-<n>-<kind>-<signature id>/`` holding
``finding.json`` (written last, atomically: a folder with a finding.json is
complete), the trial's per-connection SQL trace (``trace.jsonl``, sorted by
``seq``), error-log excerpts, the server's option file, the grammar files and
``evidence.txt``.  :func:`add_backtrace` records gdb's backtrace afterwards (it
takes seconds), rewriting finding.json.
"""
from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import IO, Any

from ..errors import UsageError
from ..platform.safewrite import OutputDir
from ..randgen.trace import read_trace
from .knownbugs import Tagged
from .signature import Signature, title

FORMAT = "kewpie-hunt-finding/1"
FINDING_FILE = "finding.json"
TRACE_FILE = "trace.jsonl"


@dataclass
class Finding:
    """What an oracle found, with its evidence (not yet on disk)."""

    kind: str                  # crash, hang, errorlog, divergence, wrong-result
    oracle: str                # crash, hang, errorlog, divergence, norec, tlp, differential
    signature: Signature
    summary: str
    server: str = "s0"
    details: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)   # file name -> content
    copies: dict[str, str] = field(default_factory=dict)  # file name -> source path
    core: str = ""             # a core file to run gdb on (not copied)
    found_at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class Written:
    """A finding on disk: its folder, tag and what the summary needs."""

    path: str
    kind: str
    oracle: str
    signature_id: str
    signature_text: str
    title: str
    summary: str
    tag: str
    bug_id: str
    bug_note: str
    trial: int
    seed: int
    server: str
    written_at: float
    unique_id: str = ""          # a crash's UniqueID (MariaDB QA's), '' for none
    bug_quality: str = ""        # how a known_bugs.strings line matched ('' otherwise)


def _json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def write_sorted_trace(source: str, target: str | IO[str]) -> int:
    """The trace's records sorted by seq into target (JSON lines: a path, or a file open
    for writing); how many."""
    records = read_trace(source)
    with (open(target, "w", encoding="utf-8") if isinstance(target, str)
          else contextlib.nullcontext(target)) as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    return len(records)


def write_finding(finding: Finding, root: str, index: int, tagged: Tagged,
                  context: dict[str, Any], trace_path: str = "") -> Written:
    """Write finding's folder under root (index numbers it within its trial); context is
    the trial's part of finding.json (trial, topology, load, servers, reproduce)."""
    sig = finding.signature
    trial = int(context.get("trial", {}).get("number", 0))
    uid = sig.unique_id.text if sig.unique_id is not None else ""
    name = f"t{trial:04d}-{index}-{finding.kind}-{sig.id}"
    with OutputDir.in_trusted(root, "the hunt's findings") as findings, \
            (findings.fresh(name) or findings.folder(name)) as folder:
        files = _write_files(finding, folder, trace_path)
        path = folder.path
        written_at = time.time()
        bug = tagged.bug
        data = {"format": FORMAT, "kind": finding.kind, "oracle": finding.oracle,
                "signature": sig.to_json(), "unique_id": uid or None, "title": title(sig),
                "summary": finding.summary, "tag": tagged.tag,
                "bug": bug.to_json() if bug else None,
                "known_match": tagged.match.to_json() if tagged.match else None,
                "server": finding.server, **context, "details": finding.details,
                "files": files, "found_at": round(finding.found_at, 6),
                "written_at": round(written_at, 6)}
        folder.write_text(FINDING_FILE, _json_text(data))  # last, whole: the folder is complete
    return Written(path, finding.kind, finding.oracle, sig.id, sig.text, title(sig),
                   finding.summary, tagged.tag, bug.bug_id if bug else "",
                   bug.note if bug else "", trial, int(context.get("trial", {}).get("seed", 0)),
                   finding.server, written_at, uid, bug.quality if bug else "")


def _write_files(finding: Finding, folder: OutputDir, trace_path: str) -> dict[str, Any]:
    """The finding's trace, texts and copies in its folder (never through a link); the
    ``files`` of finding.json."""
    files: dict[str, Any] = {}
    if trace_path and os.path.exists(trace_path):
        files["trace"] = TRACE_FILE
        with folder.open_file(TRACE_FILE) as fh:
            files["trace_statements"] = write_sorted_trace(trace_path, fh)
    for name, text in finding.texts.items():
        folder.write_bytes(name, text.encode("utf-8", errors="replace"))
        files[name] = name
    for name, source in finding.copies.items():
        try:
            folder.copy_file(source, name)
            files[name] = name
            if name.startswith("backtrace-"):
                files["backtrace"] = name
        except (OSError, UsageError) as exc:
            files[name] = f"(not copied: {getattr(exc, 'strerror', None) or exc})"
    return files


def add_backtrace(folder: str, name: str, top: str) -> None:
    """Record gdb's backtrace (already written as ``name`` in the folder) and the crashing
    thread's top frames in a written finding's finding.json."""
    with OutputDir.in_trusted(folder, "the hunt's findings") as out:
        data = json.loads(out.read_text(FINDING_FILE) or "{}")
        data.setdefault("files", {})["backtrace"] = name
        data.setdefault("details", {})["gdb_top_frames"] = top.splitlines()
        data["backtrace_at"] = round(time.time(), 6)
        out.write_text(FINDING_FILE, _json_text(data))
