"""How the error-log warnings check judges a test (docs/writing-tests.md, "Porting a 2012
suite"): --check-warnings fails every test on the lines, --no-check-warnings neither
fails nor reports, and by default each test's rule decides; lines that only get
reported follow the test's row and go into its JUnit system-out.

Covers: lib/run/postchecks.py, lib/run/report.py, lib/run/junit.py, lib/cli.py,
lib/config/
"""
import io
import re

import pytest

from lib.cli import build_parser, config_from_args
from lib.checks import errorlog
from lib.platform.logsetup import configure, get_logger
from lib.run.junit import build
from lib.run.postchecks import warnings_fail, warnings_note
from lib.run.report import Outcome, Reporter

FOUND = errorlog.report({"s0": ("/w/bot0/var_s0/log/error.log",
                                ["2026-11-25 18:52:01 7 [ERROR] Got an error from thread_id=7"])})


@pytest.mark.parametrize("check, module_default, fails", [
    (None, True, True), (None, False, False),
    (True, False, True), (True, True, True),
    (False, True, False), (False, False, False),
])
def test_who_decides(check, module_default, fails):
    assert warnings_fail(check, module_default) is fails


def test_a_reported_note_keeps_the_lines_and_says_how_to_fail_on_them():
    note = warnings_note(FOUND)
    first, *rest = note.splitlines()
    assert first.startswith("error log lines, reported, not failed")
    assert "check_warnings = True in suite_config.py or --check-warnings" in first
    assert rest == ["s0 (/w/bot0/var_s0/log/error.log):",
                    "  2026-11-25 18:52:01 7 [ERROR] Got an error from thread_id=7"]


def test_the_command_line_is_three_way():
    assert config_from_args([]).debugging.check_warnings is None
    assert config_from_args(["--check-warnings"]).debugging.check_warnings is True
    assert config_from_args(["--no-check-warnings"]).debugging.check_warnings is False
    text = " ".join(build_parser().format_help().split())
    assert "2012-style modules too" in text and "neither checks nor reports" in text


@pytest.fixture
def logged():
    logger = get_logger()
    saved = (list(logger.handlers), logger.level, logger.propagate)
    stream = io.StringIO()
    yield configure(stream=stream), stream
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    for handler in saved[0]:
        logger.addHandler(handler)
    logger.setLevel(saved[1])
    logger.propagate = saved[2]


def test_notes_follow_a_passing_row_and_reach_junit(logged, tmp_path):
    log, stream = logged
    note = warnings_note(FOUND)
    outcome = Outcome("judging.a_test", "pass", 12, notes=note)
    Reporter(log).row(outcome)
    lines = [re.sub(r"^\d{8}-\d{6} INFO ", "", l) for l in stream.getvalue().splitlines()]
    assert lines[0].startswith("judging.a_test") and "[ pass ]" in lines[0]
    assert lines[1:] == note.splitlines()
    path = tmp_path / "junit.xml"
    build([outcome]).write(str(path))
    text = path.read_text()
    assert "<system-out>" in text and "[ERROR] Got an error from thread_id=7" in text
    assert "<failure" not in text
