"""``./kewpie.py --mode=hunt``: random loads in trials, judged by oracles, findings kept.

Before any server starts, everything the user gave is checked (grammars and
gendata found and parsed, oracles known, topology or suite, random options
safe, known-bugs files read): bad input is one ERROR line and exit 2.  Then
trials run -- each with its own seed (``--randgen-seed`` + trial number - 1),
the grammars in turn, its random options -- on one bot in this process or
on ``--parallel`` forked bots, each with its own servers, until ``--trials``
or ``--duration`` is spent.  A bot keeps its servers between trials that
found nothing (the reuse rule of lib/servers/manager.py empties the test
schema), and starts fresh ones after a finding or when a trial's options
differ.  Each trial is :func:`lib.hunt.trial.run_trial`; the findings go to
``workdir/hunt/<time>-<run id>/findings/``, and each trial and finding to the
results history (lib/run/findings.py).  At the end: the summary table
grouped by signature, ``summary.json``, ``--junit-xml``, and the exit
status: 1 when a finding is new or known-fixed (or known, without
``--allow-known``), else 0.
"""
from __future__ import annotations

import functools
import os
import time
import traceback
from typing import Any, Callable, Iterator

from ...errors import EXIT_ENVIRONMENT, EXIT_OK, EXIT_TEST_FAILED, KewpieError
from ...hunt.budget import TrialClock
from ...hunt.errors import HuntError
from ...hunt.knownbugs import KnownBugs
from ...hunt.pquery import build_corpus
from ...hunt.randopts import read_option_list
from ...hunt.summary import HuntSummary, junit
from ...hunt.surface.load import SOURCE as SURFACE
from ...hunt.topology import Topology, parse_topology
from ...hunt.trial import (REPLAY_NO_ERRORLOG, HuntSettings, Load, TrialResult, TrialSpec,
                           run_trial)
from ...hunt.wrong import NAMES as WRONG_RESULT_ORACLES
from ...hunt.wrong import load_oracles
from ...platform.logsetup import get_logger
from ...platform.safewrite import OutputDir
from ...platform.trustedpath import Trust, check_input
from ...platform.workers import Connection, Worker, ready, start_worker
from ...randgen.cmdline import resolve_path
from ...randgen.executor import RANDGEN_HOME
from ...randgen.grammar import Grammar
from ...servers.manager import ServerManager
from ...servers.option_catalog import load_catalog
from ...servers.option_safety import check_server_options
from ...suites.loader import find_suite, load_suite_config, suite_requirements
from ...run.environment import RunEnvironment
from ...run.findings import record_trial
from ...run.forkedbot import receive, serve_bot, stop_bots
from ...run.recording import RunHistory, open_history
from .options import HuntOptions

BUILTIN_ORACLES = ("crash", "hang", "errorlog", "divergence")
KNOWN_BUGS_FILE = "known_bugs.txt"
STOP_GRACE = 30.0


def parse_oracles(names: tuple[str, ...]) -> tuple[str, ...]:
    """The oracles to run ('all' expands; crash is always on); HuntError for an unknown
    built-in, the wrong-result package's own error for an unknown name there."""
    wanted: list[str] = ["crash"]
    for name in names:
        name = name.strip().lower()
        expanded = [*BUILTIN_ORACLES, *WRONG_RESULT_ORACLES] if name == "all" else [name]
        for n in expanded:
            if n not in wanted:
                wanted.append(n)
    unknown = [n for n in wanted if n not in BUILTIN_ORACLES and n not in WRONG_RESULT_ORACLES]
    if unknown:
        raise HuntError(f"unknown oracle(s) {', '.join(unknown)} in --oracles (known: "
                        f"{', '.join(BUILTIN_ORACLES + WRONG_RESULT_ORACLES)}, all)")
    wrong = [n for n in wanted if n in WRONG_RESULT_ORACLES]
    if wrong:
        try:
            load_oracles(wrong)
        except ImportError as exc:
            raise HuntError(f"--oracles {', '.join(wrong)}: the wrong-result oracles "
                            f"(lib/hunt/wrongresult) are not in this kewpie: {exc}") from None
    return tuple(wanted)


def _find_file(path: str, home: str, what: str, trust: Trust | None = None) -> str:
    """An input file as an absolute path (relative: under home, then the current folder),
    which passes the trust rule (a grammar is the load's code)."""
    found = resolve_path(path, home)
    if not os.path.isfile(found):
        raise HuntError(f"{what} {path}: no such file (relative paths are looked up under "
                        f"{home}, then the current folder; --randgen-path sets the first)")
    check_input(found, what, trust)
    return found


def _loads(env: RunEnvironment, home: str) -> tuple[Load, ...]:
    """Each --grammar (``G.yy`` or ``G.yy:D.zz``) with its gendata and the redefine files,
    found and parsed."""
    config, trust = env.config, env.trust
    hunt = config.section(HuntOptions)
    redefine = tuple(_find_file(r, home, "--redefine", trust) for r in hunt.redefine)
    gendata = _find_file(hunt.gendata, home, "--gendata", trust) if hunt.gendata else ""
    loads: list[Load] = []
    for given in hunt.grammars:
        own_data = ""
        if given.endswith(".zz") and ":" in given:
            given, own_data = given.rsplit(":", 1)
        grammar = _find_file(given, home, "--grammar", trust)
        Grammar.from_files([grammar, *redefine], [home])  # GrammarError (exit 2) if broken
        data = _find_file(own_data, home, "--grammar's gendata", trust) if own_data else gendata
        if not data:
            beside = os.path.splitext(grammar)[0] + ".zz"
            data = _find_file(beside, home, "--grammar's gendata", trust) \
                if os.path.isfile(beside) else ""
        loads.append(Load(grammar, data, redefine))
    for source in hunt.sql_files:  # pquery-style loads (lib/hunt/pquery)
        if source == SURFACE:      # the surface generator's (lib/hunt/surface)
            loads.append(Load(source, generated=True))
            continue
        assert env.tree is not None
        corpus = build_corpus(source, env.tree.basedir, env.workdir.path)
        env.log.info(f"--sql-file {source}: {corpus.stats.describe()}; "
                     f"{'mined into' if corpus.mined else 'cached in'} {corpus.cache}")
        loads.append(Load(source, corpus=corpus.cache))
    return tuple(loads)


def _topology(env: RunEnvironment) -> tuple[Topology, tuple[str, ...], list[str]]:
    """The trials' servers (a suite's or --topology's), the suite's error-log
    suppressions and its known-bugs file."""
    config = env.config
    hunt = config.section(HuntOptions)
    if config.selection.suites:
        if len(config.selection.suites) > 1:
            raise HuntError(f"--mode=hunt runs on one suite's servers, not "
                            f"{', '.join(config.selection.suites)}")
        if hunt.topology != "single" or hunt.compare_mysqld:
            raise HuntError("give the servers by --suite or by --topology, not both")
        name = config.selection.suites[0]
        path = find_suite(name, config.selection.suitepaths)
        suite = load_suite_config(name, path)
        reqs = suite_requirements(name, config.selection.suitepaths, config.servers.default_server_type)
        known = os.path.join(path, KNOWN_BUGS_FILE)
        return (Topology.from_requirements(reqs, f"suite {name}"), suite.suppressions,
                [known] if os.path.isfile(known) else [])
    second = config.servers.extra_basedirs[0] if config.servers.extra_basedirs else ""
    topology = parse_topology(hunt.topology, hunt.compare_mysqld,
                              second if hunt.topology == "compare" else "")
    return topology, (), []


def _command(env: RunEnvironment, topology: Topology, oracles: tuple[str, ...]) -> tuple[str, ...]:
    """The command-line options every trial of this hunt shares (for 'reproduce')."""
    config = env.config
    hunt = config.section(HuntOptions)
    argv = [f"--basedir={b}" for b in [config.servers.basedir, *config.servers.extra_basedirs]]
    if config.selection.suites:
        chosen = config.selection
        argv += [f"--suite={chosen.suites[0]}"] + [f"--suitepath={p}" for p in chosen.suitepaths[:-1]]
    else:
        argv.append(f"--topology={hunt.topology}")
        argv += [f"--compare-mysqld={o}" for o in hunt.compare_mysqld]
    if config.tools.randgen_path:
        argv.append(f"--randgen-path={config.tools.randgen_path}")
    argv += [f"--threads={hunt.threads}", f"--queries={hunt.queries}",
             f"--oracles={','.join(oracles)}", f"--hang-timeout={hunt.oracles.hang_timeout:g}"]
    argv += [f"--mysqld={o}" for o in config.servers.mysqld_options]
    return tuple(argv)


def build_settings(env: RunEnvironment, findings_dir: str) -> HuntSettings:
    """Every check of the user's input, before any server starts; the hunt's settings."""
    config = env.config
    hunt = config.section(HuntOptions)
    home = config.tools.randgen_path or RANDGEN_HOME
    loads = _loads(env, home)
    oracles = parse_oracles(hunt.oracles.names)
    topology, suite_suppressions, suite_known = _topology(env)
    if topology.kind == "compare" and hunt.threads > 1:
        env.log.info("--topology compare: each trial's load runs on one thread (every "
                     "statement runs on both servers in turn; they must see them in the same "
                     "order to keep the same data)")
    if any(o in oracles for o in ("differential",)) and topology.kind != "compare":
        env.log.warning("--oracles differential needs two servers to compare (--topology "
                        "compare, or a suite of two servers): it is skipped")
    if "errorlog" in oracles and any(load.corpus for load in loads):
        env.log.info(REPLAY_NO_ERRORLOG)
    known = KnownBugs.load([*suite_known, *config.reporting.known_bugs])
    random_options = read_option_list(hunt.random_options) if hunt.random_options else ()
    if random_options:
        assert env.tree is not None
        check_server_options(random_options, load_catalog(env.tree.server, env.workdir.path),
                             where=f"--random-options {hunt.random_options}")
    return HuntSettings(
        loads=loads, topology=topology, findings_dir=findings_dir, randgen_home=home,
        threads=hunt.threads, queries=hunt.queries,
        trial_duration=hunt.trial_duration, oracles=oracles,
        hang_timeout=hunt.oracles.hang_timeout, replica_timeout=hunt.oracles.replica_timeout,
        wrong_result_budget=hunt.oracles.wrong_result_budget, random_options=random_options,
        random_options_max=hunt.random_options_max, known_bugs=known,
        suppressions=tuple(suite_suppressions), base_seed=config.tools.randgen_seed,
        command=_command(env, topology, oracles))


class Budget:
    """Which trial comes next, and how long its load may run: --trials and --duration
    (which covers the trials' checks too: lib/hunt/budget.py)."""

    def __init__(self, trials: int, duration: float, trial_duration: float) -> None:
        self.trials = trials if trials or duration else 1
        self.clock = TrialClock(duration, trial_duration)
        self.started = 0

    @property
    def deadline(self) -> float | None:
        """When the hunt's --duration ends (None: no --duration)."""
        return self.clock.deadline

    def next(self) -> tuple[int, float, float | None] | None:
        """(number, load duration, deadline) of the next trial, or None when the budget
        is spent."""
        if self.trials and self.started >= self.trials:
            return None
        duration = self.clock.next_load()
        if duration is None:
            return None
        self.started += 1
        return self.started, duration, self.clock.deadline

    def note(self, result: TrialResult) -> None:
        """A finished trial: how long its checks took besides its load."""
        self.clock.note(result.seconds, result.load_seconds)


class BotTrials:
    """One bot's side of the hunt: its servers, and trials run on them."""

    def __init__(self, env: RunEnvironment, settings: HuntSettings, bot: str, root: str) -> None:
        self.env = env
        self.settings = settings
        self.bot = bot
        self.root = root
        self.manager: ServerManager | None = None

    def run(self, number: int, duration: float, deadline: float | None = None) -> TrialResult:
        """Trial number on this bot's servers (started or reused as the trial needs); its
        checks skip what cannot fit before deadline (the hunt's --duration)."""
        began = time.monotonic()
        if self.manager is None:
            self.manager = self.env.make_manager(self.bot)
        manager = self.manager
        spec = self.settings.trial(number, duration)
        reqs = self.settings.topology.with_options(spec.options)
        try:
            servers = manager.get_servers(reqs)
        except KewpieError as exc:
            manager.teardown(fast=True, discard=True)
            if not spec.options:
                raise
            get_logger().warning(f"trial {number}: the servers did not start with "
                                 f"{' '.join(o.as_arg() for o in spec.options)}: "
                                 f"{str(exc).splitlines()[0]}; trial skipped")
            return TrialResult(number, spec.seed, spec.load.grammar, self.bot,
                               [o.as_arg() for o in spec.options], status="skipped",
                               reason=str(exc).splitlines()[0], reusable=False)
        work = os.path.join(self.root, "bots", self.bot, f"trial-{number}")
        result = run_trial(spec, self.settings, servers, manager.wait_for_replicas, work, self.bot,
                           deadline)
        result.seconds = time.monotonic() - began   # its servers' start included
        if result.reusable:
            manager.after_test(True)
        else:
            manager.teardown(fast=True, discard=True)
        return result


class _ForkedTrials:
    """A forked bot's work (lib/run/forkedbot.py): the trials the hunt sends, each
    answered with its result; a trial that raised is an error result (the hunt stops)."""

    def __init__(self, trials: BotTrials) -> None:
        self.trials = trials

    def answer(self, message: tuple[Any, ...]) -> TrialResult:
        """The result of the trial ``("trial", number, duration, deadline)``."""
        _, number, duration, deadline = message
        trials = self.trials
        try:
            return trials.run(number, duration, deadline)
        except Exception as exc:  # noqa: BLE001 - said in the result, the hunt stops
            get_logger().debug("trial %s failed", number, exc_info=True)
            spec = trials.settings.trial(number, duration)
            result = TrialResult(number, spec.seed, spec.load.grammar, trials.bot, status="error",
                                 error=f"trial {number} on {trials.bot}: {type(exc).__name__}: "
                                       f"{str(exc).splitlines()[0] if str(exc) else ''}")
            if not isinstance(exc, KewpieError):
                result.error += "\n" + traceback.format_exc(limit=6)
            return result

    def close(self) -> None:
        """Nothing of its own: the bot's servers are stopped with the bot."""


def _bot_worker(env: RunEnvironment, settings: HuntSettings, bot: str, root: str,
                conn: Connection) -> None:
    """A forked bot: run the trials the hunt sends until told to stop."""
    serve_bot(env, bot, conn, lambda send: _ForkedTrials(BotTrials(env, settings, bot, root)))


def _in_process(env: RunEnvironment, settings: HuntSettings, budget: Budget, root: str,
                done: Callable[[TrialResult], bool]) -> None:
    """One bot in this process."""
    trials = BotTrials(env, settings, "bot0", root)
    while (step := budget.next()) is not None:
        result = trials.run(*step)
        budget.note(result)
        if not done(result):
            return


def _with_bots(env: RunEnvironment, settings: HuntSettings, budget: Budget, root: str,
               bots: int, done: Callable[[TrialResult], bool]) -> None:
    """N forked bots fed trial numbers until the budget is spent."""
    workers: dict[str, Worker] = {}
    for i in range(bots):
        bot = f"bot{i}"
        workers[bot] = start_worker(f"kewpie-hunt-{bot}", functools.partial(
            _bot_worker, env, settings, bot, root))
    busy: dict[str, int] = {}
    stopping = False
    try:
        while True:
            for bot, worker in workers.items():
                if bot in busy or stopping:
                    continue
                step = budget.next()
                if step is None:
                    break
                worker.conn.send(("trial", *step))
                busy[bot] = step[0]
            if not busy:
                break
            for conn in ready([workers[b].conn for b in busy]):
                bot = next(b for b in busy if workers[b].conn is conn)
                number = busy.pop(bot)
                result = receive(env, bot, workers[bot], f"during trial {number}")
                budget.note(result)
                if not done(result):
                    stopping = True
    finally:
        stop_bots(workers.values(), STOP_GRACE)


def _trial_line(result: TrialResult) -> Iterator[str]:
    """The log lines of a finished trial."""
    opts = f" with {' '.join(result.options)}" if result.options else ""
    found = f"{len(result.findings)} finding(s)" if result.findings else "nothing found"
    yield (f"trial {result.number} [{result.bot}] seed {result.seed} "
           f"{os.path.basename(result.grammar)}{opts}: {result.statements} statements in "
           f"{result.load_seconds:.1f}s (errors: {result.errors or 'none'}), load "
           f"{result.status}; {found} "
           f"({result.seconds:.1f}s)"
           + (f"; skipped for --duration: {', '.join(result.skipped)}" if result.skipped else ""))
    for w in result.findings:
        yield (f"  {w.kind} {w.signature_id} [{w.tag.upper()}]"
               + (f" {w.bug_id}" if w.bug_id else "") + f": {w.summary[:160]}")
        yield f"    {w.path}"


def run_hunt(env: RunEnvironment) -> int:
    """The hunt over env (see the module docstring), its trials and findings recorded in
    the results history as they finish (lib/run/findings.py); the exit status."""
    history = open_history(env, mode="hunt")
    status: int | None = None
    try:
        status = _hunt(env, history)
        return status
    finally:
        history.close(status)


def _hunt(env: RunEnvironment, history: RunHistory) -> int:
    """The hunt's trials, summary and exit status."""
    config, log = env.config, env.log
    hunt = config.section(HuntOptions)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    root = os.path.join(env.workdir.path, "hunt", f"{stamp}-{env.run_id[:6]}")
    settings = build_settings(env, os.path.join(root, "findings"))
    with OutputDir.open_trusted(env.workdir.path, "the hunt") as workdir:
        workdir.folder(os.path.relpath(settings.findings_dir, env.workdir.path)).close()
    budget = Budget(hunt.trials, hunt.duration, hunt.trial_duration)
    bots = max(1, min(config.reporting.parallel, budget.trials or config.reporting.parallel))
    log.info(f"Hunting: {len(settings.loads)} load(s), topology {settings.topology.kind} "
             f"({settings.topology.count} server(s), {settings.topology.source}), oracles "
             f"{','.join(settings.oracles)}, {bots} bot(s), "
             + (f"{budget.trials} trial(s)" if budget.trials else "no trial limit")
             + (f", {hunt.duration:g}s budget" if hunt.duration else "")
             + f"; known bugs: {settings.known_bugs.count} entr(ies)")
    log.info(f"Findings go to {settings.findings_dir}")
    summary = HuntSummary()
    errors: list[str] = []

    def done(result: TrialResult) -> bool:
        """Record a trial; False when the hunt must stop (a grammar/environment error)."""
        summary.add(result)
        record_trial(history, result)
        for line in _trial_line(result):
            log.info(line)
        if result.error:
            errors.append(result.error)
            return False
        return True

    started = time.monotonic()
    try:
        if bots == 1:
            _in_process(env, settings, budget, root, done)
        else:
            _with_bots(env, settings, budget, root, bots, done)
    finally:
        summary.write_json(os.path.join(root, "summary.json"),
                           {"command": list(settings.command), "loads": [l.grammar for l in settings.loads],
                            "oracles": list(settings.oracles), "topology": settings.topology.describe(),
                            "known_bugs": list(settings.known_bugs.files),
                            "seconds": round(time.monotonic() - started, 3)})
    log.info("=" * 100)
    log.info(f"Hunt complete: {len(summary.trials)} trial(s), {summary.statements} statements "
             f"in {time.monotonic() - started:.0f} seconds")
    for line in summary.table():
        log.info(line)
    log.info(f"Summary: {os.path.join(root, 'summary.json')}")
    if config.reporting.junit_xml:
        log.info(f"JUnit report: "
                 f"{junit(summary, config.reporting.allow_known, config.reporting.junit_xml, env.trust)}")
    if errors:
        for line in errors[0].splitlines()[1:]:
            log.debug(line)
        log.error(errors[0].splitlines()[0])
        return EXIT_ENVIRONMENT
    return EXIT_TEST_FAILED if summary.failed(config.reporting.allow_known) else EXIT_OK
