"""kewpie 2012 suites judged as 2012 judged them, and the 2012 helpers they used, on real
servers: a 2012-style module whose server logs an [ERROR] passes with the lines reported
(a new-style one, or one whose suite sets check_warnings = True, fails; --check-warnings
and --no-check-warnings); the helpers2012 fixture suite (the sysbench results database
and reports, mail reports, sql-bench and crash-me through a shell with 2012's
environment, the live server_options, std_data, server.server_manager and load_datadir).

Covers: lib/run/postchecks.py, lib/run/runner.py, lib/run/report.py, lib/run/junit.py,
lib/suites/loader.py, lib/kewpie2012/mysqlBaseTestCase.py, lib/kewpie2012/sysbench_report.py,
lib/kewpie2012/database_connect.py, lib/kewpie2012/mailing_report.py, lib/kewpie2012/sqlbench_methods.py,
lib/kewpie2012/crashme_methods.py, lib/kewpie2012/context.py, lib/kewpie2012/server_compat.py,
lib/kewpie2012/manager_compat.py, std_data/
"""
import re
import xml.etree.ElementTree as ET

from tests.conftest import FIXTURE_SUITES

ERROR_LINE = r"\[ERROR\] Got an error from thread_id=\d+, .*ha_myisam\.cc"


def _rows(out):
    return dict(re.findall(r"INFO (\S+)\s+\[ (\w+) \]\s+\d+$", out, re.M))


def _after_row(out, name):
    """The log lines between a test's row and the next row (or the end of the table)."""
    text = out.split(f"INFO {name} ", 1)[1].split("\n", 1)[1]
    return re.split(r"\n\S+ INFO (\S+\s+\[ \w+ \]|=+)", text, maxsplit=1)[0]


def test_2012_modules_report_error_log_lines_and_new_style_ones_fail(kewpie, tmp_path):
    report = tmp_path / "junit.xml"
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=judging2012,judging2012_strict",
                      "--force", f"--junit-xml={report}")
    assert proc.returncode == 1, proc.stdout[-5000:]
    assert _rows(proc.stdout) == {"judging2012.a_2012_style_test": "pass",
                                  "judging2012.b_new_style_test": "fail",
                                  "judging2012_strict.corrupt_test": "fail"}
    reported = _after_row(proc.stdout, "judging2012.a_2012_style_test")
    assert " INFO error log lines, reported, not failed" in reported.split("\n")[0], reported
    assert re.search(ERROR_LINE, reported)
    for failed in ("judging2012.b_new_style_test", "judging2012_strict.corrupt_test"):
        text = _after_row(proc.stdout, failed)
        assert "INFO error log warnings" in text and re.search(ERROR_LINE, text), text
    cases = {c.get("name"): c for c in ET.parse(report).getroot().iter("testcase")}
    passed = cases["a_2012_style_test"]
    assert passed.find("failure") is None
    assert re.search(ERROR_LINE, passed.find("system-out").text)

    # --check-warnings fails every module on them; --no-check-warnings neither fails nor reports
    strict = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=judging2012",
                        "a_2012_style", "--check-warnings")
    assert strict.returncode == 1, strict.stdout[-3000:]
    assert _rows(strict.stdout) == {"judging2012.a_2012_style_test": "fail"}
    assert re.search(ERROR_LINE, strict.stdout)
    quiet = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=judging2012,judging2012_strict",
                       "--no-check-warnings")
    assert quiet.returncode == 0, quiet.stdout[-3000:]
    assert set(_rows(quiet.stdout).values()) == {"pass"}
    assert "[ERROR]" not in quiet.stdout


def test_the_2012_helpers(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=helpers2012", "--force")
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert _rows(proc.stdout) == {"helpers2012.load_datadir_test": "pass",
                                  "helpers2012.results_db_test": "pass",
                                  "helpers2012.server_options_test": "pass",
                                  "helpers2012.sqlbench_test": "pass",
                                  "helpers2012.std_data_test": "pass"}
    assert re.search(r"INFO Report for qa@example\.com kept in \S+/log/mail_report\.txt "
                     r"\(set KEWPIE_SMTP=host\[:port\] to mail it\)", proc.stdout)
