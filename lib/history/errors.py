"""Typed errors of the results history."""
from __future__ import annotations

from ..errors import KewpieError, UsageError


class HistoryError(KewpieError):
    """The history store cannot be opened, read or written (``kewpie history``: one
    ERROR line, exit 2; a test run only warns and keeps its results in the workdir)."""


class HistoryUsageError(UsageError):
    """A bad history option: a malformed DSN, label, pattern or date."""
