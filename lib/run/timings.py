"""Test durations from earlier runs, kept in the workdir (``timings.json``).

They order tests longest first and balance bots and shards.  Each entry is an
exponential moving average of the test's wall time in ms.
"""
from __future__ import annotations

import json
import os

SMOOTHING = 0.5


class Timings:
    """A name -> ms mapping loaded from and saved to a JSON file."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.ms: dict[str, float] = {}
        if path:
            try:
                with open(path) as fh:
                    data = json.load(fh)
                self.ms = {str(k): float(v) for k, v in data.items()}
            except (OSError, ValueError, AttributeError):
                self.ms = {}

    def weight(self, name: str) -> float:
        """Known time of a test, or the median of known times (1000 ms if none)."""
        if name in self.ms:
            return self.ms[name]
        import statistics  # only parallel bots weigh tests (~3 ms of imports)
        return statistics.median(self.ms.values()) if self.ms else 1000.0

    def fill(self, known: dict[str, float]) -> None:
        """Take durations from elsewhere (the results history) for the tests this file
        has no time for."""
        for name, ms in known.items():
            self.ms.setdefault(name, ms)

    def record(self, name: str, ms: float) -> None:
        """Fold one observed duration into the average."""
        old = self.ms.get(name)
        self.ms[name] = ms if old is None else SMOOTHING * ms + (1 - SMOOTHING) * old

    def save(self) -> None:
        """Write the file atomically (no-op without a path)."""
        if not self.path:
            return
        tmp = f"{self.path}.tmp-{os.getpid()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:  # created exclusively: never through a link planted next to the file
            fd = os.open(tmp, flags, 0o644)
        except FileExistsError:  # a killed run of the same pid left it
            os.unlink(tmp)
            fd = os.open(tmp, flags, 0o644)
        with os.fdopen(fd, "w") as fh:
            json.dump(self.ms, fh, indent=1, sort_keys=True)
        os.chmod(tmp, 0o644)
        os.replace(tmp, self.path)
