"""JUnit XML for Jenkins' ``junit`` step, written with junitparser (xunit2 flavor).

One testsuite per kewpie suite, one testcase per test (classname = suite,
name = test).  A failed or timed-out test has a ``failure`` (errors too: the
Jenkins schema's error element differs between versions, and ``failure`` is
read everywhere) with the message and, in system-out, the log tails and the
evidence path.  A flaky test passes and carries one ``flakyFailure`` per failed
attempt; a skipped test has ``skipped`` with the reason.  Every text has its secrets
as ``***``.
"""
from __future__ import annotations

import re
import socket
import time
from collections import OrderedDict

from junitparser import Failure, Skipped
from junitparser.xunit2 import FlakyFailure, JUnitXml, TestCase, TestSuite

from ..platform.safewrite import text_bytes, write_file
from ..platform.secrets import redact_text
from ..platform.trustedpath import Trust
from .report import Outcome
from ..suites.status import TestStatus

MAX_TEXT = 20000
XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_safe(text: str) -> str:
    """Characters XML 1.0 forbids (a tool's BEL, an escape sequence) as U+FFFD, and
    secrets (a DSN's password, a secret option's value) as ``***``: the report is a
    CI artifact (lib/platform/secrets.py)."""
    return XML_FORBIDDEN.sub("\ufffd", redact_text(text))


def _short(text: str) -> str:
    text = _xml_safe(text)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "\n... (cut)"


def _first_line(text: str) -> str:
    return _xml_safe(next((line for line in text.splitlines() if line.strip()), "")[:500])


def build(outcomes: list[Outcome], name: str = "kewpie") -> JUnitXml:
    """The report for a run's outcomes."""
    suites: "OrderedDict[str, TestSuite]" = OrderedDict()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    host = socket.gethostname()
    for outcome in outcomes:
        suite_name, _, test_name = outcome.name.partition(".")
        suite = suites.get(suite_name)
        if suite is None:
            suite = TestSuite(suite_name)
            suite.timestamp = stamp
            suite.hostname = host
            suites[suite_name] = suite
        case = TestCase(test_name, classname=suite_name, time=round(outcome.time_ms / 1000.0, 3))
        if outcome.failed:
            kind = "timeout" if outcome.status == TestStatus.TIMEOUT else "failure"
            failure = Failure(_first_line(outcome.message) or kind, type_=kind)
            failure.text = _short(outcome.message)
            case.result = [failure]
            case.system_out = _short(outcome.message + (f"\nevidence: {outcome.evidence}"
                                                        if outcome.evidence else ""))
        elif outcome.status == TestStatus.SKIPPED:
            case.result = [Skipped(_first_line(outcome.message) or "skipped")]
        elif outcome.status == TestStatus.FLAKY:
            for earlier in outcome.earlier_failures:
                flaky = FlakyFailure(_first_line(earlier) or "failed", type_="flaky")
                flaky.system_out = _short(earlier)
                case.add_interim_result(flaky)
        if outcome.notes and not outcome.failed:
            case.system_out = _short(outcome.notes)
        suite.add_testcase(case)
    xml = JUnitXml(name)
    for suite in suites.values():
        suite.update_statistics()
        suite.time = round(suite.time, 3)  # the schema allows 3 decimals
        xml.add_testsuite(suite)
    xml.update_statistics()
    xml.time = round(xml.time, 3)
    return xml


def write(outcomes: list[Outcome], path: str, trust: Trust | None = None) -> str:
    """Write the report to path, never through a link (lib/platform/safewrite.py; trust:
    what the user trusts on purpose), and return it."""
    xml = build(outcomes)
    return write_file(path, text_bytes(lambda out: xml.write(out, pretty=True)),
                      "--junit-xml", trust)
