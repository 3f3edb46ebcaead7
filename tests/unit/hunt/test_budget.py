"""The hunt's --duration covers its trials' checks: the load is cut so the checks fit,
and a check that cannot fit is skipped and said so.

Covers: lib/hunt/budget.py, lib/hunt/wrong.py (run_oracles), lib/hunt/trial.py
(collect_findings' checks)
"""
from __future__ import annotations

import logging

from lib.hunt.budget import (CHECK_RESERVE, Checks, TrialClock, fits, left_of,
                             load_seconds)
from lib.hunt.wrong import run_oracles


def test_the_load_leaves_the_reserve_for_the_checks():
    assert load_seconds(200.0, 60.0, 10.0) == 60.0
    assert load_seconds(40.0, 60.0, 10.0) == 30.0
    assert load_seconds(14.0, 60.0, 10.0) is None    # 4 s of load: too short a trial
    assert load_seconds(3.5, 3.0, 0.0) == 3.0        # a trial shorter than MIN_TRIAL
    assert load_seconds(2.0, 3.0, 0.0) is None


def test_the_reserve_is_the_longest_tail_measured():
    clock = TrialClock(120.0, 60.0, now=1000.0)
    assert clock.reserve == CHECK_RESERVE and clock.deadline == 1120.0
    assert clock.next_load(now=1000.0) == 60.0
    clock.note(trial_seconds=67.0, load_seconds=60.0)   # servers + checks: 7 s
    assert clock.reserve == 7.0
    clock.note(trial_seconds=52.0, load_seconds=47.0)
    assert clock.reserve == 7.0
    assert clock.next_load(now=1070.0) == 43.0          # 50 s left, 7 for the checks
    assert clock.next_load(now=1109.0) is None          # 11 s left: 4 s of load
    assert TrialClock(0.0, 60.0).next_load() == 60.0    # no --duration


def test_fits_and_left():
    assert left_of(None) == float("inf") and fits(None)
    assert fits(100.0, 3.0, now=97.0) and not fits(100.0, 3.0, now=97.5)


def test_a_check_that_cannot_fit_is_skipped_and_said(caplog):
    checks = Checks(deadline=0.0)     # long past
    with caplog.at_level(logging.WARNING, logger="kewpie"):
        assert not checks.fit("the divergence check", 4)
    assert checks.skipped == ["the divergence check"]
    assert "trial 4: the divergence check skipped: the --duration budget has 0.0s left" \
        in caplog.text
    assert Checks().fit("anything", 1) and Checks().skipped == []


class _Oracle:
    def __init__(self, name: str) -> None:
        self.name = name
        self.ran = False

    def run(self, conns, metadata, seed, budget):
        self.ran = True
        return []


def test_run_oracles_skips_an_oracle_that_does_not_fit():
    first, second = _Oracle("tlp"), _Oracle("norec")
    findings, _ = run_oracles([first, second], [], None, 1, 10, "s0",
                              lambda name: name == "tlp")
    assert findings == [] and first.ran and not second.ran


class _Cursor:
    description = (("1",),)

    def __init__(self, log):
        self.log = log

    def nextset(self):
        return False

    def execute(self, sql):
        self.log.append(sql)

    def fetchall(self):
        return [(1,)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


class _Conn:
    def __init__(self):
        self.sent = []
        self.autocommit_mode = True

    def cursor(self):
        return _Cursor(self.sent)


def test_a_deadline_connection_sends_nothing_after_the_deadline():
    import time
    import pytest
    from lib.hunt.budget import BUDGET_SPENT, BudgetSpentError, DeadlineConnection
    from lib.hunt.wrongresult.errors import ServerLostError
    from lib.hunt.wrongresult.execute import run_query
    raw = _Conn()
    live = DeadlineConnection(raw, time.monotonic() + 60)
    assert run_query(live, "SELECT 1").rows == ((1,),) and raw.sent == ["SELECT 1"]
    assert live.autocommit_mode is True                  # the rest is the connection's own
    spent = DeadlineConnection(raw, time.monotonic() - 1)
    with pytest.raises(BudgetSpentError, match=BUDGET_SPENT):
        run_query(spent, "SELECT 2")                      # ends an oracle as a lost server
    assert raw.sent == ["SELECT 1"] and issubclass(BudgetSpentError, ServerLostError)
