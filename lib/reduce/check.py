""""Still fails?": a candidate (some statements) replayed on the finding's topology gives
the finding's signature.

A :class:`Checker` owns one bot's servers (a :class:`lib.servers.manager.ServerManager`):
each try gets the servers the finding needs -- the previous try's when the reuse rule
keeps them (the ``test`` schema emptied), fresh ones after a crash or when a candidate
changed anything else (a UDF in ``mysql.func``, a global variable) -- replays the
candidate (:mod:`.replay`) and signs what happened with the hunt's own code:

- crash: a server that died is signed by :func:`lib.hunt.crash.crash_finding` (its
  crash report, gdb's frames when the report has none); a server that has not answered
  yet is settled as a hunt's trial settles it (:func:`lib.hunt.dying.settle`: a dying
  one's core given time, a slow one a grace);
- differential wrong result: each statement whose results differed between the
  servers is signed with :func:`lib.hunt.signature.wrong_result_signature`;
- an oracle's wrong result judged again (``ReduceInput.judged_again``): the
  finding's own signature while the oracle still disagrees over its compared
  statements (:func:`lib.hunt.wrongresult.replay.judge_again`; what the oracle built
  again for them, Radar's raw copies, is kept in the outcome for the reduced case);
- errorlog: each line the error logs gained during the try (their size noted before
  it, read after it) that the hunt's errorlog oracle flags, signed as the oracle signs
  it (:func:`lib.reduce.errorlog.logged_signatures`).

A candidate fails when one of ``trials`` tries gives the same signature id -- or one
the user accepts as the same bug's (``--reduce-accept``: a crash whose top frames vary)
-- (sporadic bugs: ``--trials``); the tries stop at the first that does.

Each try replays the candidate in the checker's ``order``: ``serial`` (one statement at
a time in send order, :mod:`.replay`), ``ended`` (one at a time in the order they
ended in the trace, :func:`lib.reduce.schedule.in_end_order`), with the trace's
own interleaving, ``interleaved`` or ``timed`` (:mod:`.interleave`; a single
topology's), or ``concurrent`` (every connection at once, free-running, in rounds until
one shows the bug: :mod:`.freerun`; a single topology's); each is kept as an
:class:`lib.reduce.attempts.Attempt` (what it saw) in ``attempts``.

Each try's replay is capped by the reduction's :class:`lib.reduce.budget.ReplayBudget`
(when the checker has one): a try past its cap stops and does not reproduce.

Fresh servers (``fresh_only``): the reuse rule compares what the next test would see
(schemas, tables, variables, privilege tables... lib/servers/fingerprint.py), not the
server's memory: a bug that reads memory it never wrote (6bf08944bc00: ``optimize_keyuse``
reads ``join->table[n]`` past its end, NULL on a fresh server's memory, a pointer left by
an earlier try's statements on a reused one) crashes a reused server on a candidate that
no fresh server crashes.  Each try's :class:`Outcome` says whether its servers were
started for it (``fresh``: no earlier try of the checker used them); with ``fresh_only``
every try's servers are discarded after it, so each try runs on fresh servers -- the
reduction's check that its case crashes a fresh server, and its second round when it
does not (lib/modes/reduce/run.py).

A cheap reset: a candidate that loads a UDF (``CREATE FUNCTION ... SONAME``)
changes ``mysql.func``, which the reuse rule answers with fresh servers -- a
restart per try.  When such a try leaves its servers running, the functions
it added are dropped again, so the reuse rule finds the servers as they were
and the next try reuses them.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

import pymysql

from ..hunt.crash import crash_finding
from ..hunt.dying import settle
from ..hunt.signature import Signature, fingerprint, wrong_result_signature
from ..hunt.wrongresult.errors import ServerLostError
from ..hunt.wrongresult.oracle import Rebuilt
from ..hunt.wrongresult.replay import JudgedAgain, judge_again
from ..platform.logsetup import get_logger
from ..servers.health import HealthState
from ..servers.options import parse_options
from ..servers.requirements import Requirements
from .attempts import Attempt, divergence, seen
from .budget import ReplayBudget
from .case import ReduceInput, Statement
from .errorlog import logged_signatures
from .concurrent import ROUNDS
from .freerun import replay_concurrent
from .interleave import replay_scheduled
from .replay import Replayed, replay
from .schedule import in_end_order
from .settings import Settings, read_settings

if TYPE_CHECKING:
    from ..servers.manager import ServerManager
    from ..servers.server import Server


_CREATES_UDF = re.compile(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:AGGREGATE\s+)?FUNCTION\b"
                          r"[^;]*\bSONAME\b", re.I | re.S)


def loads_udf(statements: Sequence[Statement]) -> bool:
    """Does a statement of the candidate load a UDF (``CREATE FUNCTION ... SONAME``)?"""
    return any(_CREATES_UDF.search(s.sql) for s in statements)


def _udfs(server: Server) -> set[str]:
    """The names in the server's ``mysql.func``."""
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT name FROM mysql.func")
            return {str(r[0]) for r in cur.fetchall()}
    finally:
        conn.close()


def _drop_udfs(server: Server, keep: set[str]) -> None:
    """Drop the UDFs the server has beyond keep (what a try added)."""
    added = _udfs(server) - keep
    if not added:
        return
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            for name in sorted(added):
                cur.execute(f"DROP FUNCTION IF EXISTS `{name.replace('`', '``')}`")
    finally:
        conn.close()


def requirements(case: ReduceInput, options: Sequence[Sequence[str]] | None = None) -> Requirements:
    """The finding's servers with their options (or the given per-server options)."""
    lists = [parse_options(list(o)) for o in (options if options is not None
                                             else case.server_options)]
    return Requirements.declared("mysql", lists)


@dataclass
class Outcome:
    """One try: the signatures seen, what the replay saw, the version of s0, what the
    finding's oracle built again to judge its statements (Radar's raw copies)."""

    signatures: list[Signature] = field(default_factory=list)
    replayed: Replayed = field(default_factory=Replayed)
    version: str = ""
    statements: tuple[Statement, ...] = ()          # the candidate tried
    options: tuple[tuple[str, ...], ...] = ()       # with these server options
    rebuilt: Rebuilt = field(default_factory=Rebuilt)
    fresh: bool = False     # its servers were started for this try (no earlier try used them)
    settings: tuple[Settings, ...] = ()   # what each server had before the replay (settings.py)

    def tried(self, statements: Sequence[Statement],
              options: Sequence[Sequence[str]]) -> bool:
        """Is this the try of exactly these statements with these options?"""
        return self.statements == tuple(statements) and \
            self.options == tuple(tuple(o) for o in options)


class Checker:
    """Replays candidates on one manager's servers and compares their signature with the
    finding's (see the module docstring)."""

    def __init__(self, case: ReduceInput, manager: ServerManager, work_dir: str,
                 trials: int = 1, budget: ReplayBudget | None = None) -> None:
        self.case = case
        self.budget = budget
        self.manager = manager
        self.work_dir = work_dir
        self.trials = max(1, trials)
        self.runs = 0                 # tries made (servers used)
        self.options: tuple[tuple[str, ...], ...] = case.server_options
        self.last: Outcome | None = None   # the last try that reproduced
        self.order = "serial"         # how candidates are replayed (module docstring)
        self.candidate = "pass"       # what the tries are for (their Attempt records)
        self.attempts: list[Attempt] = []
        self.accept: frozenset[str] = frozenset()   # other ids that count (--reduce-accept)
        self.fresh_only = False       # every try on servers started for it (module docstring)
        self._used: tuple[Server, ...] = ()   # the servers of the last try

    def fails(self, statements: Sequence[Statement],
              options: Sequence[Sequence[str]] | None = None) -> bool:
        """Does the candidate still give the finding's signature (in one of the tries)?"""
        for _ in range(self.trials):
            outcome = self.once(statements, options)
            if self.reproduces(outcome):
                self.last = outcome
                return True
        return False

    def reproduces(self, outcome: Outcome) -> bool:
        """Did this try give the finding's signature (or one of ``accept``)?"""
        return any(s.id == self.case.signature.id or s.id in self.accept
                   for s in outcome.signatures)

    def once(self, statements: Sequence[Statement],
             options: Sequence[Sequence[str]] | None = None,
             stop: Callable[[], bool] | None = None) -> Outcome:
        """One try of the candidate on servers of this checker's manager (stop: see
        :func:`.replay.replay`; a stopped try signs nothing)."""
        self.runs += 1
        used = tuple(tuple(o) for o in (self.options if options is None else options))
        reqs = requirements(self.case, used)
        servers = self.manager.get_servers(reqs)
        fresh = not any(s is k for s in servers for k in self._used)  # no earlier try's
        self._used = tuple(servers)     # a set torn down is never handed out again
        marks = {s.name: s.errlog.size() for s in servers}
        settings = tuple(_settings(s) for s in servers)
        compare = self.case.topology == "compare"
        udfs = {s.name: _udfs(s) for s in servers} \
            if loads_udf(statements) and not self.fresh_only else {}
        cap = self.budget.cap() if self.budget is not None else None
        deadline = None if cap is None else time.monotonic() + cap
        started = time.monotonic()
        replayed = self._replay(statements, servers, compare, stop, deadline, marks)
        if replayed.stuck:
            get_logger().info(f"reduce: a candidate of {len(statements)} statements stuck at "
                              f"statement {replayed.stuck} (not ended by max_statement_time): "
                              f"counted as not failing, its servers replaced")
            if self.budget is not None:
                self.budget.stopped()
        if replayed.timed_out and self.budget is not None:
            self.budget.stopped()
            get_logger().info(f"reduce: a candidate of {len(statements)} statements stopped "
                              f"at its replay cap ({cap:.0f} s, after {replayed.sent} "
                              f"statements): counted as not failing")
        out = Outcome(replayed=replayed, version=_version(servers[0]),
                      statements=tuple(statements), options=used, fresh=fresh,
                      settings=settings)
        dead = self._crashes(servers, marks, out)
        if self.case.kind == "errorlog" and not replayed.stopped:
            out.signatures += _logged(servers, marks)
        if replayed.stopped:
            out.signatures.clear()
        elif not dead:
            for stmt in replayed.differences:
                out.signatures.append(wrong_result_signature("differential",
                                                             fingerprint(stmt.sql)))
            if self.case.judged_again:  # before the UDFs go: the statements may call them
                judged = _judge_again(servers[0], self.case)
                out.rebuilt = judged.rebuilt
                if judged.differs:
                    out.signatures.append(self.case.signature)
        if udfs and not dead:
            try:
                for server in servers:
                    _drop_udfs(server, udfs[server.name])
            except pymysql.MySQLError:
                pass        # the reuse rule sees the change: fresh servers next time
        if self.budget is not None and self.reproduces(out):
            self.budget.reproduced(replayed.seconds)
        self._attempted(out, dead, time.monotonic() - started)
        self._leave(dead or bool(replayed.stuck))
        return out

    def _leave(self, dead: bool) -> None:
        """The servers after a try: discarded when one died or a statement is stuck (it
        still runs) and, with ``fresh_only``, always; else as the reuse rule says."""
        if dead or self.fresh_only:
            self.manager.teardown(fast=True, discard=True)
        else:
            self.manager.after_test(True)

    def _replay(self, statements: Sequence[Statement], servers: Sequence[Server],
                compare: bool, stop: Callable[[], bool] | None, deadline: float | None,
                marks: dict[str, int]) -> Replayed:
        """The candidate replayed in this checker's order (module docstring)."""
        if self.order == "concurrent" and not compare:
            # an oracle judges the state the last round left: one round; an errorlog
            # finding's rounds end at the first that logged its line
            done = (lambda: self.reproduces(Outcome(_logged(servers, marks)))) \
                if self.case.kind == "errorlog" else None
            return replay_concurrent(statements, servers[0], stop, deadline,
                                     1 if self.case.judged_again else ROUNDS, done)
        if self.order == "ended":
            statements = in_end_order(statements)
        elif self.order != "serial" and not compare:
            return replay_scheduled(statements, servers[0], self.order == "timed", stop,
                                    deadline)
        return replay(statements, servers, compare=compare, stop=stop, deadline=deadline)

    def _attempted(self, out: Outcome, dead: bool, seconds: float) -> None:
        """Keep what this try saw (lib/reduce/attempts.py)."""
        replayed = out.replayed
        whole = replayed.sent == len(out.statements)
        differ, first = divergence(out.statements, replayed.errors) if whole else (-1, 0)
        attempt = Attempt(self.candidate, self.order, len(out.statements), round(seconds, 3),
                          seen(self.reproduces(out), [f"{x.id} ({x.text[:200]})"
                                                      for x in out.signatures], dead,
                               replayed.stuck, replayed.timed_out, replayed.stopped),
                          replayed.sent, replayed.forced, differ, first, replayed.rounds)
        self.attempts.append(attempt)
        if attempt.candidate != "pass":   # the start's tries, one line each
            forced = f", {attempt.forced} out of order" if attempt.forced else ""
            forced += f", {attempt.rounds} round{'s' if attempt.rounds != 1 else ''}" \
                if attempt.rounds else ""
            strayed = f"; {differ} failed otherwise than traced (first: {first})" \
                if differ > 0 else ("; every error as traced" if differ == 0 else "")
            get_logger().info(f"reduce: {attempt.candidate} ({attempt.order} replay): "
                              f"{attempt.saw}; {attempt.sent} of {attempt.statements} "
                              f"statements sent{forced}, {len(replayed.errors)} errors, "
                              f"{attempt.seconds:.1f} s{strayed}")

    def _crashes(self, servers: Sequence[Server], marks: dict[str, int], out: Outcome) -> bool:
        dead = False
        for server in servers:
            # a server dying slowly (its core written on a loaded machine) is a crash, not
            # a hang: a candidate that crashed must not count as not failing for it
            settled = settle(server, marks[server.name])
            health = settled.health
            if settled.crashing or health.state is HealthState.CRASHED or (
                    health.state is HealthState.STOPPED and not server.stop_requested):
                dead = True
                scratch = os.path.join(self.work_dir, "crash")
                shutil.rmtree(scratch, ignore_errors=True)
                os.makedirs(scratch)
                try:
                    text = server.errlog.since(marks[server.name])
                except OSError:
                    text = ""
                out.signatures.append(crash_finding(server, text, health.message,
                                                    scratch).signature)
            elif health.state is HealthState.HUNG:
                dead = True
        return dead


def _settings(server: Server) -> Settings:
    """What the server has of the variables a case pins (lib/reduce/settings.py); none
    when it does not answer (the try then shows why)."""
    try:
        conn = server.connect()
    except pymysql.MySQLError:
        return Settings()
    try:
        return read_settings(conn)
    except pymysql.MySQLError:
        return Settings()
    finally:
        conn.close()


def _logged(servers: Sequence[Server], marks: dict[str, int]) -> list[Signature]:
    """The errorlog signatures of the lines the servers' error logs gained during the try
    (:func:`.errorlog.logged_signatures`)."""
    found: list[Signature] = []
    for server in servers:
        try:
            found += logged_signatures(server.errlog.since(marks[server.name]))
        except OSError:
            continue
    return found


def _judge_again(server: Server, case: ReduceInput) -> JudgedAgain:
    """Does the finding's oracle still disagree over its compared statements, run on a new
    connection after the replay (:func:`lib.hunt.wrongresult.replay.judge_again`)?"""
    try:
        conn = server.connect(db="test", autocommit=True)
    except pymysql.MySQLError:
        return JudgedAgain(False)
    try:
        return judge_again(conn, case.oracle, case.compared, str(
            case.finding.get("details", {}).get("detail") or ""))
    except ServerLostError:
        return JudgedAgain(False)  # the server died under the compared statements: another finding
    finally:
        try:
            conn.close()
        except pymysql.MySQLError:
            pass


def _version(server: Server) -> str:
    return server.tree.version.version if server.tree.version else ""
