"""What a managed server can do, as small protocols, and the one way it starts.

The capabilities are separate, as Jepsen's DB/Kill/Pause protocols: code that
only stops servers asks for :class:`Stoppable`, a fault injector for
:class:`Killable` or :class:`Pausable`, a report for :class:`HasLogs`.
:func:`start_process` is the start sequence every server follows (mirakuru's
``Executor.start``): a pre-start check, the launch, then a readiness poll
that fails fast when the child exits and gives up after a timeout.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Callable, NoReturn, Protocol, runtime_checkable

from ..platform.lifecycle import ReadyWait, StopResult


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
    """Has an error log to mark and quote."""

    def error_log_size(self) -> int:
        """A mark for error_log_since."""

    def error_log_since(self, mark: int) -> str:
        """What the log gained since mark."""

    def error_log_tail(self, lines: int = 30) -> str:
        """The log's last lines."""


class Watched(Protocol):
    """The launched child as the start sequence sees it (a ProcessExecutor)."""

    def wait_ready(self, check: Callable[[], bool], timeout: float) -> tuple[bool, ReadyWait]:
        """Poll check until true; stop early when the child exits."""


class StartSteps(Protocol):
    """The hooks of start_process, in the order it calls them."""

    def pre_start_check(self) -> None:
        """Raise if the server cannot start now (e.g. its port is taken)."""

    def launch(self, extra_args: tuple[str, ...]) -> Watched:
        """Write the config, start the process, and return its handle."""

    def ready(self) -> bool:
        """The readiness check polled after launch."""

    def start_failed(self, why: ReadyWait, timeout: float) -> NoReturn:
        """Clean up and raise: the child exited, or did not get ready in time."""


def poll_ready(child: Watched, check: Callable[[], bool], timeout: float) -> ReadyWait:
    """Poll check until it is true (READY), the child exits (EXITED) or timeout (TIMEOUT)."""
    ok, reason = child.wait_ready(check, timeout)
    return ReadyWait.READY if ok else ReadyWait(reason)  # a plain string from older executors


def await_ready(steps: StartSteps, child: Watched, timeout: float) -> None:
    """The readiness half of the start: return when ready, else steps.start_failed raises."""
    why = poll_ready(child, steps.ready, timeout)
    if not why.ready:
        steps.start_failed(why, timeout)


def start_process(steps: StartSteps, timeout: float, wait: bool = True,
                  extra_args: tuple[str, ...] = ()) -> Watched:
    """The start sequence: pre-start check, launch, and (with wait) the readiness
    poll with fail-fast on exit.  Returns the launched child."""
    steps.pre_start_check()
    child = steps.launch(tuple(extra_args))
    if wait:
        await_ready(steps, child, timeout)
    return child
