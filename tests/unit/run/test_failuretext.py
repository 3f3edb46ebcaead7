"""A failure said once: its one-line error and the report's brief view of its details.

Covers: lib/run/failuretext.py
"""
from lib.errors import ReplicationError
from lib.run.failuretext import (brief, exception_line, summary_of, with_summary,
                                 without_tracebacks)

CHAINED = """test_sync:
Traceback (most recent call last):
  File "/k/lib/suites/testcase.py", line 141, in assertReplicasInSync
    self.wait_for_replicas(timeout)
lib.errors.ReplicationError: replica s1 stopped: Duplicate entry '1'
--- error log tail ---
2026-11-28 7 [ERROR] Slave SQL: Duplicate entry

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/k/t/x_test.py", line 32, in test_sync
    self.assertReplicasInSync()
  File "/k/venv/pymysql/cursors.py", line 153, in execute
    result = self._query(query)
AssertionError: replica s1 stopped: Duplicate entry '1'
tables differ:
  test.t1
"""


def test_the_exception_line_is_its_type_and_first_message_line():
    assert exception_line(AssertionError("tables differ:\n  t1")) == \
        "AssertionError: tables differ:"
    assert exception_line(ReplicationError("replica s1 stopped", "log\nlines")) == \
        "ReplicationError: replica s1 stopped"
    assert exception_line(KeyError()) == "KeyError"
    assert len(exception_line(ValueError("x" * 5000))) == 2000


def test_a_summary_read_off_a_text_is_its_last_exception_line():
    assert summary_of(CHAINED) == "AssertionError: replica s1 stopped: Duplicate entry '1'"
    assert summary_of("servers could not start:\nport in use") == \
        "servers could not start: port in use"
    warnings = ("error log warnings (suppress benign ones in suite_config.py's suppressions):\n"
                "s1 (/v/error.log):\n  2026-11-28 7 [ERROR] Slave SQL: Duplicate entry\n")
    assert summary_of(warnings) == "error log warnings: 2026-11-28 7 [ERROR] Slave SQL: " \
                                   "Duplicate entry"
    assert summary_of("test_x:\nthe rows differ") == "test_x: the rows differ"
    assert summary_of("") == ""


def test_tracebacks_go_and_of_a_chain_only_the_last_exception_stays():
    lines = without_tracebacks(CHAINED)
    assert lines == ["test_sync:", "AssertionError: replica s1 stopped: Duplicate entry '1'",
                     "tables differ:", "  test.t1"]
    assert not any("pymysql" in line or "cur.execute" in line for line in lines)


def test_brief_drops_the_summary_said_again_and_cuts_the_middle():
    summary = "At line 4: query 'X' failed: (1062)"
    text = f"{summary}\nmariadb-test exited with status 1\nmysqltest: {summary}"
    assert brief(text, summary) == ["mariadb-test exited with status 1"]
    long = "\n".join(f"line {i}" for i in range(100))
    kept = brief(long, "", limit=10)
    assert kept[:5] == [f"line {i}" for i in range(5)] and kept[-1] == "line 99"
    assert kept[5] == "... (90 more lines in the evidence's failure.txt)"


def test_the_whole_text_starts_with_its_summary_once():
    assert with_summary("E: x", "details") == "E: x\ndetails"
    assert with_summary("E: x", "E: x\ndetails") == "E: x\ndetails"
    assert with_summary("", "details") == "details"
    assert with_summary("E: x", "") == "E: x"


def test_logs_under_headers_each_keep_their_header_and_newest_lines():
    text = "\n".join(["servers could not be started: node s1 exited",
                      "--- joiner s1 error log (e.log) ---", *[f"j{i}" for i in range(50)],
                      "--- donor s0 SST log ---", *[f"d{i}" for i in range(50)],
                      "Access denied for user 'kewpie_sst'"])
    shown = brief(text, "node s1 exited", limit=30)
    assert len(shown) <= 30
    assert "--- joiner s1 error log (e.log) ---" in shown and "--- donor s0 SST log ---" in shown
    assert shown[-1] == "Access denied for user 'kewpie_sst'" and "j49" in shown
    assert sum(line.startswith("... (") for line in shown) == 2
    assert brief("--- a ---\nx\n--- b ---\ny", "", limit=30) == ["--- a ---", "x", "--- b ---", "y"]
