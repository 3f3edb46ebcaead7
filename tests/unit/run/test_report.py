"""Unit tests for lib/run/report.py (rows and summary) and lib/platform/logsetup.py (the kewpie log format).

Covers: lib/run/report.py, lib/platform/logsetup.py
"""
import io
import logging
import re
import sys
import time

import pytest

from lib.platform.logsetup import KewpieFormatter, configure, get_logger
from lib.run.report import NAME_WIDTH, Outcome, Reporter

LINE_RE = re.compile(r"^(\d{8}-\d{6}) (INFO|DEBUG|WARNING|ERROR) (.*)$")


@pytest.fixture
def logger_state():
    """Restore the global kewpie logger after a test reconfigures it."""
    logger = get_logger()
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    for handler in saved[0]:
        logger.addHandler(handler)
    logger.setLevel(saved[1])
    logger.propagate = saved[2]


@pytest.fixture
def capture(logger_state):
    """(reporter factory, function returning the logged messages without the stamp)."""
    stream = io.StringIO()

    def make(verbose=False):
        return Reporter(configure(verbose=verbose, stream=stream), verbose=verbose)

    def messages():
        out = []
        for line in stream.getvalue().splitlines():
            match = LINE_RE.match(line)
            out.append(match.group(3) if match else line)
        return out

    return make, messages, stream


# ---------------------------------------------------------------- rows

def test_row_format(capture):
    make, messages, stream = capture
    make().row(Outcome("main.basic_test", "pass", 1234))
    line = stream.getvalue().splitlines()[0]
    assert LINE_RE.match(line).group(2) == "INFO"
    msg = messages()[0]
    assert msg.startswith("main.basic_test ")
    assert "[ pass ]" in msg
    assert msg.index("[ pass ]") == NAME_WIDTH + 1
    assert msg.endswith(" " * 8 + "1234")
    assert msg == f"{'main.basic_test':<{NAME_WIDTH}} [ pass ] {1234:>12}"


def test_rows_align_times_right(capture):
    make, messages, _ = capture
    reporter = make()
    reporter.row(Outcome("a.one_test", "pass", 5))
    reporter.row(Outcome("b.two_test", "fail", 123456))
    first, second = messages()[:2]
    assert first.endswith(" 5") and second.endswith(" 123456")
    assert len(first.split("]")[1]) == len(second.split("]")[1]) == 13


def test_failure_message_follows_row(capture):
    make, messages, _ = capture
    make().row(Outcome("a.x_test", "fail", 10, message="Traceback line 1\nAssertionError: 1 != 2\n\n"))
    assert messages() == [f"{'a.x_test':<{NAME_WIDTH}} [ fail ] {10:>12}",
                          "Traceback line 1", "AssertionError: 1 != 2"]


def test_pass_message_is_not_printed(capture):
    make, messages, _ = capture
    make().row(Outcome("a.x_test", "pass", 10, message="should not appear"))
    assert len(messages()) == 1


def test_verbose_rows_show_methods(capture):
    make, messages, _ = capture
    make(verbose=True).row(Outcome("a.x_test", "pass", 30,
                                   methods=[("test_one", "pass", 10), ("test_two", "skipped", 20)]))
    lines = messages()
    assert len(lines) == 3
    assert lines[1].startswith("    test_one")
    assert "[ skipped ]" in lines[2]
    assert lines[2].endswith(" 20")


def test_methods_hidden_without_verbose(capture):
    make, messages, _ = capture
    make().row(Outcome("a.x_test", "pass", 30, methods=[("test_one", "pass", 10)]))
    assert len(messages()) == 1


def test_table_header(capture):
    make, messages, _ = capture
    make().table_header()
    lines = messages()
    assert lines[0] == "Test execution begins..."
    assert lines[1].startswith("TEST NAME")
    assert "[ RESULT ]" in lines[1] and lines[1].endswith("TIME (ms)")
    assert set(lines[2]) == {"="}


# ---------------------------------------------------------------- summary

def outcomes():
    return [Outcome("s.a_test", "pass", 100), Outcome("s.b_test", "fail", 5000),
            Outcome("s.c_test", "pass", 300), Outcome("s.d_test", "skipped", 1),
            Outcome("s.e_test", "timeout", 2000)]


def test_summary_counts_and_percentages(capture):
    make, messages, _ = capture
    make().summary(outcomes(), selected=8, total_seconds=12.4, stopped_early=False)
    lines = messages()
    assert "Test execution complete in 12 seconds" in lines
    assert "Summary report:" in lines
    assert "Executed 5/8 test cases, 62.50 percent" in lines
    assert "STATUS: PASS, 2/5 test cases, 40.00 percent executed" in lines
    assert "STATUS: FAIL, 1/5 test cases, 20.00 percent executed" in lines
    assert "STATUS: SKIPPED, 1/5 test cases, 20.00 percent executed" in lines
    assert "STATUS: TIMEOUT, 1/5 test cases, 20.00 percent executed" in lines
    assert "FAILED TESTS: s.b_test s.e_test" in lines
    assert not any(line.startswith("Stopped after") for line in lines)
    assert "Spent 7 / 12 seconds on: TEST(s)" in lines
    assert "Slowest tests: s.b_test 5000 ms, s.e_test 2000 ms, s.c_test 300 ms" in lines


def test_summary_all_passed(capture):
    make, messages, _ = capture
    make().summary([Outcome("s.a_test", "pass", 10)], selected=1, total_seconds=1,
                   stopped_early=False)
    lines = messages()
    assert "Executed 1/1 test cases, 100.00 percent" in lines
    assert "STATUS: PASS, 1/1 test cases, 100.00 percent executed" in lines
    assert not any(line.startswith(("FAILED TESTS", "STATUS: FAIL")) for line in lines)


def test_summary_stopped_early(capture):
    make, messages, _ = capture
    make().summary([Outcome("s.a_test", "pass", 10), Outcome("s.b_test", "fail", 20)],
                   selected=5, total_seconds=3, stopped_early=True)
    lines = messages()
    assert "FAILED TESTS: s.b_test" in lines
    assert ("Stopped after the first failure (3 test(s) not run); use --force to run past failures"
            in lines)


def test_summary_no_tests(capture):
    make, messages, _ = capture
    make().summary([], selected=0, total_seconds=0, stopped_early=False)
    lines = messages()
    assert "Executed 0/0 test cases, 100.00 percent" in lines
    assert not any(line.startswith(("STATUS:", "FAILED", "Slowest")) for line in lines)


def test_summary_fewer_than_three_slowest(capture):
    make, messages, _ = capture
    make().summary([Outcome("s.a_test", "pass", 10), Outcome("s.b_test", "pass", 20)],
                   selected=2, total_seconds=1, stopped_early=False)
    assert "Slowest tests: s.b_test 20 ms, s.a_test 10 ms" in messages()


# ---------------------------------------------------------------- logsetup

def record(level, msg, args=(), exc_info=None):
    rec = logging.LogRecord("kewpie", level, __file__, 1, msg, args, exc_info)
    rec.created = time.mktime((2012, 1, 13, 12, 55, 52, 0, 0, -1))
    return rec


def test_formatter_info():
    assert KewpieFormatter().format(record(logging.INFO, "hello %s", ("world",))) == \
        "20120113-125552 INFO hello world"


def test_formatter_levels():
    fmt = KewpieFormatter()
    assert fmt.format(record(logging.WARNING, "w")) == "20120113-125552 WARNING w"
    assert fmt.format(record(logging.ERROR, "e")) == "20120113-125552 ERROR e"
    assert fmt.format(record(logging.DEBUG, "d")) == "20120113-125552 DEBUG d"


def test_formatter_appends_traceback():
    try:
        raise ValueError("boom")
    except ValueError:
        info = sys.exc_info()
    text = KewpieFormatter().format(record(logging.ERROR, "failed", exc_info=info))
    assert text.startswith("20120113-125552 ERROR failed\nTraceback")
    assert text.rstrip().endswith("ValueError: boom")


def test_configure_levels_and_stream(logger_state):
    stream = io.StringIO()
    log = configure(verbose=False, stream=stream)
    assert log is get_logger()
    assert not log.propagate
    log.debug("hidden")
    log.info("shown")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert LINE_RE.match(lines[0]).groups()[1:] == ("INFO", "shown")


def test_configure_verbose_and_logfile(logger_state, tmp_path):
    stream = io.StringIO()
    logfile = tmp_path / "kewpie.log"
    log = configure(verbose=True, stream=stream, logfile=str(logfile))
    log.debug("debug line")
    for handler in log.handlers:
        handler.flush()
    assert "DEBUG debug line" in stream.getvalue()
    assert "DEBUG debug line" in logfile.read_text()
    configure(stream=io.StringIO())  # replaces (and closes) the old handlers
    assert len(get_logger().handlers) == 1
