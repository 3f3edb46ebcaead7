"""What a reduction starts from and works on: a finding folder read into a
:class:`ReduceInput` -- its signature, kind, topology, server options and the
trace's statements (:class:`Statement`, in ``seq`` order).

Bad input raises :class:`ReduceError` (a UsageError: one ERROR line, exit 2):
a path that is not a finding folder (no ``finding.json`` of the finding
format), a finding without a trace, a kind the reducer cannot check yet.

A wrong result of an oracle that runs over the load's tables (TLP, NoREC, DQP,
EET, CODDTest, Pinolo, the TLP variants) or over copies of them it builds again
(Radar, DQE), and a performance finding of CERT
(:data:`~lib.hunt.wrongresult.replay.REPLAYABLE`, each of its oracle's kind) is *judged
again* (:attr:`ReduceInput.judged_again`): its compared statements
(``details.queries``) follow the trace's as the statements the failure was seen
on, and a candidate fails while the oracle's comparison of them still disagrees
(:func:`lib.hunt.wrongresult.replay.judge_again`).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from ..errors import UsageError
from ..hunt.finding import FINDING_FILE, FORMAT, TRACE_FILE
from ..hunt.signature import Signature, title
from ..hunt.wrongresult.replay import REPLAYABLE, finding_kind, not_replayable
from ..randgen.trace import read_trace
from .errorlog import finding_signature, logging_statements

SUPPORTED = frozenset({("crash", "crash"), ("wrong-result", "differential"),
                       ("errorlog", "errorlog")})


class ReduceError(UsageError):
    """A reduction cannot start as asked (the message says what to change)."""


class NotReducible(ReduceError):
    """A finding that --mode=reduce cannot reduce (its kind, oracle or topology; no
    trace): the message, and :attr:`why` in a few words (a run's triage table shows it)."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


@dataclass(frozen=True)
class Statement:
    """One statement of the trace: its send order, connection and SQL, and the error it
    got when it was traced (0: none); when it was sent (``t``, wall clock) and how long
    it took (``ms``) as traced -- 0 when unknown, and no part of a statement's equality
    (lib/reduce/schedule.py replays the trace's interleaving from them)."""

    seq: int
    conn: int
    sql: str
    error: int = 0
    t: float = field(default=0.0, compare=False)
    ms: float = field(default=0.0, compare=False)

    def to_json(self) -> dict[str, Any]:
        """For the resume file."""
        out: dict[str, Any] = {"seq": self.seq, "conn": self.conn, "sql": self.sql,
                               "error": self.error}
        if self.t:
            out.update(t=self.t, ms=self.ms)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Statement":
        """From the resume file (or a trace record)."""
        return cls(int(data.get("seq") or 0), int(data.get("conn") or 0),
                   str(data.get("sql") or ""), int(data.get("error") or 0),
                   _number(data.get("t")), _number(data.get("ms")))


def _number(value: Any) -> float:
    """A trace record's time field as a float (0 when absent or not a number)."""
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0


@dataclass(frozen=True)
class ReduceInput:
    """A finding to reduce: where it is, what it is and the statements it started from."""

    folder: str
    kind: str
    oracle: str
    signature: Signature
    title: str
    topology: str                      # single, compare (replication, galera: not yet)
    server_options: tuple[tuple[str, ...], ...]   # per server: trial + topology options
    statements: tuple[Statement, ...]
    finding: dict[str, Any] = field(default_factory=dict)
    traced_seconds: float = 0.0        # the trial's wall time as traced (0: unknown)
    # an errorlog finding's statements that logged its line, and whether by their error
    # (lib/reduce/errorlog.py: logging_statements)
    logged: tuple[tuple[int, ...], bool] = ((), False)

    @property
    def failing(self) -> tuple[Statement, ...]:
        """The statements the failure was seen on: a crash's in-flight statements (the
        connection lost), a compared load's differing query."""
        if self.kind == "crash":
            seqs = {int(s.get("seq") or 0) for s in self.finding.get("details", {})
                    .get("in_flight", [])}
            return tuple(s for s in self.statements if s.seq in seqs)
        if self.kind == "errorlog":
            logged = set(self.logged[0])
            return tuple(s for s in self.statements if s.seq in logged)
        queries = self.finding.get("details", {}).get("queries", [])
        return tuple(s for s in self.statements if s.sql in queries)

    @property
    def judged_again(self) -> bool:
        """True for an oracle's wrong result whose statements are judged again by the
        oracle after a replay (see the module docstring)."""
        return judged(self.kind, self.oracle)

    @property
    def compared(self) -> tuple[str, ...]:
        """The statements the finding's oracle compared (its ``details.queries``)."""
        return tuple(str(q) for q in self.finding.get("details", {}).get("queries", []))

    @property
    def culprits(self) -> tuple[Statement, ...]:
        """The failing statements that caused the failure: of a crash's in-flight
        statements (every connection's), the one the crash report names as its query
        (all of them when the report names none of them -- two threads that crash at once
        can leave it without one); of several connections' copies of one statement, the
        first (the report does not say which crashed: ddmin keeps the others if they are
        needed); a wrong result's differing queries (none of an oracle's wrong result
        judged again).  The reduction keeps these in every candidate; the other in-flight
        statements may go."""
        if self.judged_again:
            return ()   # the compared statements run after every candidate anyway
        failing = self.failing
        query = str(self.finding.get("details", {}).get("query") or "").strip()
        if self.kind == "errorlog" and not self.logged[1]:
            return ()   # the line's thread and second, not known to be the statement
        if self.kind != "crash":
            return failing
        named = tuple(s for s in failing if query and s.sql.strip() == query)
        if not named:
            named = tuple(s for s in failing if query and s.sql.strip().startswith(query))
        first: dict[str, Statement] = {}
        for statement in named or failing:
            first.setdefault(statement.sql.strip(), statement)
        return tuple(first.values())

    def with_statements(self, statements: Sequence[Statement]) -> "ReduceInput":
        """The same finding with other statements."""
        return replace(self, statements=tuple(statements))


def judged(kind: str, oracle: str) -> bool:
    """Is a finding of this kind and oracle judged again by its oracle (module docstring)?"""
    return oracle in REPLAYABLE and kind == finding_kind(oracle)


def refusal(kind: str, oracle: str, topology: str) -> str:
    """Why a finding of this kind, oracle and topology kind cannot be reduced ('' when it
    can): the one rule of what --mode=reduce takes (docs/hunting.md)."""
    if (kind, oracle) not in SUPPORTED and not judged(kind, oracle):
        why = not_replayable(oracle) if kind in ("wrong-result", "performance") else ""
        return (f"a {kind} finding of oracle {oracle} cannot be reduced yet"
                f"{f' ({why})' if why else ''} (crashes, errorlog findings, differential "
                f"wrong results and the findings of {', '.join(sorted(REPLAYABLE))} can)")
    if topology not in ("single", "compare"):
        return (f"a finding on a {topology} topology cannot be reduced yet (single and "
                f"compare can)")
    return ""


def read_input(folder: str) -> ReduceInput:
    """A finding folder (docs/hunting.md's format) read; ReduceError when it is not one."""
    path = os.path.join(folder, FINDING_FILE)
    if not os.path.isdir(folder):
        raise ReduceError(f"--mode=reduce {folder}: no such folder (give a finding folder "
                          f"of --mode=hunt: workdir/hunt/<run>/findings/<finding>, or its "
                          f"run folder: workdir/hunt/<run>)")
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ReduceError(f"--mode=reduce {folder}: not a finding folder ({FINDING_FILE} "
                          f"cannot be read: {getattr(exc, 'strerror', None) or exc}) nor a "
                          f"hunt's run folder (summary.json beside findings/)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReduceError(f"--mode=reduce {folder}: not a finding folder ({FINDING_FILE} is "
                          f"not of format {FORMAT})")
    kind, oracle = str(data.get("kind")), str(data.get("oracle"))
    why = refusal(kind, oracle, str((data.get("topology") or {}).get("kind") or "single"))
    if why:
        raise NotReducible(f"--mode=reduce {folder}: {why}", why)
    trace = os.path.join(folder, TRACE_FILE)
    if not os.path.isfile(trace):
        raise NotReducible(f"--mode=reduce {folder}: the finding has no {TRACE_FILE}",
                           f"no {TRACE_FILE}")
    try:
        records = read_trace(trace)
    except (OSError, ValueError) as exc:
        raise ReduceError(f"--mode=reduce {folder}: {TRACE_FILE} cannot be read: {exc}") from None
    server = str(data.get("server") or "s0")
    statements = tuple(Statement.from_json(r) for r in records
                       if r.get("sql") and str(r.get("server") or server) == "s0")
    if not statements:
        raise NotReducible(f"--mode=reduce {folder}: {TRACE_FILE} holds no statements",
                           f"{TRACE_FILE} holds no statements")
    if judged(kind, oracle):  # the compared statements follow
        statements += _compared(folder, data, statements)
    traced = traced_seconds(records)
    sig = data.get("signature") or {}
    topology = data.get("topology") or {}
    trial_options = tuple(a.split("=", 1)[1] for a in data.get("reproduce") or ()
                          if str(a).startswith("--mysqld="))
    trial_options += tuple((data.get("trial") or {}).get("options") or ())
    options = tuple(tuple(s.get("options") or ()) + trial_options
                    for s in topology.get("servers") or [{}])
    kind_of_set = str(topology.get("kind") or "single")
    signature = Signature(str(sig.get("kind") or kind), tuple(sig.get("parts") or ()))
    lines = [str(line) for line in (data.get("details") or {}).get("lines") or ()]
    name = str(data.get("title") or "")
    if kind == "errorlog":  # as its line signs today (lib/reduce/errorlog.py)
        signed, signature = signature, finding_signature(signature, lines)
        name = name if signature.id == signed.id else title(signature)
    return ReduceInput(os.path.abspath(folder), kind, oracle, signature, name,
                       kind_of_set, options, statements, data,
                       traced, logging_statements(records, lines) if kind == "errorlog"
                       else ((), False))


def _compared(folder: str, data: dict[str, Any], statements: Sequence[Statement]
              ) -> tuple[Statement, ...]:
    """An oracle's compared statements (``details.queries``) as statements after the
    trace's, on its last connection, each sent after every traced one ended."""
    queries = [str(q) for q in (data.get("details") or {}).get("queries") or []]
    if not queries:
        raise ReduceError(f"--mode=reduce {folder}: the finding holds no compared "
                          f"statements (details.queries)")
    last = max(s.seq for s in statements)
    after = max(s.t + s.ms / 1000.0 for s in statements) + 0.001  # after every one
    return tuple(Statement(last + 1 + n, statements[-1].conn, q, 0, after + n / 1000)
                 for n, q in enumerate(queries))


def traced_seconds(records: Sequence[dict[str, Any]]) -> float:
    """The wall time a trace's statements took when traced: from the first statement's
    start to the last one's end (``t`` and ``ms`` of its records); 0 when unknown."""
    spans = []
    for r in records:
        try:
            start = float(r["t"])
        except (KeyError, TypeError, ValueError):
            continue
        try:
            took = float(r.get("ms") or 0) / 1000.0
        except (TypeError, ValueError):
            took = 0.0
        spans.append((start, start + took))
    if not spans:
        return 0.0
    return max(0.0, max(end for _, end in spans) - min(start for start, _ in spans))
