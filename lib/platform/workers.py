"""Worker processes: forks of the harness that run a Python function and talk over a pipe.

Parallel bots (``lib/run/bots.py``) each run in such a worker.  This module
owns their fork and their end, as :mod:`lib.platform.process` owns every
child that execs a program: :func:`start_worker` forks (the ``fork`` start
method: the worker gets the loaded tests and factories as they are, nothing
is pickled), sets the parent-death signal in the child so that a worker dies
with the harness, and hands the child its end of a duplex pipe;
:func:`ready` waits for messages on several pipes; :func:`stop_workers`
stops them by the one stop policy (their own way out, SIGTERM, then SIGKILL)
with a bounded grace, and reaps them.
"""
from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import Connection, wait
from typing import Callable, Iterable, Sequence

from .process import die_with_parent, signal_pid, stop_policy

__all__ = ("Connection", "Worker", "ready", "start_worker", "stop_workers")


class Worker:
    """One forked worker: its process and the parent's end of its pipe."""

    def __init__(self, name: str, process: multiprocessing.process.BaseProcess,
                 conn: Connection) -> None:
        self.name = name
        self.process = process
        self.conn = conn

    @property
    def pid(self) -> int | None:
        """The worker's process id."""
        return self.process.pid

    @property
    def exitcode(self) -> int | None:
        """Its exit status once reaped (negative: the signal that ended it), else None."""
        return self.process.exitcode

    def is_alive(self) -> bool:
        """True while the worker runs."""
        return self.process.is_alive()

    def join(self, timeout: float | None = None) -> None:
        """Wait up to timeout seconds for the worker to end, and reap it if it did."""
        self.process.join(timeout=timeout)


def _child(target: Callable[[Connection], None], conn: Connection) -> None:
    """The worker's body: tied to the harness's life, then target with its pipe end."""
    die_with_parent()
    target(conn)


def start_worker(name: str, target: Callable[[Connection], None]) -> Worker:
    """Fork a worker named name that runs target(its end of the pipe) and then exits.

    An exception escaping target ends the worker with exit status 1 (the
    parent sees the pipe close); the parent talks to it through
    ``Worker.conn``.
    """
    ctx = multiprocessing.get_context("fork")
    parent_end, child_end = ctx.Pipe()
    proc = ctx.Process(target=_child, name=name, args=(target, child_end))
    proc.start()
    child_end.close()
    return Worker(name, proc, parent_end)


def ready(conns: Sequence[Connection]) -> list[Connection]:
    """Block until at least one of conns has a message (or was closed); those that do."""
    return [c for c in wait(list(conns)) if isinstance(c, Connection)]


def stop_workers(workers: Iterable[Worker], grace: float) -> None:
    """Stop workers that were told to stop by the one stop policy (lib.platform.process),
    within grace seconds in all: their own way out first (half the grace to end by
    themselves), then SIGTERM to those still running, then SIGKILL, and reap them."""
    workers = list(workers)

    def running() -> list[Worker]:
        """The workers still running."""
        return [w for w in workers if w.is_alive()]

    def send(sig: int) -> None:
        """Signal each worker still running."""
        for worker in running():
            if worker.pid is not None:
                signal_pid(worker.pid, sig)

    def wait_gone(timeout: float) -> bool:
        """Join the workers within timeout in all; True when none runs."""
        deadline = time.monotonic() + timeout
        for worker in workers:
            worker.join(timeout=max(0.05, deadline - time.monotonic()))
        return not running()
    stop_policy(lambda: bool(running()), send, wait_gone, grace / 2, 5.0,
                request=lambda timeout: wait_gone(timeout))
