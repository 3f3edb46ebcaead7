"""What a server's health check found after a test (``Server.health().state``)."""
from __future__ import annotations

from enum import StrEnum


class HealthState(StrEnum):
    """A server's state after a test; the values are those ``lib.servers.server.Health`` carries."""

    OK = "ok"
    STOPPED = "stopped"
    HUNG = "hung"
    CRASHED = "crashed"

    @property
    def dead(self) -> bool:
        """Crashed or hung: the test fails and the server's log tail is reported."""
        return self in (HealthState.CRASHED, HealthState.HUNG)
