"""The bugs x trees matrix of a replay: each reproducer's state on each code tree.

A cell is the reproducer's outcome on one tree, as a state:

- ``present``: it reproduced (a crash, a hang, error-log lines) with the same
  signature as on the first tree (in the run's order) where it reproduced;
- ``changed``: it reproduced there with another signature (kewpie's id: the
  bug moved, or another one is hit first);
- ``absent``: no reproduction;
- ``timeout``: it ran past ``--replay-timeout`` (the server still answered);
- ``skipped``: it could not run there (its options, the server's start).

:class:`Matrix` gives the rows (one per reproducer, in name order), the
trees' counts, and which reproducers are present in one tree and absent in
another (``present_only``: the bugs fixed in between, or brought in).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from .execute import NONE, OUTCOMES, SKIPPED, TIMEOUT, ReplayResult

PRESENT, CHANGED, ABSENT = "present", "changed", "absent"
STATES = (PRESENT, CHANGED, ABSENT, TIMEOUT, SKIPPED)


@dataclass
class Cell:
    """One reproducer on one tree."""

    state: str
    result: ReplayResult

    def to_json(self) -> dict[str, Any]:
        """The state and the result as plain data."""
        return {"state": self.state, **self.result.to_json()}


@dataclass
class Row:
    """One reproducer across the trees."""

    name: str
    bug: str
    path: str
    cells: dict[str, Cell] = field(default_factory=dict)   # tree label -> cell

    def state(self, tree: str) -> str:
        """Its state on tree ('' when it did not run there)."""
        cell = self.cells.get(tree)
        return cell.state if cell else ""

    @property
    def present_anywhere(self) -> bool:
        """Did it reproduce on some tree?"""
        return any(c.state in (PRESENT, CHANGED) for c in self.cells.values())

    def attributed(self) -> str:
        """The bug a known-bugs file names for its first reproduction ('' for none)."""
        for cell in self.cells.values():
            known = cell.result.known or {}
            bug = known.get("bug") or {}
            if known.get("tag") in ("known", "known-fixed") and bug.get("id"):
                return str(bug["id"])
        return ""

    def to_json(self, trees: Sequence[str]) -> dict[str, Any]:
        """The row as plain data."""
        return {"name": self.name, "bug": self.bug, "path": self.path,
                "trees": {t: self.cells[t].to_json() for t in trees if t in self.cells}}


def _state(result: ReplayResult, reference: str) -> str:
    if result.present:
        return CHANGED if reference and result.signature_id != reference else PRESENT
    if result.outcome == NONE:
        return ABSENT
    return result.outcome            # timeout, skipped


class Matrix:
    """Every result of a replay, by reproducer and tree (see the module docstring)."""

    def __init__(self, results: Sequence[ReplayResult], trees: Sequence[str]) -> None:
        self.trees = list(trees)
        rows: dict[str, Row] = {}
        for result in results:
            row = rows.setdefault(result.path, Row(result.name, result.bug, result.path))
            row.cells[result.tree] = Cell("", result)
        for row in rows.values():
            reference = ""
            for tree in self.trees:
                cell = row.cells.get(tree)
                if cell is None:
                    continue
                cell.state = _state(cell.result, reference)
                if cell.result.present and not reference:
                    reference = cell.result.signature_id
        self.rows = sorted(rows.values(), key=lambda r: (r.name, r.path))

    def counts(self) -> dict[str, dict[str, int]]:
        """tree -> outcome -> reproducers (every outcome listed)."""
        out = {t: {o: 0 for o in OUTCOMES} for t in self.trees}
        for row in self.rows:
            for tree, cell in row.cells.items():
                out.setdefault(tree, {o: 0 for o in OUTCOMES})
                out[tree][cell.result.outcome] += 1
        return out

    def states(self) -> dict[str, dict[str, int]]:
        """tree -> state -> reproducers."""
        out = {t: {s: 0 for s in STATES} for t in self.trees}
        for row in self.rows:
            for tree, cell in row.cells.items():
                out.setdefault(tree, {s: 0 for s in STATES})
                out[tree][cell.state] = out[tree].get(cell.state, 0) + 1
        return out

    def present_only(self, present_in: str, absent_in: str) -> list[Row]:
        """The reproducers present (or changed) in one tree and absent in the other."""
        return [r for r in self.rows if r.state(present_in) in (PRESENT, CHANGED)
                and r.state(absent_in) == ABSENT]

    def to_json(self) -> dict[str, Any]:
        """The matrix as plain data: trees, counts, rows."""
        return {"trees": self.trees, "counts": self.counts(), "states": self.states(),
                "rows": [r.to_json(self.trees) for r in self.rows]}
