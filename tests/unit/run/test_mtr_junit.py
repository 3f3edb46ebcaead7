"""--xml-report: mysql-test-run's JUnit dialect, read back as MariaDB's mtr-log-collector
reads it (junitparser: a failed case's classname.name, its ``combinations`` and text).

Covers: lib/run/mtr_junit.py
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from junitparser import JUnitXml

from lib.run.mtr_junit import build, write
from lib.run.report import Outcome


def _outcomes() -> list[Outcome]:
    return [Outcome("main.b,myisam,debug", "fail", 1500, message="CURRENT_TEST: main.b\n"
                    "mysqltest: At line 3: query 'x' failed: 1064 ]]> <odd>", evidence="/wd/failed/b"),
            Outcome("main.a", "pass", 20),
            Outcome("innodb.c", "skipped", 0, message="disabled: MDEV-1 flaky"),
            Outcome("innodb.d", "skipped", 0, message="Test needs --big-test"),
            Outcome("innodb.e", "timeout", 900000, message="timed out after 900 s"),
            Outcome("innodb.f", "flaky", 300, attempts=2)]


def test_the_dialect_as_mtr_writes_it(tmp_path):
    root = build(_outcomes())
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("disabled"), root.get("errors")) == \
        ("6", "2", "1", "")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["innodb", "main"]  # sorted by name, as mtr
    innodb = suites[0]
    assert (innodb.get("tests"), innodb.get("failures"), innodb.get("skipped"),
            innodb.get("disabled"), innodb.get("id")) == ("4", "1", "1", "1", "0")
    cases = {c.get("name"): c for s in suites for c in s.findall("testcase")}
    assert cases["b"].get("classname") == "main" and cases["b"].get("combinations") == "debug,myisam"
    assert cases["b"].get("status") == "MTR_RES_FAILED" and cases["b"].get("time") == "1.500"
    failure = cases["b"].find("failure")
    assert failure.get("type") == "MTR_RES_FAILED" and "1064 ]]> <odd>" in failure.text
    assert cases["c"].find("disabled").get("type") == "MTR_RES_SKIPPED"
    assert cases["d"].find("skipped").get("message") == "Test needs --big-test"
    assert cases["e"].get("status") == "MTR_RES_FAILED"
    assert cases["f"].get("status") == "MTR_RES_PASSED" and len(cases["f"]) == 0
    assert cases["a"].get("status") == "MTR_RES_PASSED" and cases["a"].get("combinations") == ""


def test_the_collector_reads_the_failures(tmp_path):
    path = write(_outcomes(), str(tmp_path / "mtr.xml"))
    assert open(path, "rb").read().startswith(b"<?xml version='1.0' encoding='UTF-8'?>")
    failures = []
    for suite in JUnitXml.fromfile(path):
        for case in suite:
            if case.is_failure:
                for result in case:
                    failures.append((f"{case.classname}.{case.name}",
                                     case._elem.attrib.get("combinations", "N/A"), result.text))
    assert [(name, combos) for name, combos, _ in failures] == [("innodb.e", ""),
                                                                ("main.b", "debug,myisam")]
    assert "evidence: /wd/failed/b" in failures[1][2]
    ET.parse(path)  # well-formed
