"""Results kept in the workdir while the store cannot be reached, sent by the next run
(their secrets as ``***``, as the store would hold them: lib/platform/secrets.py).

One JSON-lines file per run, ``WORKDIR/history-spool/<store>/<run uuid>.jsonl``: a ``run``
line, then ``result`` lines, then an ``end`` line when the run ended.  A writer that
reaches the store claims each file (renamed with its pid, so that two processes never
send one twice), sends it and removes it; the store ignores results it already has,
so a file sent halfway and sent again stores each result once.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..platform.secrets import redact
from .dsn import redact as redact_dsn
from .records import ResultRecord, RunInfo
from .target import StoreTarget

SPOOL_DIR = "history-spool"
SUFFIX = ".jsonl"


def spool_dir(workdir: str, target: StoreTarget) -> str:
    """Where a workdir's runs keep the results they could not send to target (one folder
    per store: a result waits for the store it was meant for).  The folder's name is a
    hash of the store without its password: a short hash of a password could be tried
    against guesses by anyone who can list the workdir."""
    name = hashlib.sha1(f"{target.sqlite_path}|{redact_dsn(target.dsn)}".encode()).hexdigest()[:12]
    return os.path.join(workdir, SPOOL_DIR, name)


@dataclass
class Spooled:
    """A run read back from its spool file."""

    run: RunInfo
    results: list[ResultRecord] = field(default_factory=list)
    ended_at: datetime | None = None
    exit_code: int | None = None


class Spool:
    """The spool file of one run (opened on its first line, appended to)."""

    def __init__(self, directory: str, run: RunInfo) -> None:
        self.directory = directory
        self.run = run
        self.path = os.path.join(directory, run.uuid + SUFFIX)
        self.count = 0
        self._started = False

    def _append(self, kind: str, data: dict[str, Any]) -> None:
        if not self._started:
            os.makedirs(self.directory, mode=0o755, exist_ok=True)
            self._started = True
            if not os.path.exists(self.path):
                self._append("run", self.run.to_json())
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.path, flags, 0o644)
        with os.fdopen(fd, "a") as fh:
            fh.write(json.dumps(redact({"kind": kind, **data})) + "\n")

    def add(self, record: ResultRecord) -> None:
        """Keep one result."""
        self._append("result", record.to_json())
        self.count += 1

    def end(self, ended_at: datetime, exit_code: int | None) -> None:
        """Record the run's end (its results are all in the file)."""
        self._append("end", {"ended_at": ended_at.isoformat(), "exit_code": exit_code})


def pending(directory: str, skip: str = "") -> list[str]:
    """Spool files waiting to be sent (oldest first), except the run skip's."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    paths = [os.path.join(directory, n) for n in names
             if n.endswith(SUFFIX) and n != skip + SUFFIX]
    return sorted(paths, key=lambda p: (os.path.getmtime(p), p))


def claim(path: str) -> str | None:
    """Take a spool file for sending (renamed with our pid); None when another process
    took it first."""
    claimed = f"{path}.sending-{os.getpid()}"
    try:
        os.rename(path, claimed)
    except OSError:
        return None
    return claimed


def read(path: str) -> Spooled | None:
    """A claimed spool file's run, results and end (None: no run line, nothing to send);
    a line cut short by a killed run is skipped."""
    spooled: Spooled | None = None
    with open(path) as fh:
        for line in fh:
            try:
                data = json.loads(line)
            except ValueError:
                continue
            kind = data.pop("kind", "")
            if kind == "run":
                spooled = Spooled(RunInfo.from_json(data))
            elif spooled is not None and kind == "result":
                spooled.results.append(ResultRecord.from_json(data))
            elif spooled is not None and kind == "end":
                spooled.ended_at = datetime.fromisoformat(data["ended_at"])
                spooled.exit_code = data.get("exit_code")
    return spooled
