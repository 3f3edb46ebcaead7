"""How well crashes were attributed to their own bug: the matching's quality, measured.

A corpus whose reproducers are named for their bug (``MDEV-12345.sql``) says which
bug each crash *should* be: its own -- when its own bug has lines in the
known-bugs list at all, and when the crash is its own: a crash whose
signature the reproducers of :data:`SHARED_BUGS` or more bugs share (its own
among them) is a bug they all run into before their own statements (in
MariaDB QA's corpus on Debian's 10.11.19: ``INSTALL SONAME 'ha_rocksdb'``
aborting in ``ignore_db_dirs_append``), counted apart as ``shared``.  For each other
reproducer that crashed on a tree and whose bug is listed, :func:`attribute`
sorts the match into

- ``own``: the match names the reproducer's bug (exact or similar);
- ``other``: it names another bug -- a wrong attribution;
- ``unattributed``: no line matched, or lines of different bugs tied
  (ambiguous: no bug named).

A shared crash keeps the bug its match named, if any
(:attr:`Quality.shared_named_other`: named for another bug than its reproducer's).

The unattributed and other ones are listed with both UniqueIDs (the crash's,
and the listed line's or the own bug's first line) for a person to judge.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..hunt.kbstrings import StringsEntry
from .execute import CRASH, ReplayResult

OWN, OTHER, UNATTRIBUTED, SHARED = "own", "other", "unattributed", "shared"
SHARED_BUGS = 3      # reproducers of this many bugs crashing alike: none's own crash


@dataclass(frozen=True)
class Attribution:
    """One crash's attribution."""

    name: str
    bug: str
    tree: str
    verdict: str                 # own, other, unattributed
    named: tuple[str, ...]       # the bug(s) the match named (or the candidates)
    quality: str                 # the match's detail ('' when none matched)
    unique_id: str               # the crash's
    listed: str                  # the matched line's UniqueID, else the own bug's first line

    def to_json(self) -> dict[str, Any]:
        """As plain data."""
        return dict(self.__dict__, named=list(self.named))


@dataclass
class Quality:
    """The attributions of one tree's crashes."""

    tree: str
    crashes: int = 0             # reproducers that crashed there
    listed: int = 0              # ... whose bug has lines in the list
    shared: int = 0              # ... of those, crashes shared with other bugs' reproducers
    rows: list[Attribution] = field(default_factory=list)

    def count(self, verdict: str) -> int:
        """How many attributions have this verdict."""
        return sum(1 for a in self.rows if a.verdict == verdict)

    @property
    def shared_named_other(self) -> list[Attribution]:
        """Shared crashes the match named another bug for (a wrong name there too)."""
        return [a for a in self.rows if a.verdict == SHARED and a.named
                and a.bug not in a.named]

    @property
    def judged(self) -> int:
        """Listed crashes that are the reproducer's own (shared ones aside)."""
        return self.listed - self.shared

    @property
    def own_share(self) -> float:
        """own / judged (0 when none is)."""
        return self.count(OWN) / self.judged if self.judged else 0.0

    def to_json(self) -> dict[str, Any]:
        """As plain data."""
        return {"tree": self.tree, "crashes": self.crashes, "listed": self.listed,
                "shared": self.shared, "judged": self.judged,
                "own": self.count(OWN), "other": self.count(OTHER),
                "unattributed": self.count(UNATTRIBUTED),
                "shared_named_other": len(self.shared_named_other),
                "rows": [a.to_json() for a in self.rows]}


def attribute(results: Sequence[ReplayResult], tree: str,
              entries: Sequence[StringsEntry]) -> Quality:
    """The quality of the matches of tree's crashes against entries (the list's lines)."""
    by_bug: dict[str, list[StringsEntry]] = {}
    for entry in entries:
        for bug in entry.bug_ids:
            by_bug.setdefault(bug, []).append(entry)
    quality = Quality(tree)
    crashes = [r for r in sorted(results, key=lambda r: r.name)
               if r.tree == tree and r.outcome == CRASH]
    bugs_of: dict[str, set[str]] = {}
    for result in crashes:
        bugs_of.setdefault(result.signature_id, set()).add(result.bug or result.name)
    for result in crashes:
        quality.crashes += 1
        if not result.bug or result.bug not in by_bug:
            continue
        quality.listed += 1
        known = result.known or {}
        match = known.get("match") or {}
        named = tuple(match.get("bug_ids") or ())
        attributed = known.get("tag") in ("known", "known-fixed") and \
            match.get("quality") in ("exact", "similar")
        if len(bugs_of[result.signature_id]) >= SHARED_BUGS:
            quality.shared += 1
            quality.rows.append(Attribution(result.name, result.bug, tree, SHARED,
                                            named if attributed else (),
                                            str(match.get("detail", "")), result.unique_text,
                                            by_bug[result.bug][0].text))
            continue
        if attributed and result.bug in named:
            verdict = OWN
        elif attributed and named:
            verdict = OTHER
        else:
            verdict = UNATTRIBUTED
        lines = match.get("lines") or []
        listed = lines[0]["unique_id"] if lines else by_bug[result.bug][0].text
        quality.rows.append(Attribution(result.name, result.bug, tree, verdict, named,
                                        str(match.get("detail", "")), result.unique_text,
                                        listed))
    return quality
