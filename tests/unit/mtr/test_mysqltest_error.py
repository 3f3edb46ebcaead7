"""mysqltest's own failing line is a failed case's summary.

Covers: lib/mtr/execute.py (mysqltest_error)
"""
from lib.mtr.execute import mysqltest_error

FAILED_QUERY = """CREATE TABLE t1 (a INT PRIMARY KEY);
mysqltest: At line 13: query 'SELECT * FROM t1' failed: 2013: Lost connection to server during query
The result from queries just before the failure was:
CREATE TABLE t1 (a INT PRIMARY KEY);
"""


def test_the_failing_line_without_the_program_name():
    assert mysqltest_error(FAILED_QUERY) == ("At line 13: query 'SELECT * FROM t1' failed: "
                                             "2013: Lost connection to server during query")
    assert mysqltest_error("x\nmariadb-test: Could not open connection 'c1'\n") == \
        "Could not open connection 'c1'"


def test_a_result_mismatch_and_no_line():
    assert mysqltest_error("--- a\n+++ b\nResult content mismatch\n") == "Result content mismatch"
    assert mysqltest_error("no line of mysqltest's here\n") == ""
