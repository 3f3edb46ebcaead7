"""One trial: a randgen load (or a replayed SQL corpus) with its own seed on a set of
servers, then the oracles.

:func:`run_trial` takes the trial's servers (started by the caller, with the
trial's options), runs the load on s0 with the built-in randgen engine --
every statement traced per connection (:mod:`lib.randgen.trace`), the
Deadlock reporter watching when the hang oracle is on, the other servers
compared statement by statement in a ``compare`` topology -- and then asks
the oracles, in this order:

1. crash: every server's health; a server that died gives a crash finding
   (:mod:`lib.hunt.crash`), one that runs but answers no SQL a hang;
2. hang: the Deadlock reporter's verdict (:mod:`lib.hunt.hang`);
3. wrong results: NoREC, TLP, differential on the quiet tables
   (:mod:`lib.hunt.wrong`), then the servers' health again;
4. divergence: replicas or nodes against s0 (:mod:`lib.hunt.divergence`);
5. errorlog: what each error log gained (:mod:`lib.hunt.logcheck`).

Each finding is tagged with the known bugs and written to its folder
(:mod:`lib.hunt.finding`) with the trial's trace, the error-log excerpts,
the servers' option files, the grammar files and the randgen log; a crash
with a core then gets gdb's backtrace.  The result says whether the servers
may serve the next trial.
"""
from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pymysql

from ..checks.backtrace import backtrace
from ..errors import KewpieError
from ..platform.logsetup import get_logger
from ..randgen.api import alive_check, make_options, server_connection
from ..randgen.executor import RandgenRun
from ..randgen.metadata import load_metadata
from ..randgen.result import (STATUS_ENVIRONMENT_ERROR, STATUS_GRAMMAR_ERROR, STATUS_OK,
                              RandgenResult)
from ..randgen.connection import LOST_CONNECTION_CODES
from ..randgen.trace import StatementTrace, read_trace
from ..servers.health import HealthState
from ..servers.options import Option
from .budget import BUDGET_SPENT, Checks, DeadlineConnection
from .crash import crash_finding, crash_report_start
from .divergence import divergence_findings
from .dying import DYING_WAIT, settle
from .finding import Finding, Written, add_backtrace, write_finding
from .hang import deadlock_finding, unresponsive_finding
from .knownbugs import KnownBugs
from .logcheck import error_log_findings, suppressions
from .pquery import replay_run
from .surface.load import surface_run
from .randopts import pick_options
from .topology import Topology
from .wrong import NAMES as WRONG_RESULT_ORACLES
from .wrong import load_difference_findings, load_oracles, run_oracles

if TYPE_CHECKING:
    from ..servers.server import Server

MAX_EXCERPT = 1 << 20        # bytes of a server's error log kept in a finding
UNLIMITED_QUERIES = 10 ** 9
SCHEMA = "test"
REPLAY_QUERY_TIMEOUT = 30.0  # a replayed statement running this long gets KILL QUERY
REPLAY_NO_ERRORLOG = ("the errorlog oracle does not judge --sql-file trials: a replayed corpus "
                      "makes a healthy server log [ERROR] lines (missing stopword tables, out "
                      "of sort memory, failed BINLOG events, plugins without their options...)")


@dataclass(frozen=True)
class Load:
    """A grammar (absolute path), its gendata (a .zz, or '' for the simple data set) and
    its redefine files; or a pquery-style load (lib/hunt/pquery): ``grammar`` is then the
    ``--sql-file`` source as given and ``corpus`` the workdir's file of its statements."""

    grammar: str
    gendata: str = ""
    redefine: tuple[str, ...] = ()
    corpus: str = ""
    generated: bool = False           # --sql-file=surface: lib/hunt/surface's statements

    @property
    def sql(self) -> bool:
        """An --sql-file load (a replayed corpus or the surface generator)."""
        return bool(self.corpus) or self.generated

    def files(self) -> list[str]:
        """Every file of the load, grammar first (an --sql-file load: none, the trace holds
        what was sent)."""
        if self.sql:
            return []
        return [self.grammar, *([self.gendata] if self.gendata else []), *self.redefine]

    def option(self) -> str:
        """The command-line option that gives this load."""
        return f"--sql-file={self.grammar}" if self.sql else f"--grammar={self.grammar}"


@dataclass(frozen=True)
class TrialSpec:
    """What one trial runs: its number, seed, load, random options and duration."""

    number: int
    seed: int
    load: Load
    options: tuple[Option, ...]
    duration: float


@dataclass(frozen=True)
class HuntSettings:
    """Everything that is the same for every trial of a hunt."""

    loads: tuple[Load, ...]
    topology: Topology
    findings_dir: str
    randgen_home: str
    threads: int = 4
    queries: int = 0                  # sentences per thread per trial (0: no limit)
    trial_duration: float = 60.0
    oracles: tuple[str, ...] = ("crash", "hang", "errorlog", "divergence")
    hang_timeout: float = 60.0
    replica_timeout: float = 120.0
    wrong_result_budget: int = 500    # checks per wrong-result oracle per trial
    random_options: tuple[Option, ...] = ()
    random_options_max: int = 3
    known_bugs: KnownBugs = field(default_factory=KnownBugs)
    suppressions: tuple[str, ...] = ()
    base_seed: int = 1
    command: tuple[str, ...] = ()     # the command line's part shared by every trial

    def trial(self, number: int, duration: float | None = None) -> TrialSpec:
        """Trial number's spec: seed base+number-1, the loads in turn, its random options."""
        seed = self.base_seed + number - 1
        load = self.loads[(number - 1) % len(self.loads)]
        options = pick_options(self.random_options, seed, self.random_options_max)
        return TrialSpec(number, seed, load, options,
                         self.trial_duration if duration is None else duration)

    def reproduce(self, spec: TrialSpec) -> list[str]:
        """The command line that runs this trial again, alone."""
        argv = ["./kewpie.py", "--mode=hunt", *self.command, spec.load.option()]
        if spec.load.gendata:
            argv.append(f"--gendata={spec.load.gendata}")
        argv += [f"--redefine={r}" for r in spec.load.redefine]
        argv += [f"--randgen-seed={spec.seed}", "--trials=1",
                 f"--trial-duration={spec.duration:g}"]
        argv += [f"--mysqld={o.as_arg()}" for o in spec.options]
        return argv


@dataclass
class TrialResult:
    """What a trial did and found (plain data: it crosses from a bot to the hunt)."""

    number: int
    seed: int
    grammar: str
    bot: str
    options: list[str] = field(default_factory=list)
    status: str = STATUS_OK
    reason: str = ""
    statements: int = 0
    load_seconds: float = 0.0
    seconds: float = 0.0
    findings: list[Written] = field(default_factory=list)
    reusable: bool = True
    error: str = ""                   # a grammar or environment problem: the hunt stops
    oracle_stats: dict[str, Any] = field(default_factory=dict)
    errors: str = ""                  # the load's statement errors by code ("1213 x3, ...")
    skipped: list[str] = field(default_factory=list)   # checks --duration left no time for


def _excerpt(server: Server, mark: int) -> str:
    try:
        text = server.errlog.since(mark)
    except OSError:
        return ""
    return text if len(text) <= MAX_EXCERPT else text[-MAX_EXCERPT:]


def _version(server: Server) -> str:
    return server.tree.version.version if server.tree.version else ""


def load_threads(settings: HuntSettings) -> int:
    """The load's threads: one in a compare topology (every statement runs on each server
    in turn, so the servers must see them in the same order to keep the same data)."""
    return 1 if settings.topology.kind == "compare" else settings.threads


def _load_options(spec: TrialSpec, settings: HuntSettings) -> Any:
    """The randgen options of the trial's load (an --sql-file load: no gendata; a
    replayed corpus: statements that run too long get KILL QUERY)."""
    replay = bool(spec.load.corpus)
    return make_options(
        grammar=spec.load.grammar, gendata=False if spec.load.sql else
        (spec.load.gendata or True),
        queries=settings.queries or UNLIMITED_QUERIES, threads=load_threads(settings),
        duration=spec.duration, seed=spec.seed, redefine=list(spec.load.redefine),
        processes=1, querytimeout=min(REPLAY_QUERY_TIMEOUT, settings.hang_timeout / 2)
        if replay else 0.0,
        reporters=["Deadlock"] if "hang" in settings.oracles else [],
        deadlock_timeout=settings.hang_timeout)


def run_load(spec: TrialSpec, settings: HuntSettings, servers: Sequence[Server],
             work_dir: str) -> RandgenResult:
    """The trial's randgen load on s0, traced to ``work_dir/trace.jsonl``."""
    s0 = servers[0]
    compare = list(servers[1:]) if settings.topology.kind == "compare" else []
    trace = StatementTrace(os.path.join(work_dir, "trace.jsonl"), s0.name)
    specs = [server_connection(c, SCHEMA) for c in compare]
    run: RandgenRun
    if spec.load.generated:
        run = surface_run(_load_options(spec, settings), server_connection(s0, SCHEMA),
                          os.path.join(work_dir, "randgen.log"), alive_check(s0), server=s0,
                          trace=trace)
    elif spec.load.corpus:
        run = replay_run(spec.load.corpus, _load_options(spec, settings),
                         server_connection(s0, SCHEMA), os.path.join(work_dir, "randgen.log"),
                         alive_check(s0), server=s0, trace=trace)
    else:
        run = RandgenRun(_load_options(spec, settings), server_connection(s0, SCHEMA),
                         os.path.join(work_dir, "randgen.log"), alive_check(s0),
                         settings.randgen_home, server=s0, compare=specs, trace=trace)
    run.trace_names = {c.describe(): s.name for c, s in zip(specs, compare)}
    try:
        return run.run()
    finally:
        trace.close()


def _health_findings(servers: Sequence[Server], marks: dict[str, int],
                     dead: set[str], work_dir: str) -> list[Finding]:
    """Crash and unresponsive-server findings of servers not yet known to be dead."""
    findings = []
    for index, server in enumerate(servers):
        if server.name in dead:
            continue
        # a loaded machine may answer late: a hang is no answer for long; a server whose
        # error log has a crash report is dying, not hung (writing its core on a loaded
        # machine can take a minute: a replayed corpus's trial called it a hang)
        settled = settle(server, marks[server.name])
        health = settled.health
        if settled.crashing and health.state is HealthState.HUNG:
            dead.add(server.name)
            why = settled.note or f"it had not ended {DYING_WAIT:g} s later"
            findings.append(crash_finding(server, _excerpt(server, marks[server.name]),
                                          f"crashed: its crash report is in the error log; "
                                          f"{why}", work_dir))
        elif health.state is HealthState.CRASHED or (
                health.state is HealthState.STOPPED and not server.stop_requested):
            dead.add(server.name)
            findings.append(crash_finding(server, _excerpt(server, marks[server.name]),
                                          health.message, work_dir))
        elif health.state is HealthState.HUNG:
            dead.add(server.name)
            role = "s0 (the load's server)" if index == 0 else f"{server.name}"
            findings.append(unresponsive_finding(server.name, role, health.message))
    return findings


def _wrong_results(settings: HuntSettings, spec: TrialSpec, servers: Sequence[Server],
                   stats: dict[str, Any], checks: Checks | None = None) -> list[Finding]:
    """The wrong-result oracles the hunt asked for, on s0 (and the compared servers);
    an oracle that cannot fit before the --duration's end is skipped (checks)."""
    checks = checks or Checks()
    names = [n for n in settings.oracles if n in WRONG_RESULT_ORACLES]
    if not names:
        return []
    checked = list(servers[:1]) + (list(servers[1:]) if settings.topology.kind == "compare"
                                   else [])
    conns: list[pymysql.connections.Connection] = []
    try:
        for server in checked:
            conns.append(server.connect(db=SCHEMA))
        metadata = load_metadata(conns[0], SCHEMA)
        oracles = [o for o in load_oracles(names)
                   if o.name != "differential" or len(conns) > 1]
        held = [DeadlineConnection(c, checks.deadline) for c in conns] \
            if checks.deadline is not None else conns
        findings, kept = run_oracles(oracles, held, metadata, spec.seed,
                                     settings.wrong_result_budget, servers[0].name,
                                     lambda name: checks.fit(f"the {name} oracle", spec.number))
        checks.skipped += [f"the rest of the {name} oracle ({got.get('checks', 0)} checks ran)"
                           for name, got in kept.items() if got.get("stopped") == BUDGET_SPENT]
        stats.update(kept)
        return findings
    except (pymysql.MySQLError, KewpieError) as exc:
        get_logger().warning(f"trial {spec.number}: the wrong-result oracles stopped: {exc}")
        return []
    finally:
        for conn in conns:
            try:
                conn.close()
            except pymysql.MySQLError:
                pass


def collect_findings(spec: TrialSpec, settings: HuntSettings, servers: Sequence[Server],
                     result: RandgenResult, marks: dict[str, int],
                     wait_applied: Callable[[float], None], stats: dict[str, Any],
                     work_dir: str, checks: Checks | None = None) -> tuple[list[Finding], set[str]]:
    """Ask the oracles (see the module docstring); the findings and the dead servers.
    checks: what --duration leaves them (the wrong-result oracles and the replicas' wait
    are skipped when they cannot fit, and said so)."""
    checks = checks or Checks()
    oracles = settings.oracles
    dead: set[str] = set()
    findings = _health_findings(servers, marks, dead, work_dir)
    if "hang" in oracles and servers[0].name not in dead:  # a crash is not a hang
        hang = deadlock_finding(result, servers[0].name)
        if hang is not None:
            findings.append(hang)
    if settings.topology.kind == "compare" and result.differences:
        findings += load_difference_findings(result.differences, servers[0].name)
    wrong = any(n in WRONG_RESULT_ORACLES for n in oracles)
    if not dead and (not wrong or checks.fit("the wrong-result oracles", spec.number)):
        findings += _wrong_results(settings, spec, servers, stats, checks)
        findings += _health_findings(servers, marks, dead, work_dir)
    if not dead and "divergence" in oracles and settings.topology.replicated and \
            checks.fit("the divergence check", spec.number):
        findings += divergence_findings(settings.topology.kind, servers, wait_applied,
                                        min(settings.replica_timeout, checks.left()))
    if "errorlog" in oracles and not spec.load.corpus:  # see REPLAY_NO_ERRORLOG
        patterns = suppressions(settings.suppressions)
        for server in servers:
            text = _excerpt(server, marks[server.name])
            if server.name in dead:
                text = text[:crash_report_start(text)]
            findings += error_log_findings(server.name, text, patterns)
    return findings, dead


def trial_context(spec: TrialSpec, settings: HuntSettings, servers: Sequence[Server],
                  result: RandgenResult, bot: str) -> dict[str, Any]:
    """The trial's part of every finding.json."""
    topology = settings.topology.describe()
    for entry, server in zip(topology["servers"], servers):
        entry.update(version=_version(server), code_tree=server.tree.basedir)
    return {
        "trial": {"number": spec.number, "seed": spec.seed, "bot": bot,
                  "grammar": spec.load.grammar, "gendata": spec.load.gendata or
                  ("" if spec.load.sql else "simple"),
                  "redefine": list(spec.load.redefine), "threads": load_threads(settings),
                  "queries": settings.queries, "duration": spec.duration,
                  "options": [o.as_arg() for o in spec.options], "schema": SCHEMA},
        "topology": topology,
        "load": {"status": result.status, "reason": result.reason,
                 "statements": result.statements, "seconds": round(result.duration, 3),
                 "errors": {str(k): v for k, v in sorted(result.errors.items())}},
        "reproduce": settings.reproduce(spec),
    }


def in_flight(trace_path: str) -> list[dict[str, Any]]:
    """The load's statements that lost their connection (the server died under them):
    the crashing one is among them, in send order."""
    try:
        records = read_trace(trace_path)
    except OSError:
        return []
    return [{"seq": r.get("seq"), "conn": r.get("conn"), "thread": r.get("thread"),
             "sql": r.get("sql")} for r in records
            if r.get("result") == "error" and r.get("error") in LOST_CONNECTION_CODES]


def write_findings(findings: Sequence[Finding], spec: TrialSpec, settings: HuntSettings,
                   servers: Sequence[Server], result: RandgenResult, marks: dict[str, int],
                   work_dir: str, bot: str) -> list[Written]:
    """Each finding's folder (crashes first), then gdb's backtraces."""
    context = trial_context(spec, settings, servers, result, bot)
    by_name = {s.name: s for s in servers}
    excerpts = {s.name: _excerpt(s, marks[s.name]) for s in servers}
    written: list[Written] = []
    order = sorted(range(len(findings)), key=lambda i: findings[i].kind != "crash")
    trace_path = os.path.join(work_dir, "trace.jsonl")
    for index in order:
        finding = findings[index]
        if finding.kind == "crash" and finding.server == servers[0].name:
            finding.details["in_flight"] = in_flight(trace_path)
        for name, text in excerpts.items():
            if text:
                finding.texts.setdefault(f"errorlog-{name}.txt", text)
        for server in servers:
            finding.copies.setdefault(f"my-{server.name}.cnf", server.paths.cnf_path)
        for path in spec.load.files():
            finding.copies.setdefault(os.path.join("grammar", os.path.basename(path)), path)
        finding.copies.setdefault("randgen.log", os.path.join(work_dir, "randgen.log"))
        server = by_name.get(finding.server, servers[0])
        tagged = settings.known_bugs.tag(finding.signature, _version(server))
        written.append(write_finding(finding, settings.findings_dir, index + 1, tagged,
                                     {**context, "server_version": _version(server)},
                                     trace_path))
    for finding, done in zip((findings[i] for i in order), written):
        if finding.core:
            server = by_name.get(finding.server, servers[0])
            name = f"backtrace-{server.name}.txt"
            top = backtrace(server.tree.server, finding.core, os.path.join(done.path, name))
            if os.path.exists(os.path.join(done.path, name)):
                add_backtrace(done.path, name, top)
    return written


def run_trial(spec: TrialSpec, settings: HuntSettings, servers: Sequence[Server],
              wait_applied: Callable[[float], None], work_dir: str, bot: str,
              deadline: float | None = None) -> TrialResult:
    """Run one trial on servers (see the module docstring); work_dir is emptied first and
    removed when the trial found nothing.  deadline: the hunt's --duration's end, which
    checks that cannot fit skip (lib/hunt/budget.py; said in ``skipped``)."""
    started = time.monotonic()
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(work_dir)
    marks = {s.name: s.errlog.size() for s in servers}
    out = TrialResult(spec.number, spec.seed, spec.load.grammar, bot,
                      [o.as_arg() for o in spec.options])
    result = run_load(spec, settings, servers, work_dir)
    out.status, out.reason = result.status, result.reason
    out.statements, out.load_seconds = result.statements, result.duration
    out.errors = result.error_profile()
    findings, dead = collect_findings(spec, settings, servers, result, marks, wait_applied,
                                      out.oracle_stats, work_dir, Checks(deadline, out.skipped))
    if result.status in (STATUS_GRAMMAR_ERROR, STATUS_ENVIRONMENT_ERROR) and not findings:
        out.error = f"trial {spec.number} ({os.path.basename(spec.load.grammar)}): {result.reason}"
    out.findings = write_findings(findings, spec, settings, servers, result, marks,
                                  work_dir, bot)
    # a replayed corpus changes what it likes (global variables, users, plugins): never reused
    out.reusable = not findings and not dead and result.status == STATUS_OK \
        and not spec.load.corpus
    if not findings:
        shutil.rmtree(work_dir, ignore_errors=True)
    out.seconds = time.monotonic() - started
    return out
