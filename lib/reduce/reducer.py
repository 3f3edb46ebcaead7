"""One reduction: the passes of :mod:`.passes` run in turn over a finding's statements with a
:class:`lib.reduce.check.Checker`, then the server options reduced.

Every smaller failing case is written at once to ``smallest.json`` in the
output folder (statements, options and the replay order), so an interrupted reduction resumes
from it (:func:`load_smallest`): Ctrl-C keeps the smallest case found so far.
A log line per pass says how many statements are left and how many candidate
runs it took; on a terminal a tqdm bar counts the candidate runs.

The reducer also keeps the smallest case that reproduced on *fresh* servers (``fresh``:
a try whose servers no earlier try had used, :class:`lib.reduce.check.Outcome`), saved
beside the smallest case: a case that reproduced only on reused servers may need state
an earlier try left in them (lib/reduce/check.py), and :meth:`Reducer.again_fresh`
starts a second round of every pass from it, every try on fresh servers.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..platform.logsetup import get_logger
from ..platform.safewrite import HeldOutput, OutputDir
from .case import ReduceInput, Statement
from .check import Outcome
from .ddmin import Batched, ddmin
from . import concurrent, passes, schedule

SMALLEST_FILE = "smallest.json"


@dataclass
class PassRecord:
    """What one pass did."""

    name: str
    before: int
    after: int
    runs: int
    seconds: float
    fresh: bool = False     # the second round's: every try on fresh servers


@dataclass
class Reduced:
    """The reduction's result: the statements and options left, and what each pass did."""

    statements: list[Statement]
    options: tuple[tuple[str, ...], ...]
    started_with: int
    passes: list[PassRecord] = field(default_factory=list)
    runs: int = 0
    seconds: float = 0.0
    resumed: bool = False


Fresh = tuple[list[Statement], tuple[tuple[str, ...], ...]]   # statements, options


def save_smallest(folder: OutputDir | str, case: ReduceInput, statements: Sequence[Statement],
                  options: Sequence[Sequence[str]], done: Sequence[str],
                  order: str = "serial", fresh: Fresh | None = None,
                  fresh_only: bool = False) -> None:
    """The smallest failing case so far, atomically (the resume point), written into the
    output folder without following links (lib/platform/safewrite.py); fresh: the
    smallest that failed on fresh servers; fresh_only: every try on fresh servers."""
    data = {"signature": case.signature.id, "finding": case.folder,
            "statements": [s.to_json() for s in statements],
            "options": [list(o) for o in options], "passes_done": list(done),
            "order": order, "fresh_only": fresh_only,
            "fresh": None if fresh is None else {
                "statements": [s.to_json() for s in fresh[0]],
                "options": [list(o) for o in fresh[1]]},
            "saved_at": round(time.time(), 3)}
    with HeldOutput(folder) as out:
        out.write_text(SMALLEST_FILE, json.dumps(data, indent=1))


def load_smallest(folder: OutputDir | str, case: ReduceInput) -> dict[str, Any] | None:
    """The saved smallest case of this finding (None when there is none or it belongs
    to another signature)."""
    try:
        with HeldOutput(folder) as out:
            text = out.read_text(SMALLEST_FILE)
        data = json.loads(text) if text is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("signature") != case.signature.id:
        return None
    return data


class Reducer:
    """Runs the passes (module docstring) with a fails(statements, options) test."""

    PASSES = ("truncate", "related", "one-connection", "connections", "verbs", "shapes", "statements",
              "rows", "merge", "clauses", "literals", "statements-again", "options")

    def __init__(self, case: ReduceInput, fails: Callable[..., bool], out_dir: OutputDir | str,
                 runs: Callable[[], int], progress: Callable[[int, int], None] | None = None,
                 skip: Sequence[str] = (),
                 first: Callable[..., int | None] | None = None,
                 reorder: Callable[[str, str], None] | None = None,
                 last: Callable[[], Outcome | None] | None = None) -> None:
        self.case = case
        self._fails = fails
        self._first = first
        self._last = last
        self._reorder = reorder       # switches the checks' replay order (start())
        self.order = "serial"
        self.out_dir = out_dir
        self.runs = runs
        self.progress = progress
        self.skip = set(skip)
        self.statements = list(case.statements)
        self.options: tuple[tuple[str, ...], ...] = case.server_options
        self.done: list[str] = []
        self.resumed = False
        self.skip_candidates: set[str] = set()   # start()'s candidates answered already
        self.only = ""          # --reduce-order: ask only the start's candidates of this order
        self._after_statements: list[Statement] = []
        self.fresh: Fresh | None = None    # the smallest case that failed on fresh servers
        self.fresh_only = False            # the second round: every try on fresh servers

    def check(self, statements: Sequence[Statement],
              options: Sequence[Sequence[str]] | None = None) -> bool:
        """Does the candidate fail (with these options, else the current ones)?  Noted as
        the smallest fresh case when its try ran on fresh servers."""
        used = self.options if options is None else tuple(tuple(o) for o in options)
        result = bool(self._fails(statements, used))
        if result:
            self._noted(statements, used)
        return result

    def _noted(self, statements: Sequence[Statement],
               options: tuple[tuple[str, ...], ...]) -> None:
        """Keep the candidate as the smallest fresh case when the try that reproduced it
        ran on fresh servers."""
        outcome = self._last() if self._last is not None else None
        if outcome is None or not outcome.fresh or not outcome.tried(statements, options):
            return
        if self.fresh is None or len(statements) <= len(self.fresh[0]):
            self.fresh = (list(statements), options)

    def again_fresh(self) -> None:
        """The second round (module docstring): every pass again, from the smallest case
        that failed on fresh servers (the finding's whole trace when none did); the
        caller makes every try run on fresh servers."""
        if self.fresh is not None:
            self.statements, self.options = list(self.fresh[0]), self.fresh[1]
        else:
            self.statements, self.options = list(self.case.statements), self.case.server_options
        self.done, self.fresh_only = [], True
        self._after_statements = []
        self._save()

    def fails(self, statements: Sequence[Statement]) -> bool:
        """The test the passes use: the candidate with the current options; a smaller
        failing candidate becomes the smallest case (saved)."""
        result = self.check(statements)
        if result and len(statements) < len(self.statements):
            self.statements = list(statements)
            self._save()
        if self.progress is not None:
            self.progress(len(self.statements), self.runs())
        return result

    def first(self, candidates: Sequence[Sequence[Statement]]) -> int | None:
        """The batch form of :meth:`fails`: the index of the first candidate (in their
        order) that fails, several checked at once; it becomes the smallest case."""
        if self._first is None:
            return next((n for n, c in enumerate(candidates) if self.fails(c)), None)
        found = self._first(candidates, self.options)
        if found is not None:
            self._noted(candidates[found], self.options)
        if found is not None and len(candidates[found]) < len(self.statements):
            self.statements = list(candidates[found])
            self._save()
        if self.progress is not None:
            self.progress(len(self.statements), self.runs())
        return found

    @property
    def test(self) -> Callable[[Sequence[Statement]], bool]:
        """The test the ddmin passes get: :meth:`fails`, with :meth:`first` as its batch
        form when candidates can be checked at once."""
        return Batched(self.fails, self.first) if self._first is not None else self.fails

    def _save(self) -> None:
        save_smallest(self.out_dir, self.case, self.statements, self.options, self.done,
                      self.order, self.fresh, self.fresh_only)

    def resume(self, data: dict[str, Any]) -> None:
        """Start from a saved smallest case."""
        self.statements = [Statement.from_json(s) for s in data.get("statements") or []]
        self.options = tuple(tuple(o) for o in data.get("options") or self.options)
        self.done = [p for p in data.get("passes_done") or [] if p in self.PASSES]
        fresh = data.get("fresh")
        if isinstance(fresh, dict):
            self.fresh = ([Statement.from_json(s) for s in fresh.get("statements") or []],
                          tuple(tuple(o) for o in fresh.get("options") or ()))
        self.fresh_only = bool(data.get("fresh_only"))
        self.resumed = True
        self._order(str(data.get("order") or "serial"), "resumed")

    def start(self) -> bool:
        """Before the passes, the cheapest proofs that the trace reproduces, in this
        order: the ``related`` candidate (the truncated trace's statements that name
        the failing statements' tables and functions); for a trace of several
        connections with its times, the truncated trace replayed in the trace's own
        order (:mod:`.schedule`): ``ended`` (one at a time, in the order the statements
        ended), ``interleaved`` (at once, happens-before), then ``timed`` (and at the
        traced offsets) -- when the reducer can switch its replay order
        (``reorder``); then the truncated trace *serialized*
        (:func:`.passes.serialize`: one connection, no lock waits); then, for several
        connections, ``concurrent`` (every connection at once and free-running, in
        rounds: :mod:`.concurrent`; with or without traced times).  The first that
        fails is the smallest case, and the passes it stands for are done (a long
        multi-connection trace is never replayed whole serially, which a sporadic bug
        would need ``--trials`` times, and whose lock waits between connections cost
        minutes); an interleaved one keeps its order for the rest of the reduction
        (the passes' candidates are replayed the same way).  Else False, with the
        serial order back -- the caller then replays the whole trace -- and the
        candidates answered are not tried again.  With ``only`` (``--reduce-order``) just
        the candidates of that order are asked (the truncated trace in that order when
        none is), and when none reproduces the order stays (the caller does not replay
        the whole trace serially for another order)."""
        candidates = self._start_candidates()
        found = None
        for index, (name, statements, order) in enumerate(candidates):
            self._order(order, name)
            self.skip_candidates.add(name)
            if self.first([statements]) == 0:
                found = index
                break
        if found is None:
            self._order(self.only or "serial", "whole trace")
            if candidates:
                self.skip.add("related")
            return False
        name, statements, order = candidates[found]
        self.statements = list(statements)
        self.done.extend({"related": ["truncate", "related"], "serialized":
                          ["truncate", "one-connection"]}.get(name, ["truncate"]))
        if name == "serialized":
            self.skip.add("related")
        self._order(order, "pass")
        self._save()
        get_logger().info(f"reduce: the {name} statements reproduce: "
                          f"{len(self.case.statements)} -> {len(statements)} statements "
                          f"({self.runs()} candidate runs)"
                          + (f"; the reduction replays its candidates {order}"
                             if order != "serial" else ""))
        return True

    def _start_candidates(self) -> list[tuple[str, list[Statement], str]]:
        """:meth:`start`'s candidates in turn: (name, statements, replay order)."""
        cut = passes.truncate(self.statements, self.case.failing)
        failing_seqs = {f.seq for f in self.case.failing}      # once: not per statement
        culprit_seqs = {f.seq for f in self.case.culprits}
        failing = [x for x in cut if x.seq in failing_seqs]
        culprits = [x for x in cut if x.seq in culprit_seqs]
        kept = passes.related(cut, failing)
        several = len({x.conn for x in cut}) > 1
        candidates: list[tuple[str, list[Statement], str]] = []
        if kept and len(kept) < len(cut):
            candidates.append(("related", kept, "serial"))
        if several and self._reorder is not None and schedule.timed(cut):
            candidates += [(order, cut, order) for order in ("ended", "interleaved", "timed")]
        if several:
            candidates.append(("serialized", passes.serialize(cut, culprits), "serial"))
        if several and self._reorder is not None:
            candidates.append((concurrent.NAME, cut, concurrent.NAME))
        if self.only:
            candidates = [c for c in candidates if c[2] == self.only]
            if self.only != "serial" and not any(c[0] == self.only for c in candidates) \
                    and self._reorder is not None:
                candidates.append((self.only, cut, self.only))  # the truncated trace
        return candidates

    def _order(self, order: str, candidate: str) -> None:
        """Replay the next candidates in this order, their tries recorded as candidate's."""
        self.order = order
        if self._reorder is not None:
            self._reorder(order, candidate)

    def _pinned(self, run: Callable[[Sequence[Statement], passes.Fails], list[Statement]]
                ) -> list[Statement]:
        """A ddmin pass over the statements with the culprits (the failing statement the
        crash report names) kept in every candidate (:func:`.passes.with_pinned`)."""
        return passes.with_pinned(self.statements, self.pinned(), run, self.test)

    def pinned(self) -> set[int]:
        """The seqs every ddmin candidate keeps: the finding's culprits -- or, once a try
        of the current statements reproduced, the copy of a culprit its replay crashed
        at.  Of several connections' copies of one statement the trace's first is
        pinned, and in a serial replay another copy may be the one that crashes: the
        planted crash's two in-flight ``SELECT kw_planted(COUNT(*))``, the first of
        which had read the table after a later-started INSERT committed; pinned, the
        first copy, which no longer crashes, stayed in the case."""
        seqs = {f.seq for f in self.case.culprits}
        outcome = self._last() if self._last is not None else None
        if outcome is None or not outcome.replayed.lost or \
                outcome.statements != tuple(self.statements):
            return seqs
        lost = next((s for s in self.statements if s.seq == outcome.replayed.lost), None)
        if lost is None or lost.seq in seqs:
            return seqs
        copies = {f.seq for f in self.case.culprits if f.sql.strip() == lost.sql.strip()}
        return seqs - copies | {lost.seq} if copies else seqs

    def _pass(self, name: str) -> list[Statement]:
        s = self.statements
        if name == "truncate":
            return passes.truncate(s, self.case.failing)
        if name == "related":
            failing = {f.seq for f in self.case.failing}
            kept = passes.related(s, [x for x in s if x.seq in failing])
            return kept if len(kept) < len(s) and self.fails(kept) else s
        if name == "one-connection":
            if len({x.conn for x in s}) < 2:
                return s
            culprit_seqs = {f.seq for f in self.case.culprits}
            tries = [] if "serialized" in self.skip_candidates else \
                [passes.serialize(s, [x for x in s if x.seq in culprit_seqs])]
            tries.append(passes.one_connection(s))
            found = self.first(tries)
            return s if found is None else tries[found]
        if name == "connections":
            return self._pinned(passes.by_connections)
        if name == "verbs":
            return self._pinned(passes.by_verbs)
        if name == "merge":
            return passes.by_merging(s, self.fails)
        if name == "shapes":
            return self._pinned(passes.by_shapes)
        if name == "statements-again":  # only when a later pass changed a statement
            return s if s == self._after_statements else self._pinned(passes.by_statements)
        if name == "statements":
            return self._pinned(passes.by_statements)
        if name == "rows":
            return passes.by_rows(s, self.test)
        if name == "clauses":
            return passes.by_edits(s, self.test, passes.clause_cuts)
        if name == "literals":
            return passes.by_edits(s, self.test, passes.literal_cuts)
        if name == "options":
            self._reduce_options()
            return self.statements
        raise ValueError(name)

    def _reduce_options(self) -> None:
        """ddmin over every server's options (index, option) pairs."""
        flat = [(i, o) for i, opts in enumerate(self.options) for o in opts]
        if not flat:
            return
        count = len(self.options)

        def as_lists(kept: Sequence[tuple[int, str]]) -> tuple[tuple[str, ...], ...]:
            """Per-server option lists of the kept (server, option) pairs."""
            return tuple(tuple(o for i, o in kept if i == n) for n in range(count))

        if self.check(self.statements, as_lists([])):
            self.options = as_lists([])
        else:
            self.options = as_lists(ddmin(flat, lambda k: self.check(self.statements,
                                                                     as_lists(k))))
        self._save()

    def run(self) -> Reduced:
        """Every pass not done yet, in order; the result."""
        log = get_logger()
        started = time.monotonic()
        out = Reduced(self.statements, self.options, len(self.case.statements),
                      resumed=self.resumed)
        for name in self.PASSES:
            if name in self.done or name in self.skip:
                continue
            before, runs, t0 = len(self.statements), self.runs(), time.monotonic()
            result = self._pass(name)
            if len(result) <= len(self.statements):
                self.statements = list(result)
            if name == "statements":
                self._after_statements = list(self.statements)
            self.done.append(name)
            self._save()
            record = PassRecord(name, before, len(self.statements), self.runs() - runs,
                                time.monotonic() - t0, self.fresh_only)
            out.passes.append(record)
            on = " (fresh servers)" if self.fresh_only else ""
            log.info(f"reduce: pass {name}{on}: {record.before} -> {record.after} statements "
                     f"({record.runs} candidate runs, {record.seconds:.1f} s)")
        out.statements, out.options = self.statements, self.options
        out.runs, out.seconds = self.runs(), time.monotonic() - started
        return out
