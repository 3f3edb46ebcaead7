"""The windows in which a fault acted on a server: what the warnings check may excuse.

A fault of ``lib/consistency/`` (a kill, a pause, a partition...) opens a
:class:`FaultWindow` on every server of its group when it is injected: role
``target`` on the servers it acts on, ``peer`` on the others, which see a
member vanish, stall or come back.  The window closes when the fault's heal
has made the whole group healthy again.  The server keeps its windows
(:class:`FaultWindows`, ``Server.fault_windows``); after each test the
error-log warnings check (lib/checks/errorlog.py) excuses, inside a window
plus a short settle, only the lines its fault class names for that kind of
fault and that role, and the runner then forgets the windows.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

TARGET = "target"   # the server the fault acts on (killed, paused, cut off...)
PEER = "peer"       # another member of the fault's group (it sees the target go and come back)


@dataclass
class FaultWindow:
    """When a fault of ``kind`` acted on ``server`` in ``role``; ``end`` is None while the
    fault is not healed (the window then reaches the moment it is read)."""

    server: str
    kind: str
    role: str
    start: float  # time.time() when the injection began
    end: float | None = None  # time.time() when the group was healthy again
    fault: str = ""  # the fault's description ('kill s1')

    def covers(self, when: float, settle: float, now: float | None = None) -> bool:
        """True when a line logged at ``when`` (whole seconds, as error logs write them)
        falls in the window, its end extended by ``settle`` seconds."""
        end = self.end if self.end is not None else (time.time() if now is None else now)
        return int(self.start) <= when <= end + settle

    def describe(self, t0: float | None = None) -> str:
        """``kill s1 (target) 18:40:01..18:40:09`` (times of day, or seconds after t0)."""
        def at(t: float | None) -> str:
            """A moment as the window's description shows it."""
            if t is None:
                return "open"
            return f"+{t - t0:.1f}s" if t0 is not None else time.strftime("%H:%M:%S",
                                                                           time.localtime(t))
        return f"{self.fault or self.kind} ({self.role}) {at(self.start)}..{at(self.end)}"


class FaultWindows:
    """One server's fault windows (thread-safe: a fault schedule runs in its own thread)."""

    def __init__(self) -> None:
        self._windows: list[FaultWindow] = []
        self._lock = threading.Lock()

    def open(self, server: str, kind: str, role: str, fault: str = "",
             at: float | None = None) -> FaultWindow:
        """Record that a fault began acting on server now (or at ``at``)."""
        window = FaultWindow(server, kind, role, time.time() if at is None else at, None, fault)
        with self._lock:
            self._windows.append(window)
        return window

    @staticmethod
    def close(window: FaultWindow, at: float | None = None) -> None:
        """The fault's group is healthy again now (or at ``at``)."""
        window.end = time.time() if at is None else at

    def all(self) -> list[FaultWindow]:
        """Every window recorded since the last :meth:`clear`."""
        with self._lock:
            return list(self._windows)

    def clear(self) -> None:
        """Forget the windows (the runner does, once a test's lines are judged)."""
        with self._lock:
            self._windows = []
