"""The attempt pipeline's pure parts: what a unittest module's result says (its raw
result), the rules of each way in, and failures from outside a body's result (pytest's
phases) put before its verdict.

Covers: lib/run/attempt.py, lib/run/runner.py (raw_result)
"""
import types
import unittest

from lib.run.attempt import Attempt, RawResult, Rules, Verdict
from lib.run.knownfailures import KnownVerdict
from lib.run.runner import TimedResult, raw_result
from lib.servers.requirements import Requirements
from lib.suites import loader
from lib.suites.status import TestStatus


def _spec(**suite):
    return loader.TestSpec(loader.SuiteConfig("s", "/suites/s", **suite), "t_test", "/suites/s/t_test.py",
                    types.ModuleType("t_test"), Requirements.declared("mysql", [[]]),
                    check_warnings=False)


def _result(*methods):
    """A TimedResult after running the given test methods (name -> body)."""
    case = type("Case", (unittest.TestCase,), dict(methods))
    result = TimedResult()
    unittest.TestLoader().loadTestsFromTestCase(case).run(result)
    return result


def test_raw_result_of_a_module():
    def fails(self):
        self.assertEqual(1, 2, "meant to fail")

    def skips(self):
        self.skipTest("no such engine")

    failed = raw_result(_result(("test_a", fails), ("test_b", lambda self: None)), _spec())
    assert failed.status == TestStatus.FAIL and "meant to fail" in failed.message
    assert [row[0] for row in failed.methods] == ["test_a", "test_b"]
    skipped = raw_result(_result(("test_a", skips)), _spec())
    assert (skipped.status, skipped.message) == (TestStatus.SKIPPED, "skipped: no such engine")
    empty = raw_result(_result(), _spec())
    assert (empty.status, empty.message) == (TestStatus.SKIPPED,
                                             "/suites/s/t_test.py has no test methods")
    passed = raw_result(_result(("test_a", lambda self: None)), _spec())
    assert (passed.status, passed.message, passed.crashed) == (TestStatus.PASS, "", None)


def test_rules_of_a_kewpie_test_and_of_an_mtr_case():
    own = []
    rules = Rules.for_spec(_spec(kept_processes=("sleep",), suppressions=("x",)), own)
    assert (rules.suite_path, rules.kept_processes, rules.check_warnings) == \
        ("/suites/s", ("sleep",), False)
    own.append("y")  # the test's suppress_warning, after the rules were made
    assert [r for group in rules.suppressions for r in group] == ["x", "y"]
    assert rules.kewpie_warnings and rules.reuse_rule and rules.can_keep
    mtr = Rules.self_checked("/mtr/suite/rpl")
    assert (mtr.suite_path, mtr.kewpie_warnings, mtr.reuse_rule, mtr.can_keep) == \
        ("/mtr/suite/rpl", False, False, False)


def _verdict(status, message):
    return Verdict(status, message, [], KnownVerdict(), RawResult(status))


def test_failures_from_outside_the_body_come_first():
    assert Attempt._with_failures(_verdict(TestStatus.PASS, ""), []) == (TestStatus.PASS, "")
    assert Attempt._with_failures(_verdict(TestStatus.PASS, ""), ["setup: boom"]) == \
        (TestStatus.FAIL, "setup: boom")
    status, message = Attempt._with_failures(
        _verdict(TestStatus.TIMEOUT, "test exceeded"), ["call: lost connection"])
    assert (status, message) == (TestStatus.TIMEOUT, "call: lost connection\ntest exceeded")
    # the judge's text already in pytest's report (a dead server failed the call)
    status, message = Attempt._with_failures(_verdict(TestStatus.FAIL, "s0 died"),
                                             ["call: s0 died"])
    assert message == "call: s0 died"
