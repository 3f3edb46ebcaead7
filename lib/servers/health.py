"""What a server's health check found after a test (``Server.health()``).

:func:`unanswered_health` is the judgement for a server that did not answer
SQL, once it has been given a moment to finish dying: still running is a
hang, stopped through kewpie is a stop, anything else is a crash.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class HealthState(StrEnum):
    """A server's state after a test (compares equal to its lower-case name)."""

    OK = "ok"
    STOPPED = "stopped"
    HUNG = "hung"
    CRASHED = "crashed"

    @property
    def dead(self) -> bool:
        """Crashed or hung: the test fails and the server's log tail is reported."""
        return self in (HealthState.CRASHED, HealthState.HUNG)


@dataclass(frozen=True)
class Health:
    """A server's health: its state, and a sentence for the report ('' when ok)."""

    state: HealthState
    message: str

    @property
    def ok(self) -> bool:
        """True when running and answering SQL."""
        return self.state is HealthState.OK


def unanswered_health(name: str, pid: int | None, running: bool, stop_requested: bool,
                      returncode: int | None) -> Health:
    """Health of a server that did not answer SQL: hung, stopped by the test, or crashed
    (with its exit status or killing signal)."""
    if running:
        return Health(HealthState.HUNG, f"server {name} (pid {pid}) is running but "
                                        f"does not answer SQL")
    if stop_requested:
        return Health(HealthState.STOPPED, f"server {name} was stopped by the test")
    how = (f"killed by signal {-returncode}" if returncode is not None and returncode < 0
           else f"exit status {returncode}")
    return Health(HealthState.CRASHED, f"server {name} died during the test ({how})")
