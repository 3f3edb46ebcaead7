"""--mode=native: the selected tests, sharded, on one bot in-process or N forked bots,
with retries, timings, the report table, JUnit and the exit status."""
from __future__ import annotations

import os
import time
from typing import Callable

from ..errors import EXIT_OK, EXIT_TEST_FAILED, Interrupted
from ..platform.logsetup import configure
from .debugging import report_kept
from .environment import RunEnvironment
from .recording import RunHistory, history_weights, open_history
from .progress import Progress, wanted as progress_wanted
from .report import Outcome, Reporter
from .runner import Runner
from .selection import apply_shard
from .timings import Timings
from ..suites.context import BotSetup
from ..suites.loader import TestSpec


def make_runner(env: RunEnvironment, bot: str) -> Runner:
    """A bot's runner: its server manager (from the environment's one factory), its
    BotSetup from the config, and its evidence keeper."""
    config = env.config
    manager = env.make_manager(bot)
    logdir = os.path.join(manager.bot_dir, "log")
    os.makedirs(logdir, exist_ok=True)
    setup = BotSetup.from_config(bot, logdir, env.workdir.path, config, env.tree)
    evidence = env.evidence_keeper(bot_log_path(env, bot))
    # valgrind, rr, gdb... make tests slower too
    return Runner(manager, setup, config.reporting.test_timeout * manager.settings.timeout_factor, evidence,
                  keep_failed=config.debugging.keep_failed)


def bot_log_path(env: RunEnvironment, bot: str) -> str:
    """Where bot's log goes: the run's kewpie.log for a lone in-process bot, else the
    bot's own file."""
    if bot == "bot0" and env.config.reporting.parallel <= 1:
        return env.workdir.log_file
    return env.workdir.bot_log_file(bot)


def run_tests(env: RunEnvironment, specs: list[TestSpec],
              runner_factory: Callable[[RunEnvironment, str], Runner] = make_runner,
              xml_report: str = "") -> int:
    """Run the tests (sharded, on N bots, with retries); return the exit status.
    runner_factory(env, bot) builds a bot's runner (another mode passes its own);
    xml_report: also write mtr's XML report there (mtr's --xml-report).
    Every outcome is recorded in the results history (lib/run/recording.py)."""
    history = open_history(env)
    status: int | None = None
    try:
        status = _run_tests(env, specs, runner_factory, history, xml_report)
        return status
    except Interrupted as exc:
        status = 128 + exc.signum   # the exit the command line ends with, stored as such
        raise
    finally:
        history.close(status)


def _run_tests(env: RunEnvironment, specs: list[TestSpec],
               runner_factory: Callable[[RunEnvironment, str], Runner],
               history: RunHistory, xml_report: str) -> int:
    config, log = env.config, env.log
    timings = Timings(env.workdir.timings_file)
    specs = apply_shard(config, specs, log)
    if not config.selection.timings_file and any(s.full_name not in timings.ms for s in specs):
        timings.fill(history_weights(config, for_shard=False) or {})  # longest first
    queue = [spec for spec in specs for _ in range(max(1, config.selection.repeat))]
    bots = max(1, min(config.reporting.parallel, len(queue) or 1))
    log.info(f"Creating {bots} bot(s)")
    reporter = Reporter(log, config.reporting.verbose, show_bot=bots > 1)
    live = progress_wanted()
    if live:
        configure(config.reporting.verbose, logfile=env.workdir.log_file, progress_safe=True)
    progress = Progress(len(queue), live)
    outcomes: list[Outcome] = []

    def finished(outcome: Outcome) -> None:
        """Record, report and count one finished test."""
        outcomes.append(outcome)
        history.record(outcome)
        timings.record(outcome.name, outcome.time_ms / max(1, outcome.attempts))
        reporter.row(outcome)
        progress.advance(outcome.failed)

    started = time.monotonic()
    reporter.table_header()
    try:
        if bots == 1:
            stopped_early = _run_in_process(env, queue, finished, runner_factory)
        else:
            from .bots import BotPool  # worker processes (multiprocessing): parallel runs only
            pool = BotPool(bots, env, make_runner=lambda bot: runner_factory(env, bot))
            stopped_early = pool.run(queue, lambda s: timings.weight(s.full_name), finished,
                                     stop_on_failure=not config.reporting.force, retries=config.reporting.retry,
                                     retry_max=config.reporting.retry_failures_max,
                                     allow_known=config.reporting.allow_known)
    finally:
        progress.close()
        timings.save()
        if config.reporting.junit_xml and outcomes:
            from .junit import write as write_junit  # junitparser: only for a report
            write_junit(outcomes, config.reporting.junit_xml, env.trust)
            log.info(f"JUnit report: {config.reporting.junit_xml}")
        if xml_report and outcomes:
            from .mtr_junit import write as write_mtr_xml
            write_mtr_xml(outcomes, xml_report, env.trust)
            log.info(f"mtr XML report: {xml_report}")
    reporter.summary(outcomes, len(queue), time.monotonic() - started, stopped_early)
    failed = any(o.fails_run(config.reporting.allow_known) for o in outcomes)
    return EXIT_TEST_FAILED if failed or stopped_early else EXIT_OK


def _run_in_process(env: RunEnvironment, queue: list[TestSpec],
                    finished: Callable[[Outcome], None],
                    runner_factory: Callable[[RunEnvironment, str], Runner] = make_runner) -> bool:
    """One bot in this process; True if stopped early after a failure."""
    config = env.config
    runner = runner_factory(env, "bot0")
    failed = 0
    for done, spec in enumerate(queue, start=1):
        # the last test's servers serve no one after it (a retry starts fresh ones anyway)
        runner.manager.more_tests(done < len(queue))  # the last one's stop with the run
        runner.expect_next(queue[done] if done < len(queue) else None)
        outcome = runner.run_with_retries(spec, config.reporting.retry,
                                          lambda: failed < config.reporting.retry_failures_max)
        finished(outcome)
        if runner.kept:  # --keep-failed: the run ends with the failed test's servers up
            report_kept(env, runner.kept, outcome.name)
            return done < len(queue)
        if outcome.fails_run(config.reporting.allow_known):
            failed += 1
            if not config.reporting.force:
                return done < len(queue)
    return False
