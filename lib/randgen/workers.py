"""Worker processes: a run's threads spread over several cores, as the Perl tool forks.

A Python process runs one statement at a time however many threads it has
(the GIL), so the client side of a run with many threads is capped at one
core.  With ``--processes=N`` (default: as many as there are CPUs, at most
one per thread; ``1`` keeps everything in one process), :class:`RandgenRun`
keeps the threads of group 0 and starts ``python -m lib.randgen.worker_main``
for each other group.  Thread ``t`` belongs to group ``(t - 1) % N``.

A worker reads one JSON line on stdin (the options, the connection, the
thread numbers, the deadline), runs those threads with the same engine
(no gendata: the tables are there; metadata read again), and writes its
result as one JSON line on stdout.  A line ``stop`` (or EOF) on stdin stops
it.  Each thread's generator is seeded from the run seed and the thread
number, wherever it runs, so a run repeats with the same seed.
"""
from __future__ import annotations

import dataclasses
import json
import os
import threading
from typing import Any

from ..home import data_root, module_command
from ..platform.process import DEVNULL, PIPE, spawn, stop_child, wait_exit
from .cmdline import RandgenOptions
from .connection import ConnectionSpec
from .result import RandgenResult, ThreadStats



def process_count(threads: int, wanted: int = 0) -> int:
    """How many processes a run of threads uses (wanted 0: one per CPU, at most one per thread)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(threads, wanted if wanted > 0 else cpus))


def thread_groups(threads: int, processes: int) -> list[list[int]]:
    """Thread numbers per process: thread t goes to group (t - 1) % processes."""
    return [[t for t in range(1, threads + 1) if (t - 1) % processes == g]
            for g in range(processes)]


class Worker:
    """One worker process of a run, seen from the run's main process."""

    def __init__(self, opts: RandgenOptions, conn: ConnectionSpec, compare: list[ConnectionSpec],
                 base_dir: str, thread_ids: list[int], deadline_wall: float,
                 log_path: str | None, own_reporters: list[str]) -> None:
        spec = {"options": dataclasses.asdict(opts.with_changes(compare_dsns=[])), "conn": dataclasses.asdict(conn),
                "compare": [dataclasses.asdict(c) for c in compare], "base_dir": base_dir,
                "thread_ids": thread_ids, "deadline": deadline_wall, "log": log_path,
                "reporters": own_reporters}
        argv, extra_env = module_command("randgen.worker_main")
        env = dict(os.environ, **extra_env)
        self.thread_ids = thread_ids
        self.proc = spawn(argv, env=env, cwd=data_root(),
                          stdin=PIPE, stdout=PIPE,
                          stderr=DEVNULL, text=True, with_parent=False)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(spec) + "\n")
        self.proc.stdin.flush()
        self.reply: dict[str, Any] | None = None
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name=f"randgen-worker-{thread_ids[0]}")
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.reply = json.loads(line)
            except ValueError:
                continue

    def alive(self) -> bool:
        """True while the worker has not answered."""
        return self._reader.is_alive()

    def stop(self) -> None:
        """Ask the worker to stop its threads (it still answers with its result)."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write("stop\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            pass

    def finish(self, timeout: float) -> dict[str, Any] | None:
        """Wait for the result and reap the process."""
        self._reader.join(timeout)
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        if not wait_exit(self.proc, 5.0):
            stop_child(self.proc, 1.0)
        return self.reply


def merge(into: RandgenResult, reply: dict[str, Any] | None, thread_ids: list[int]) -> str:
    """Add a worker's result to the run's; the worker's failure reason ('' when ok)."""
    if reply is None:
        return f"the worker process of threads {thread_ids} ended without a result"
    for t in reply.get("per_thread", []):
        into.per_thread.append(ThreadStats(t["thread_id"], t["sentences"], t["statements"], t["ok"],
                                           {int(k): v for k, v in t["errors"].items()},
                                           t["reconnects"], t["runaways"]))
    for code, sample in reply.get("error_samples", {}).items():
        into.error_samples.setdefault(int(code), sample)
    into.warnings.extend(w for w in reply.get("warnings", []) if w not in into.warnings)
    into.difference_count += reply.get("difference_count", 0)
    into.differences.extend(reply.get("differences", [])[:max(0, 50 - len(into.differences))])
    into.reports.extend(reply.get("reports", []))
    first = reply.get("first_statement_at")
    if first and (into.first_statement_at is None or first < into.first_statement_at):
        into.first_statement_at = first
    if reply.get("status") not in ("ok", None):
        return f"{reply['status']}: {reply.get('reason', '')}"
    return ""
