"""Parallel bots of a native or mtr run: one forked bot per worker, the parent schedules
and reports.

Each bot is a fork of the harness (:mod:`lib.platform.workers`) made after the tests
are loaded, and runs the one loop every forked bot runs (:func:`~lib.run.forkedbot.
serve_bot`: stop signals, its own log, its servers stopped at its end) with
:class:`BotTests`: it builds its own runner through the factory the pool was given
(its own ServerManager in ``workdir/botN``, its own port leases and state file), and
runs the tests it is handed, one at a time, with retries and evidence as in a
single-bot run.  The parent picks the next test for a free bot: one needing the
servers that bot already has, else one whose servers no other bot has, longest first
by known timings (see lib/run/scheduling.py).  With each test it announces the one
that bot will get after it (``Runner.expect_next``; kept for that bot unless it is the
last one left), so that a runner can prepare those servers while the test runs.  A bot
that dies is its test's failure, with the tail of its log, and the others go on.
Workers die with the parent (parent-death signal), and their servers die with them.
"""
from __future__ import annotations

import functools
import traceback
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..platform.logsetup import get_logger
from ..platform.logtail import tail_file
from ..platform.workers import Connection, Worker, ready, start_worker
from .forkedbot import Send, serve_bot, stop_bots
from .report import Outcome
from .runner import Runner
from .scheduling import BotSchedule
from ..suites.loader import TestSpec
from ..suites.status import TestStatus

if TYPE_CHECKING:
    from .environment import RunEnvironment

STOP_GRACE = 12.0


class BotTests:
    """A bot's work (lib/run/forkedbot.py's ``BotWork``): each ``("run", index,
    failed so far, upcoming, later)`` the parent sends is a test of the queue run with
    retries, answered ``(index, outcome, the servers the bot now has)``."""

    def __init__(self, runner: Runner, bot: str, queue: list[TestSpec], retries: int,
                 retry_max: int) -> None:
        self.runner = runner
        self.bot = bot
        self.queue = queue
        self.retries = retries
        self.retry_max = retry_max

    def answer(self, message: tuple[Any, ...]) -> Any:
        """Run the test the message names; its outcome (a harness error is its failure)."""
        _, index, failed_so_far, upcoming, later = message
        runner, queue = self.runner, self.queue
        if hasattr(runner, "expect_next"):
            runner.expect_next(queue[upcoming] if upcoming is not None else None)
        if hasattr(runner, "expect_later"):
            runner.expect_later(queue[later] if later is not None else None)
        try:
            outcome = runner.run_with_retries(queue[index], self.retries,
                                              lambda: failed_so_far < self.retry_max)
        except Exception as exc:  # noqa: BLE001 - a harness bug must not kill the bot
            get_logger().debug("harness error in %s", queue[index].full_name, exc_info=True)
            runner.manager.teardown(fast=True)
            outcome = Outcome(queue[index].full_name, TestStatus.FAIL, 0, self.bot,
                              f"kewpie internal error: {type(exc).__name__}: {exc}\n"
                              f"{traceback.format_exc(limit=8)}")
        current = (runner.current_key() if hasattr(runner, "current_key")
                   else runner.manager.current if runner.manager.servers else None)
        return (index, outcome, current)

    def close(self) -> None:
        """Nothing of its own: serve_bot stops the bot's servers."""


class BotPool:
    """N bots in worker processes, fed from one queue.

    A bot gets its Runner from ``make_runner(bot)``, logs to the environment's
    ``workdir.bot_log_file(bot)`` (whose tail the parent reports if the bot dies) and,
    when it ends, stops what it started (``env.close(fast=..., bot=bot)``: fast when
    interrupted), as every forked bot does (lib/run/forkedbot.py).
    """

    def __init__(self, count: int, env: "RunEnvironment",
                 make_runner: Callable[[str], Runner]) -> None:
        self.count = count
        self.env = env
        self.make_runner = make_runner
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
            stop_bots(procs.values(), STOP_GRACE)
        return stopping and bool(schedule.pending)

    def _start(self, queue: list[TestSpec], retries: int,
               retry_max: int) -> tuple[dict[str, Connection], dict[str, Worker]]:
        """One forked bot each, with the connection the parent talks to it over."""
        conns: dict[str, Connection] = {}
        procs: dict[str, Worker] = {}
        for i in range(self.count):
            bot = f"bot{i}"
            worker = start_worker(f"kewpie-{bot}", functools.partial(
                serve_bot, self.env, bot, start=functools.partial(
                    self._work, bot, queue, retries, retry_max)))
            conns[bot], procs[bot] = worker.conn, worker
        return conns, procs

    def _work(self, bot: str, queue: list[TestSpec], retries: int, retry_max: int,
              send: Send) -> BotTests:
        """A bot's work, made in its fork (its runner is its own)."""
        return BotTests(self.make_runner(bot), bot, queue, retries, retry_max)

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
        log_file = self.env.workdir.bot_log_file(bot)
        tail = tail_file(log_file, 25)
        why = f"\n--- {log_file} ends with ---\n{tail}" if tail else ""
        return Outcome(spec.full_name, TestStatus.FAIL, 0, bot,
                       f"bot {bot} died while running {spec.full_name} "
                       f"(exit code {proc.exitcode}){why}")

