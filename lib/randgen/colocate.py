"""Keep a one-thread run's client and its server thread on the same CPU.

With one randgen thread, each statement is a round trip: the client sends and
sleeps, the server's connection thread wakes, answers and sleeps, the client
wakes.  When the two sit on different CPUs, every wake-up crosses CPUs; on a
virtual machine whose idle CPUs halt (cpuidle ``haltpoll``) that costs more
than the statement itself (measured here: 10,000 transactions sentences in
6.3 s apart, 3.0 s together).  So a one-thread run against a server on this
machine pins its own thread and the server's connection thread (MariaDB's
``information_schema.PROCESSLIST.TID``) to one CPU, and gives both their
CPUs back when the connection ends.  Nothing else of the server is touched,
and a run with several threads is never pinned (their interleaving is the
point).  When anything is missing (another host, no ``TID`` column, no
permission), the run goes on unpinned.
"""
from __future__ import annotations

import os
from typing import Any, Callable

from .connection import ConnectionSpec

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
TID_QUERY = "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"


def is_local(spec: ConnectionSpec) -> bool:
    """Whether the server runs on this machine (a socket, or a loopback address)."""
    return bool(spec.unix_socket) or spec.host in LOCAL_HOSTS


def colocate(server_tid: int | None) -> Callable[[], None] | None:
    """Pin the calling thread and the server thread ``server_tid`` to one CPU both may
    use; the function that gives them their CPUs back, or None when not pinned."""
    if not server_tid or not hasattr(os, "sched_setaffinity"):
        return None
    try:
        mine = os.sched_getaffinity(0)
        theirs = os.sched_getaffinity(server_tid)
    except OSError:
        return None
    common = sorted(mine & theirs)
    if len(common) < 2:  # one CPU already: nothing to gain
        return None
    cpu = {common[0]}
    try:
        os.sched_setaffinity(server_tid, cpu)
    except OSError:
        return None
    try:
        os.sched_setaffinity(0, cpu)
    except OSError:
        _set_quietly(server_tid, theirs)
        return None

    def restore() -> None:
        """Both threads back on the CPUs they had."""
        _set_quietly(server_tid, theirs)
        _set_quietly(0, mine)
    return restore


def server_thread(value: Callable[[str], Any]) -> int | None:
    """The OS thread id of the connection's server thread, from ``value(sql)``
    (None when the server does not say)."""
    try:
        tid = value(TID_QUERY)
    except Exception:  # noqa: BLE001 - no TID column (MySQL, old MariaDB): not pinned
        return None
    try:
        return int(tid) if tid is not None else None
    except (TypeError, ValueError):
        return None


def _set_quietly(tid: int, cpus: set[int]) -> None:
    try:
        os.sched_setaffinity(tid, cpus)
    except OSError:
        pass  # the thread is gone (its connection closed): nothing to give back
