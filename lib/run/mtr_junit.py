"""JUnit in mysql-test-run's dialect (``--xml-report``), for MariaDB's mtr-log-collector
and buildbot's cross-reference, which read mtr's own report as it is.

As mtr writes it (mysql-test/lib/mtr_report.pm): tests sorted by name, one
``testsuite`` per suite with ``disabled``, ``failures``, ``skipped``, ``tests``,
``time``, ``hostname``, ``id``, ``timestamp``; one ``testcase`` per test with
``classname`` (the suite), ``name`` (the test, without the suite), ``status``
(``MTR_RES_PASSED``, ``MTR_RES_FAILED``, ``MTR_RES_SKIPPED``), ``time`` and
``combinations`` (comma-separated, sorted); a failure is
``<failure message="" type="MTR_RES_FAILED">`` holding the test's log, a skip
``<skipped message="why" type="MTR_RES_SKIPPED"/>``, a disabled test
``<disabled .../>``.  The collector keeps failures by ``classname.name`` and
``combinations``.  kewpie's timeouts are failures; a test that passed on a retry
passes, as in mtr's report.
"""
from __future__ import annotations

import socket
import time
import xml.etree.ElementTree as ET
from collections import OrderedDict

from ..history.records import split_name
from ..platform.safewrite import text_bytes, write_file
from ..platform.trustedpath import Trust
from ..suites.status import TestStatus
from .junit import _short
from .report import Outcome

PASSED, FAILED, SKIPPED = "MTR_RES_PASSED", "MTR_RES_FAILED", "MTR_RES_SKIPPED"


def _status(outcome: Outcome) -> str:
    if outcome.failed:
        return FAILED
    return SKIPPED if outcome.status == TestStatus.SKIPPED else PASSED


def _seconds(ms: float) -> str:
    return f"{ms / 1000.0:.3f}"


def build(outcomes: list[Outcome]) -> ET.Element:
    """The ``testsuites`` element of a run's outcomes."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    host = socket.gethostname()
    by_suite: "OrderedDict[str, list[tuple[str, str, Outcome]]]" = OrderedDict()
    for outcome in sorted(outcomes, key=lambda o: o.name):
        test, combination = split_name(outcome.name)
        suite, _, name = test.partition(".")
        combos = ",".join(sorted(c for c in combination.split(",") if c))
        by_suite.setdefault(suite, []).append((name or suite, combos, outcome))
    failed = sum(1 for o in outcomes if o.failed)
    disabled = sum(1 for o in outcomes if o.status == TestStatus.SKIPPED and
                   o.message.startswith("disabled"))
    root = ET.Element("testsuites", {
        "disabled": str(disabled), "errors": "", "failures": str(failed), "name": "",
        "tests": str(len(outcomes)), "time": _seconds(sum(o.time_ms for o in outcomes))})
    for number, (suite, cases) in enumerate(by_suite.items()):
        outs = [o for _, _, o in cases]
        is_disabled = [o.status == TestStatus.SKIPPED and o.message.startswith("disabled")
                       for o in outs]
        element = ET.SubElement(root, "testsuite", {
            "disabled": str(sum(is_disabled)), "errors": "",
            "failures": str(sum(1 for o in outs if o.failed)), "hostname": host,
            "id": str(number), "name": suite, "package": "",
            "skipped": str(sum(1 for o, d in zip(outs, is_disabled)
                               if o.status == TestStatus.SKIPPED and not d)),
            "tests": str(len(outs)), "time": _seconds(sum(o.time_ms for o in outs)),
            "timestamp": stamp})
        for (name, combos, outcome), off in zip(cases, is_disabled):
            case = ET.SubElement(element, "testcase", {
                "assertions": "", "classname": suite, "name": name, "status": _status(outcome),
                "time": _seconds(outcome.time_ms), "combinations": combos})
            if outcome.failed:
                text = outcome.message + (f"\nevidence: {outcome.evidence}" if outcome.evidence else "")
                failure = ET.SubElement(case, "failure", {"message": "", "type": FAILED})
                failure.text = "\n" + _short(text) + "\n"
            elif outcome.status == TestStatus.SKIPPED:
                ET.SubElement(case, "disabled" if off else "skipped",
                              {"message": _short(outcome.message.strip())[:500], "type": SKIPPED})
    return root


def write(outcomes: list[Outcome], path: str, trust: Trust | None = None) -> str:
    """Write the report to path (UTF-8), never through a link (lib/platform/safewrite.py;
    trust: what the user trusts on purpose), and return it."""
    tree = ET.ElementTree(build(outcomes))
    ET.indent(tree, space="\t")
    data = text_bytes(lambda out: tree.write(out, encoding="UTF-8", xml_declaration=True))
    return write_file(path, data, "--xml-report", trust)
