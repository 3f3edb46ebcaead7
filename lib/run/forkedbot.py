"""A forked bot's loop: the messages its run sends, each answered, until told to stop.

Every parallel bot is a fork of the harness that runs :func:`serve_bot`
(:func:`lib.platform.workers.start_worker`) with work of its own: a native or mtr
run's tests (lib/run/bots.py), the hunt's trials, the replay's jobs.  The stop
signals become :class:`~lib.errors.Interrupted`, the bot logs to its own file, and
every message but :data:`STOP` is handed to the bot's work, whose answer goes back
over the pipe.  The work may also send messages of its own between answers (a replay
bot's "my reproducer waits") through the same sender: a lock keeps two threads'
messages whole.  At the end -- told to stop, interrupted, or the run gone (the
pipe closed) -- the work is closed and the bot's servers stopped (fast unless it
was told to stop); a bot that fails otherwise logs why before it ends, for the run to
report.  The run's side reads a bot's messages with :func:`receive` (a bot
that died is an error naming its log) and ends its bots with :func:`stop_bots`.
"""
from __future__ import annotations

import threading
import traceback
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

from ..errors import Interrupted, KewpieError
from ..platform.interrupts import interrupt_on_stop_signals
from ..platform.logsetup import configure, get_logger
from ..platform.workers import Connection, Worker, stop_workers

if TYPE_CHECKING:
    from .environment import RunEnvironment

STOP = ("stop",)   # the run's message that ends a bot's loop
Send = Callable[[Any], None]


class BotWork(Protocol):
    """What a forked bot does with the run's messages."""

    def answer(self, message: tuple[Any, ...]) -> Any:
        """The answer to one message of the run (sent back as it is)."""

    def close(self) -> None:
        """The work's end (the bot's servers are stopped after it)."""


def serve_bot(env: RunEnvironment, bot: str, conn: Connection,
              start: Callable[[Send], BotWork]) -> None:
    """The body of forked bot ``bot`` (see the module docstring): ``start(send)`` makes
    its work, given the sender it may use for messages of its own."""
    interrupt_on_stop_signals()   # a signal ends the bot's work (its servers are stopped)
    configure(env.config.reporting.verbose, logfile=env.workdir.bot_log_file(bot), console=False)
    sending = threading.Lock()    # the work's own threads and this one share the pipe

    def send(message: Any) -> None:
        """One message to the run."""
        with sending:
            conn.send(message)
    work: BotWork | None = None
    fast = False
    try:
        work = start(send)
        while True:
            message = conn.recv()
            if message[0] == STOP[0]:
                break
            send(work.answer(message))
    except (Interrupted, EOFError):
        fast = True
    except BaseException:
        # the run reports a dead bot with its log: say why there
        get_logger().error(f"bot {bot} failed: {traceback.format_exc(limit=12)}")
        raise
    finally:
        try:
            if work is not None:
                work.close()
        finally:
            env.close(fast=fast, bot=bot)
            conn.close()


def receive(env: RunEnvironment, bot: str, worker: Worker, doing: str) -> Any:
    """The run's side: bot's next message (its worker has one, or has closed its pipe);
    KewpieError when the bot died ``doing`` what it was sent, with its exit status and log."""
    try:
        return worker.conn.recv()
    except (EOFError, OSError):
        worker.join(5)
        raise KewpieError(f"bot {bot} died {doing} (exit code {worker.exitcode}); see "
                          f"{env.workdir.bot_log_file(bot)}") from None


def stop_bots(workers: Iterable[Worker], grace: float) -> None:
    """The run's side: tell every bot to stop (a bot already gone is passed over), then
    stop them within grace seconds (lib/platform/workers.py)."""
    workers = list(workers)
    for worker in workers:
        try:
            worker.conn.send(STOP)
        except (OSError, ValueError):
            pass
    stop_workers(workers, grace)
