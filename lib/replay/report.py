"""What a replay writes: the terminal's table, ``replay.json``, JUnit, the known-bugs file
of the reproducers that crash, and each result's lines for the results history.

- :func:`table`: the reproducers that reproduced on some tree, one line each
  (its state and signature id per tree, the bug a known-bugs file names), then
  the outcomes per tree and what is present in one tree and absent in another;
- :func:`write_json`: ``replay.json`` -- the corpus, the settings, the matrix
  (every reproducer on every tree, with kewpie's signature, the UniqueID and
  the known-bugs match), the skipped files;
- :func:`junit`: one testcase per reproducer and tree (class ``replay.<tree>``):
  a failure of type ``crash``/``hang``/``errorlog`` when it reproduced, its
  message kewpie's signature and the UniqueID; skipped when it could not run;
- :func:`known_bugs_file`: kewpie's known-bugs format, one ``sig:`` entry and
  one ``uid:`` entry per crash signature, ready for ``--known-bugs`` of a hunt;
- :func:`history_text`: the failure text the results history keeps (outcome,
  UniqueID, signature, match), searchable there.
"""
from __future__ import annotations

import json
import os
import shlex
import socket
import time
from typing import Any

from junitparser import Failure, Skipped
from junitparser.xunit2 import JUnitXml, TestCase, TestSuite

from ..platform.safewrite import OutputDir, text_bytes, write_file
from ..platform.trustedpath import Trust
from .corpus import Corpus
from .execute import CRASH, PRESENT, SKIPPED, ReplayResult
from .matrix import CHANGED, PRESENT as PRESENT_STATE, Matrix, Row

FORMAT = "kewpie-replay/1"


def match_text(result: ReplayResult) -> str:
    """What the known-bugs files said: ``MDEV-1 (exact UniqueID)``, ``resembles ...``."""
    known = result.known or {}
    bug = known.get("bug") or {}
    match = known.get("match") or {}
    if known.get("tag") in ("known", "known-fixed") and bug:
        how = bug.get("quality") or bug.get("match", "")
        return f"{bug.get('id')} ({how})" if how else str(bug.get("id"))
    if match:
        return f"resembles {', '.join(match.get('bug_ids') or [])} ({match.get('detail')})"
    return ""


def history_text(result: ReplayResult) -> str:
    """The failure text the history keeps for a reproducer that reproduced."""
    lines = [f"{result.outcome}: {result.detail}"]
    if result.unique_text:
        lines.append(f"UniqueID: {result.unique_text}")
    if result.signature:
        lines.append(f"signature {result.signature['id']}: {result.signature['text']}")
    known = match_text(result)
    if known:
        lines.append(f"known: {known}")
    return "\n".join(lines)


def _cell(row: Row, tree: str) -> str:
    cell = row.cells.get(tree)
    if cell is None:
        return "-"
    if cell.state in (PRESENT_STATE, CHANGED):
        mark = "*" if cell.state == CHANGED else ""
        return f"{cell.result.outcome} {cell.result.signature_id}{mark}"
    return cell.state


def table(matrix: Matrix, corpus: Corpus) -> list[str]:
    """The terminal's lines (see the module docstring)."""
    trees = matrix.trees
    width = max([24] + [len(r.name) for r in matrix.rows if r.present_anywhere])
    head = f"{'REPRODUCER':<{width}}  " + "".join(f"{t:<23} " for t in trees) + "KNOWN AS"
    lines = [head, "-" * len(head)]
    shown = [r for r in matrix.rows if r.present_anywhere]
    for row in shown:
        first = next((c.result for c in row.cells.values() if c.result.present), None)
        known = match_text(first) if first else ""
        lines.append(f"{row.name:<{width}}  " + "".join(f"{_cell(row, t):<23} " for t in trees)
                     + (known or "-"))
    if not shown:
        lines.append("(no reproducer reproduced anything)")
    lines.append("")
    lines.append("* changed: another signature than on the first tree where it reproduced")
    counts = matrix.counts()
    for tree in trees:
        per = counts.get(tree, {})
        lines.append(f"{tree}: " + ", ".join(f"{o} {n}" for o, n in per.items()))
    for a in trees:
        for b in trees:
            if a != b:
                only = matrix.present_only(a, b)
                if only:
                    lines.append(f"present in {a}, absent in {b}: {len(only)}: "
                                 + ", ".join(r.name for r in only))
    if corpus.skipped:
        lines.append(f"skipped {len(corpus.skipped)} file(s) of the corpus: " + "; ".join(
            f"{os.path.basename(s.path)}: {s.reason}" for s in corpus.skipped[:5]))
    if corpus.ignored:
        lines.append(f"ignored {len(corpus.ignored)} file(s) that are neither .sql nor .test")
    return lines


def write_json(out: OutputDir, name: str, matrix: Matrix, corpus: Corpus,
               settings: dict[str, Any]) -> str:
    """Write replay.json as name in the output folder (never through a link); its path."""
    data = {"format": FORMAT, "written": time.time(), "settings": settings,
            "reproducers": len(corpus.reproducers),
            "skipped": [{"path": s.path, "reason": s.reason} for s in corpus.skipped],
            "ignored": corpus.ignored, **matrix.to_json()}
    return out.write_text(name, json.dumps(data, indent=1, default=str) + "\n")


def junit(matrix: Matrix, path: str, trust: Trust | None = None) -> str:
    """Write the replay's JUnit report (see the module docstring); its path."""
    xml = JUnitXml("kewpie-replay")
    for tree in matrix.trees:
        suite = TestSuite(f"replay.{tree}")
        suite.timestamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        suite.hostname = socket.gethostname()
        for row in matrix.rows:
            cell = row.cells.get(tree)
            if cell is None:
                continue
            r = cell.result
            case = TestCase(row.name, classname=f"replay.{tree}", time=round(r.seconds, 3))
            if r.outcome in PRESENT:
                failure = Failure(f"{r.outcome}: {r.detail}"[:500], type_=r.outcome)
                failure.text = history_text(r) + f"\nstate: {cell.state}\nevidence: {r.evidence}\n"
                case.result = [failure]
            elif r.outcome == SKIPPED:
                case.result = [Skipped(r.detail[:500] or "skipped")]
            case.system_out = f"{r.path} on {r.tree_path}: {r.outcome}"
            suite.add_testcase(case)
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
    return write_file(path, text_bytes(lambda out: xml.write(out, pretty=True)), "--junit-xml",
                      trust)


def known_bugs_file(out: OutputDir, name: str, matrix: Matrix, command: str) -> str:
    """Write the known-bugs file of the crashes as name in the output folder (see the
    module docstring); its path.
    Each crash signature is named for the bug a known-bugs file attributed it to, else
    for its reproducer's bug when every reproducer giving it has the same one, else
    ``unattributed`` (one signature of several bugs' reproducers: a wrong name would
    hide a bug in a hunt)."""
    by_sig: dict[str, list[tuple[Row, ReplayResult]]] = {}
    for row in matrix.rows:
        for tree in matrix.trees:
            cell = row.cells.get(tree)
            if cell is not None and cell.result.outcome == CRASH and cell.result.signature:
                by_sig.setdefault(cell.result.signature_id, []).append((row, cell.result))
    lines = [f"# known bugs of a kewpie replay ({time.strftime('%Y-%m-%d %H:%M')}): "
             f"{len(by_sig)} crash signature(s)", f"# {command}",
             "# BUG-ID  STATUS  MATCH  NOTE (kewpie's known-bugs format, docs/hunting.md)", ""]
    for sig_id, seen in sorted(by_sig.items(), key=lambda kv: kv[1][0][0].name):
        rows = list(dict.fromkeys(row.name for row, _ in seen))
        trees = list(dict.fromkeys(r.tree for _, r in seen))
        attributed = {row.attributed() for row, _ in seen} - {""}
        bugs = {row.bug for row, _ in seen}
        bug = (attributed.pop() if len(attributed) == 1 else
               next(iter(bugs)) if len(bugs) == 1 and "" not in bugs and not attributed
               else "unattributed")
        first = seen[0][1]
        lines.append(f"# {', '.join(rows[:8])}{' ...' if len(rows) > 8 else ''} on "
                     f"{', '.join(trees)}: {first.signature['text'] if first.signature else ''}")
        known = match_text(first)
        if known:
            lines.append(f"#   known_bugs: {known}")
        note = f"UniqueID {first.unique_text}" if first.unique_text else ""
        lines.append(f"{bug}  open  sig:{sig_id}  {shlex.quote(note) if note else ''}".rstrip())
        if first.unique_text:
            lines.append(f"{bug}  open  {shlex.quote('uid:' + first.unique_text)}")
        lines.append("")
    return out.write_text(name, "\n".join(lines))
