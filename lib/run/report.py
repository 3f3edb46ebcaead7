"""What the user reads: kewpie's header, one row per test, failures, summary."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Sequence

from ..suites.status import TestStatus
from .failuretext import brief, summary_of

STATUSES = tuple(TestStatus)
# the run's STATUS word: the first of these any test has
PRECEDENCE = (TestStatus.FAIL, TestStatus.TIMEOUT, TestStatus.FLAKY, TestStatus.PASS,
              TestStatus.SKIPPED)
NAME_WIDTH = 55


@dataclass
class Outcome:
    """The result of one test run: status, time and, on failure, details."""

    name: str
    status: TestStatus
    time_ms: int
    bot: str = "bot0"
    message: str = ""
    methods: Sequence[tuple[str, str, int]] = field(default_factory=list)
    attempts: int = 1
    earlier_failures: list[str] = field(default_factory=list)
    evidence: str = ""
    resets: int = 0  # times its servers were discarded afterwards (retries add theirs)
    reset_reason: str = ""  # why, after the last attempt ('' = the servers were kept)
    refused: str = ""  # skipped because its server options are unsafe: why ('' = not so)
    notes: str = ""  # shown after a test's row whatever its status (reported error-log lines)
    known: str = ""  # a failure whose servers all died of known open bugs: which ('' = not so)
    summary: str = ""  # a failure's one-line error (lib/run/failuretext.py; '' = read off message)
    tails: str = ""  # a failure's tails of the server logs that logged something new

    def __post_init__(self) -> None:
        self.status = TestStatus(self.status)

    @property
    def failed(self) -> bool:
        """The test failed or timed out (see :attr:`TestStatus.failed`)."""
        return TestStatus(self.status).failed

    @property
    def headline(self) -> str:
        """The failure's one-line error: its summary, else the line of its message that
        says what went wrong."""
        return self.summary or summary_of(self.message)

    def fails_run(self, allow_known: bool = False) -> bool:
        """Whether this outcome makes the run fail: a failure, unless allow_known
        (--allow-known) and its servers all died of known open bugs (lib/run/knownfailures.py)."""
        return self.failed and not (allow_known and bool(self.known))


def count_lines(outcomes: Sequence[Outcome], selected: int, stopped_early: bool) -> list[str]:
    """The summary's counts, which add up: executed of planned (and why the rest did not
    run), then one STATUS line -- the run's status (its worst test's), how many of the
    planned tests have it, and every status's count when there are several."""
    executed = len(outcomes)
    planned = max(selected, executed)
    not_run = planned - executed
    pct = 100.0 * executed / planned if planned else 100.0
    why = " (stopped after the first failure)" if stopped_early else ""
    lines = [f"Executed {executed}/{planned} test cases, {pct:.2f} percent"
             + (f"; {not_run} not run{why}" if not_run else "")]
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in STATUSES}
    word = next((s for s in PRECEDENCE if counts[s]), None)
    if word is None:
        return lines
    parts = [f"{s} {counts[s]}" for s in STATUSES if counts[s]]
    if not_run:
        parts.append(f"not run {not_run}")
    share = 100.0 * counts[word] / planned
    lines.append(f"STATUS: {word.upper()}, {counts[word]}/{planned} test cases, {share:.2f} percent"
                 + (f" ({', '.join(parts)})" if len(parts) > 1 else ""))
    return lines


class Reporter:
    """Writes rows and the summary through the harness logger."""

    def __init__(self, log: logging.Logger, verbose: bool = False, show_bot: bool = False) -> None:
        self.log = log
        self.verbose = verbose
        self.show_bot = show_bot

    def table_header(self) -> None:
        """The column titles before the first row."""
        self.log.info("Test execution begins...")
        bot = f"{'BOT':<5} " if self.show_bot else ""
        self.log.info(f"{'TEST NAME':<{NAME_WIDTH}} {bot}[ RESULT ]    TIME (ms)")
        self.log.info("=" * (NAME_WIDTH + 24))

    def row(self, outcome: Outcome) -> None:
        """One row per finished test, then its failure details."""
        bot = f"{outcome.bot:<5} " if self.show_bot else ""
        self.log.info(f"{outcome.name:<{NAME_WIDTH}} {bot}[ {outcome.status} ] {outcome.time_ms:>12}")
        if self.verbose:
            for method, status, ms in outcome.methods:
                self.log.info(f"    {method:<{NAME_WIDTH - 4}} [ {status} ] {ms:>12}")
        if outcome.failed:
            self._failure(outcome)
        else:
            if outcome.message and outcome.status != TestStatus.PASS:
                for line in outcome.message.rstrip().splitlines():
                    self.log.info(line)
            for line in outcome.notes.rstrip().splitlines():
                self.log.info(line)
            if outcome.evidence:
                self.log.info(f"evidence: {outcome.evidence}")
        if self.verbose and outcome.reset_reason:
            self.log.info(f"    servers reset: {outcome.reset_reason}")

    def _failure(self, outcome: Outcome) -> None:
        """A failure said once: its error, the evidence's path, the details without
        traceback frames (all of them under --verbose), the new log lines' tails."""
        headline = outcome.headline
        self.log.info(headline)
        if outcome.evidence:
            self.log.info(f"evidence: {outcome.evidence}")
        details = (outcome.message.rstrip().splitlines() if self.verbose
                   else brief(outcome.message, headline))
        for line in details:
            self.log.info(line)
        for line in outcome.tails.rstrip().splitlines():
            self.log.info(line)

    def summary(self, outcomes: list[Outcome], selected: int, total_seconds: float,
                stopped_early: bool) -> None:
        """Counts, percentages, total time and the slowest tests."""
        executed = len(outcomes)
        self.log.info("=" * (NAME_WIDTH + 24))
        self.log.info(f"Test execution complete in {total_seconds:.0f} seconds")
        self.log.info("Summary report:")
        for line in count_lines(outcomes, selected, stopped_early):
            self.log.info(line)
        resets = sum(o.resets for o in outcomes)
        self.log.info(f"Servers reset {resets} time{'' if resets == 1 else 's'} "
                      f"(kept after {executed - min(executed, resets)} of {executed} tests)")
        failed = [o.name for o in outcomes if o.failed]
        if failed:
            self.log.info(f"FAILED TESTS: {' '.join(failed)}")
        known = [f"{o.name} ({o.known})" for o in outcomes if o.failed and o.known]
        if known:
            self.log.info(f"FAILED ON KNOWN BUGS: {'; '.join(known)}")
        refused = [o.name for o in outcomes if o.refused]
        if refused:
            self.log.info(f"NOT RUN FOR UNSAFE SERVER OPTIONS (skipped, {len(refused)}): "
                          f"{' '.join(refused)}")
        flaky = [o.name for o in outcomes if o.status == TestStatus.FLAKY]
        if flaky:
            self.log.info(f"FLAKY TESTS (failed, then passed on a retry): {' '.join(flaky)}")
        if stopped_early:
            self.log.info(f"Stopped after the first failure ({selected - executed} test(s) not "
                          f"run); use --force to run past failures")
        spent = sum(o.time_ms for o in outcomes) / 1000.0
        self.log.info(f"Spent {spent:.0f} / {total_seconds:.0f} seconds on: TEST(s)")
        slow = sorted(outcomes, key=lambda o: o.time_ms, reverse=True)[:3]
        if slow:
            self.log.info("Slowest tests: " + ", ".join(f"{o.name} {o.time_ms} ms" for o in slow))
