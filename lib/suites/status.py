"""The status of a finished test (or test method), as rows, reports and JUnit show it."""
from __future__ import annotations

from enum import StrEnum


class TestStatus(StrEnum):
    """A test's result; the value is the word shown in the ``[ RESULT ]`` column.

    Members compare equal to their strings, so reports, JSON and old callers
    that compare with ``"fail"`` keep working.
    """

    __test__ = False  # not a pytest test class despite the name

    PASS = "pass"
    FLAKY = "flaky"
    FAIL = "fail"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"

    @property
    def failed(self) -> bool:
        """A failure or a timeout: the run's exit status is non-zero."""
        return self in (TestStatus.FAIL, TestStatus.TIMEOUT)

    @property
    def ok(self) -> bool:
        """Passed or skipped at the first attempt: the servers may be reused."""
        return self in (TestStatus.PASS, TestStatus.SKIPPED)
