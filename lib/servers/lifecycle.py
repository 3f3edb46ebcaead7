"""What a managed server can do, as small protocols.

The capabilities are separate, as Jepsen's DB/Kill/Pause protocols: code that
only stops servers asks for :class:`Stoppable`, a fault injector for
:class:`Killable` or :class:`Pausable`, a report for :class:`HasLogs`.  The
start sequence every server follows (mirakuru's ``Executor.start``: a
pre-start check, the launch, then a readiness poll that fails fast when the
child exits and gives up after a timeout) is ``Server.start``'s.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from ..platform.lifecycle import StopResult
from .logs import ErrorLog


@runtime_checkable
class Startable(Protocol):
    """Starts, and says whether it runs."""

    def start(self, timeout: float | None = None, wait: bool = True) -> None:
        """Launch; with wait, return once ready."""

    def is_alive(self) -> bool:
        """True while the process runs."""


@runtime_checkable
class Stoppable(Protocol):
    """Stops by the one stop policy (bounded), cleanly or fast when it is thrown away."""

    def stop(self, timeout: float | None = None, clean: bool = True) -> StopResult:
        """Stop and say how it ended."""

    def discard(self, fast: bool = False) -> None:
        """Stop, its data not being used again (fast: on an interrupt)."""


@runtime_checkable
class Killable(Protocol):
    """Can be killed -9 (a fault, not a crash)."""

    def kill(self) -> None:
        """SIGKILL and reap."""


@runtime_checkable
class Pausable(Protocol):
    """Can be frozen and thawed (SIGSTOP/SIGCONT)."""

    def pause(self) -> None:
        """Freeze the process."""

    def resume(self) -> None:
        """Let a frozen process go on."""

    def paused(self) -> AbstractContextManager[None]:
        """Frozen for the duration of a with block, thawed even on error."""


@runtime_checkable
class HasLogs(Protocol):
    """Has an error log to mark and quote (lib.servers.logs.ErrorLog)."""

    errlog: ErrorLog
