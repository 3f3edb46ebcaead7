"""What a reduction's tries saw, and the record of a finding its trace does not reproduce.

Every try of a :class:`lib.reduce.check.Checker` is kept as an :class:`Attempt`: the
candidate it was for (``related``, ``interleaved``, ``timed``, ``serialized``, ``concurrent``,
``whole trace``, or ``pass`` for the passes' candidates), the replay order, its
size, how long it took and what it saw -- the finding's signature, another crash's,
a hang, a replay stopped at its cap, or nothing.  When no start candidate reproduces
the finding in ``--trials`` tries each, :func:`record` says so in words and figures:
``not-reproducible.json`` (the candidates, their tries and what each saw) and
``report.txt`` in the reduction's output folder, so the finding is marked "not
reproducible from its trace" rather than left without a word.  The same record, with
another state and reason (:data:`NOT_FRESH`, :data:`NOT_CONFIRMED`), says that a
reduction's case did not reproduce on fresh servers (lib/modes/reduce/run.py).
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from .case import ReduceError, Statement

RECORD_FILE = "not-reproducible.json"
STATE = "no-repro"       # the results history's reduction state (lib/history/findings.py)
FROM_TRACE = "not reproducible from its trace"
NOT_FRESH = "not reproducible on a fresh server"
NOT_CONFIRMED = "not reproduced by the printed commands on any code tree"


@dataclass(frozen=True)
class Attempt:
    """One try: for which candidate, in which replay order, what it saw."""

    candidate: str
    order: str
    statements: int
    seconds: float
    saw: str            # reproduced, crash <id>, hang, stuck, timed out, stopped, nothing
    sent: int = 0
    forced: int = 0     # interleaved: statements sent without waiting out their order
    differ: int = -1    # statements whose error differs from the trace's (-1: not run whole)
    first_differ: int = 0   # the first of them (seq)
    rounds: int = 0         # concurrent: the rounds the try replayed (lib/reduce/freerun.py)


class NotReproducible(ReduceError):
    """No start candidate reproduced the finding: the message, and the record to keep
    (:func:`record`)."""

    def __init__(self, message: str, data: dict[str, Any]) -> None:
        super().__init__(message)
        self.record = data


def seen(reproduced: bool, signatures: Sequence[str], dead: bool, stuck: int,
         timed_out: bool, stopped: bool) -> str:
    """What one try saw, in a word or two (see :class:`Attempt`)."""
    if stopped:
        return "stopped"
    if reproduced:
        return "reproduced"
    if signatures:
        return "other " + ", ".join(sorted(set(signatures)))
    if dead:
        return "hang"
    if stuck:
        return f"stuck at {stuck}"
    return "timed out" if timed_out else "nothing"


def divergence(statements: Sequence[Statement], errors: dict[int, int]) -> tuple[int, int]:
    """How far a whole replay strayed from the trial: the statements whose error (errors:
    seq -> code, 0 for none) differs from the one traced, and the first of them (seq;
    0 for none) -- a replay whose statements fail otherwise than they did ran on
    another state."""
    differ = [s.seq for s in statements if errors.get(s.seq, 0) != s.error]
    return len(differ), min(differ, default=0)


def summary(attempts: Sequence[Attempt]) -> list[dict[str, Any]]:
    """Per candidate (in the order first tried): its order, size, tries, what they saw
    (counted), their seconds, the concurrent rounds they replayed, and per whole replay
    how many statements failed otherwise than traced (:func:`divergence`)."""
    out: dict[str, dict[str, Any]] = {}
    for a in attempts:
        row = out.setdefault(a.candidate, {"candidate": a.candidate, "order": a.order,
                                           "statements": a.statements, "tries": 0,
                                           "saw": Counter(), "seconds": 0.0, "differ": [],
                                           "rounds": 0})
        row["tries"] += 1
        row["rounds"] += a.rounds
        if a.differ >= 0:
            row["differ"].append(a.differ)
        row["saw"][a.saw] += 1
        row["seconds"] = round(row["seconds"] + a.seconds, 3)
    return [{**row, "saw": dict(row["saw"])} for row in out.values()]


def lines(attempts: Sequence[Attempt]) -> list[str]:
    """The candidates and their tries, one line each, for the log and the report."""
    return [f"{r['candidate']} ({r['order']} replay, {r['statements']} statements): "
            f"{r['tries']} tr{'y' if r['tries'] == 1 else 'ies'}, "
            + ", ".join(f"{n} {what}" for what, n in r["saw"].items())
            + (f" in {r['rounds']} concurrent rounds" if r.get("rounds") else "")
            + f" ({r['seconds']:.0f} s"
            + (f"; failed otherwise than traced: {min(r['differ'])}-{max(r['differ'])} "
               f"statements per whole replay" if r["differ"] else "") + ")"
            for r in summary(attempts)]


def record(folder: str, signature: str, title: str, statements: int, trials: int,
           attempts: Sequence[Attempt], state: str = FROM_TRACE,
           reason: str = "") -> dict[str, Any]:
    """The record of a finding its trace did not reproduce (module docstring), or of
    another state (:data:`NOT_FRESH`, :data:`NOT_CONFIRMED`) with its reason in words."""
    return {"state": state, "reason": reason, "finding": folder,
            "signature": signature, "title": title, "statements_in": statements,
            "trials": trials, "candidates": summary(attempts),
            "tries": [asdict(a) for a in attempts]}


def report(data: dict[str, Any]) -> str:
    """The report.txt of a finding its trace does not reproduce (or of the record's
    other state: its reason)."""
    tries = f"{data['trials']} tr{'y' if data['trials'] == 1 else 'ies'}"
    why = data.get("reason") or (
        f"none of the start candidates below gave the finding's signature in {tries} each "
        f"({data['statements_in']} traced statements).")
    head = [f"{data['title']} ({data['signature']})",
            f"Finding: {data['finding']}",
            "",
            f"{str(data.get('state') or FROM_TRACE).upper()}: {why}", "",
            "Candidates and tries:"]
    attempts = [Attempt(**t) for t in data["tries"]]
    return "\n".join(head + [f"  {line}" for line in lines(attempts)]) + "\n"


def to_text(data: dict[str, Any]) -> str:
    """The record as the JSON of :data:`RECORD_FILE`."""
    return json.dumps(data, indent=1)
