"""Worker processes: forks of the harness that run a Python function and talk over a pipe.

Parallel bots (``lib/run/bots.py``) each run in such a worker.  This module
owns their fork and their end, as :mod:`lib.platform.process` owns every
child that execs a program: :func:`start_worker` forks (the ``fork`` start
method: the worker gets the loaded tests and factories as they are, nothing
is pickled), sets the parent-death signal in the child so that a worker dies
with the harness, and hands the child its end of a duplex pipe;
:func:`ready` waits for messages on several pipes; :func:`stop_workers`
stops them with a bounded grace (SIGTERM, then SIGKILL) and reaps them.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import time
from multiprocessing.connection import Connection, wait
from typing import Callable, Iterable, Sequence

from .process import die_with_parent

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
    """Wait for workers that were told to stop, within grace seconds in all; SIGTERM
    those still running, then SIGKILL what is left when grace is up, and reap them."""
    workers = list(workers)
    deadline = time.monotonic() + grace
    for worker in workers:
        worker.join(timeout=max(0.1, deadline - time.monotonic()))
        if worker.is_alive() and worker.pid is not None:
            os.kill(worker.pid, signal.SIGTERM)
    for worker in workers:
        worker.join(timeout=max(0.1, deadline - time.monotonic()))
        if worker.is_alive():
            worker.process.kill()
            worker.join(timeout=5)
