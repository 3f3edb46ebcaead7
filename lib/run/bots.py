"""Parallel bots: one worker process per bot, the parent schedules and reports.

Each worker is forked (:mod:`lib.platform.workers`) after the tests are
loaded, builds its own runner through the factory the pool was given (its own
ServerManager in ``workdir/botN``, its own port leases and state file), and
runs the tests it is handed, one at a time, with retries and evidence as in a
single-bot run.  The parent picks the next test for a free bot: one needing
the servers that bot already has, else one whose servers no other bot has,
longest first by known timings (see lib/run/scheduling.py).  With each test it
announces the one that bot will get after it (``Runner.expect_next``; kept for
that bot unless it is the last one left), so that a runner can prepare those
servers while the test runs.  Workers die with the parent (parent-death
signal), and their servers die with them; a worker that ends closes what it
started through the ``close_bot`` callable it was given.
"""
from __future__ import annotations

import functools
import traceback
from typing import Callable, Iterator

from ..errors import Interrupted
from ..platform.interrupts import interrupt_on_stop_signals
from ..platform.logsetup import configure, get_logger
from ..platform.logtail import tail_file
from ..platform.workers import Connection, Worker, ready, start_worker, stop_workers
from .report import Outcome
from .runner import Runner
from .scheduling import BotSchedule
from ..suites.loader import TestSpec
from ..suites.status import TestStatus

STOP_GRACE = 12.0


def _worker(pool: "BotPool", bot: str, queue: list[TestSpec], retries: int, retry_max: int,
            conn: Connection) -> None:
    """Worker process body: run the tests the parent sends until told to stop."""
    interrupt_on_stop_signals()   # never raised inside logging, never lost in a finalizer
    configure(pool.verbose, logfile=pool.log_path(bot), console=False)
    interrupted = False
    try:
        runner = pool.make_runner(bot)
        while True:
            message = conn.recv()
            if message[0] == "stop":
                break
            _, index, failed_so_far, upcoming, later = message
            if hasattr(runner, "expect_next"):
                runner.expect_next(queue[upcoming] if upcoming is not None else None)
            if hasattr(runner, "expect_later"):
                runner.expect_later(queue[later] if later is not None else None)
            try:
                outcome = runner.run_with_retries(queue[index], retries,
                                                  lambda: failed_so_far < retry_max)
            except Exception as exc:  # noqa: BLE001 - a harness bug must not kill the bot
                get_logger().debug("harness error in %s", queue[index].full_name, exc_info=True)
                runner.manager.teardown(fast=True)
                outcome = Outcome(queue[index].full_name, TestStatus.FAIL, 0, bot,
                                  f"kewpie internal error: {type(exc).__name__}: {exc}\n"
                                  f"{traceback.format_exc(limit=8)}")
            current = (runner.current_key() if hasattr(runner, "current_key")
                       else runner.manager.current if runner.manager.servers else None)
            conn.send((index, outcome, current))
    except (Interrupted, EOFError):
        interrupted = True
    except BaseException:
        # The parent reports a dead bot with the tail of this log: say why here.
        get_logger().error(f"bot {bot} failed: {traceback.format_exc(limit=12)}")
        raise
    finally:
        pool.close_bot(bot, interrupted)
        conn.close()


class BotPool:
    """N bots in worker processes, fed from one queue.

    A worker gets its Runner from ``make_runner(bot)``, logs to ``log_path(bot)``
    (whose tail the parent reports if the worker dies) and, when it ends, calls
    ``close_bot(bot, fast)`` to stop what that bot started (fast: interrupted).
    """

    def __init__(self, count: int, make_runner: Callable[[str], Runner],
                 close_bot: Callable[[str, bool], None], log_path: Callable[[str], str],
                 verbose: bool = False) -> None:
        self.count = count
        self.make_runner = make_runner
        self.close_bot = close_bot
        self.log_path = log_path
        self.verbose = verbose
        self.log = get_logger()

    def run(self, queue: list[TestSpec], weight: Callable[[TestSpec], float],
            on_outcome: Callable[[Outcome], None], stop_on_failure: bool, retries: int,
            retry_max: int, allow_known: bool = False) -> bool:
        """Run every test of queue; return True if stopped early after a failure (with
        allow_known, a failure on known bugs only does not stop it)."""
        conns, procs = self._start(queue, retries, retry_max)
        # tests with equal keys can share servers
        schedule = BotSchedule([spec.requirements for spec in queue],
                               [weight(spec) for spec in queue], conns)
        failed = 0
        stopping = False
        try:
            while True:
                if not stopping:
                    self._hand_out(schedule, conns, queue, failed)
                if not schedule.busy:
                    break
                for outcome in self._collect(schedule, conns, procs, queue):
                    if outcome.fails_run(allow_known):
                        failed += 1
                        stopping = stopping or stop_on_failure
                    on_outcome(outcome)
                if not conns:
                    break
        finally:
            self._stop(conns, procs)
        return stopping and bool(schedule.pending)

    def _start(self, queue: list[TestSpec], retries: int,
               retry_max: int) -> tuple[dict[str, Connection], dict[str, Worker]]:
        """One worker per bot, each with the connection the parent talks to it over."""
        conns: dict[str, Connection] = {}
        procs: dict[str, Worker] = {}
        for i in range(self.count):
            bot = f"bot{i}"
            worker = start_worker(f"kewpie-{bot}", functools.partial(
                _worker, self, bot, queue, retries, retry_max))
            conns[bot], procs[bot] = worker.conn, worker
        return conns, procs

    def _hand_out(self, schedule: BotSchedule, conns: dict[str, Connection],
                  queue: list[TestSpec], failed: int) -> None:
        """Send each free bot its next test, with the ones announced to it."""
        for bot in conns:
            if bot in schedule.busy or not schedule.pending:
                continue
            index = schedule.assign(bot)
            upcoming, later = schedule.upcoming[bot], schedule.later[bot]
            self.log.debug("%s: %s; next %s, then %s", bot, queue[index].full_name,
                           *(queue[i].full_name if i is not None else "-"
                             for i in (upcoming, later)))
            conns[bot].send(("run", index, failed, upcoming, later))

    def _collect(self, schedule: BotSchedule, conns: dict[str, Connection],
                 procs: dict[str, Worker], queue: list[TestSpec]) -> Iterator[Outcome]:
        """The outcomes of the bots that have finished a test (waits for one at least);
        a bot that died is reported as its test's failure and dropped."""
        for conn in ready([conns[bot] for bot in schedule.busy]):
            bot = next(b for b, c in conns.items() if c is conn)
            index = schedule.busy[bot]
            try:
                _, outcome, current = conn.recv()
            except (EOFError, OSError):
                outcome, current = self._lost(bot, queue[index], procs[bot]), None
                del conns[bot]
                schedule.drop(bot)
            schedule.finished(bot, current)
            yield outcome

    def _lost(self, bot: str, spec: TestSpec, proc: Worker) -> Outcome:
        proc.join(timeout=5)
        log_file = self.log_path(bot)
        tail = tail_file(log_file, 25)
        why = f"\n--- {log_file} ends with ---\n{tail}" if tail else ""
        return Outcome(spec.full_name, TestStatus.FAIL, 0, bot,
                       f"bot {bot} died while running {spec.full_name} "
                       f"(exit code {proc.exitcode}){why}")

    def _stop(self, conns: dict[str, Connection], procs: dict[str, Worker]) -> None:
        for conn in conns.values():
            try:
                conn.send(("stop",))
            except (OSError, BrokenPipeError):
                pass
        stop_workers(procs.values(), STOP_GRACE)
