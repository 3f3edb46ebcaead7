"""The JUnit report, validated against the Jenkins schema (flaky tests, skips, timeouts,
evidence), with text that is not XML (control characters) made safe.

Covers: lib/run/junit.py
"""
import os

import xmlschema

from lib.run.junit import build
from lib.run.report import Outcome
from tests.conftest import ROOT


SCHEMA = os.path.join(ROOT, "tests", "schemas", "jenkins-junit.xsd")


def test_junit_report_validates_against_jenkins_schema(tmp_path):
    outcomes = [
        Outcome("main.a_test", "pass", 1234),
        Outcome("main.b_test", "fail", 10, message="AssertionError: 1 != 2\n--- s0 error log ---\n<x>&",
                evidence="/w/failed/main.b_test"),
        Outcome("rep.c_test", "flaky", 5, attempts=2, earlier_failures=["attempt 1: fail\nboom"]),
        Outcome("rep.d_test", "skipped", 0, message="skipped: needs gdb"),
        Outcome("rep.e_test", "timeout", 100001, message="test exceeded --test-timeout 100s"),
    ]
    xml = build(outcomes)
    path = tmp_path / "out.xml"
    xml.write(str(path))
    xmlschema.XMLSchema(SCHEMA).validate(str(path))
    text = path.read_text()
    assert 'classname="main"' in text and 'name="a_test"' in text
    assert "<flakyFailure" in text and "<skipped" in text and 'type="timeout"' in text
    assert "evidence: /w/failed/main.b_test" in text


def test_junit_text_is_xml_safe(tmp_path):
    import xml.dom.minidom
    from lib.run.junit import write
    from lib.run.report import Outcome
    path = str(tmp_path / "j.xml")
    write([Outcome("mariabackup.x", "fail", 1, message="\x07/usr/bin/mariadb-backup: \x1b[0m")], path)
    xml.dom.minidom.parse(path)
