"""How a server process stopped, and why waiting for it to become ready ended.

``Server.stop()``, ``stop_foreign()`` and ``ProcessExecutor.wait_ready()`` return them;
being StrEnums they still compare equal to the plain strings older callers test for.
"""
from __future__ import annotations

from enum import StrEnum


class StopResult(StrEnum):
    """How a stop ended: already gone, a clean shutdown, SIGTERM, or SIGKILL."""

    GONE = "gone"
    SHUTDOWN = "shutdown"
    TERMINATED = "terminated"
    KILLED = "killed"

    @property
    def forced(self) -> bool:
        """A signal had to end it (recovery runs at the next start)."""
        return self in (StopResult.TERMINATED, StopResult.KILLED)


class ReadyWait(StrEnum):
    """Why waiting for readiness ended: ready (``""``), the process exited, or time ran out."""

    READY = ""
    EXITED = "exited"
    TIMEOUT = "timeout"

    @property
    def ready(self) -> bool:
        """The process answered its readiness check."""
        return self is ReadyWait.READY
