"""A dead server's part of a failed test's report: the crash signature and MariaDB QA's
UniqueID above the log tail.

Covers: lib/run/deadreport.py, lib/hunt/crashreport.py (crash_headline)
"""
import os
from types import SimpleNamespace

from lib.run.deadreport import dead_server_report
from tests.conftest import ROOT

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "hunt")


class _LogOnly:
    """The two things the report reads from a server: its error log's path and tail."""

    def __init__(self, text: str) -> None:
        self.paths = SimpleNamespace(error_log="/wd/var_s0/log/error.log")
        self.errlog = self
        self.text = text

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.text.splitlines()[-lines:])


def test_a_crash_report_puts_its_signature_above_the_tail():
    with open(os.path.join(FIXTURES, "crash_innodb.log")) as fh:
        text = fh.read() + "\n".join(f"filler {i}" for i in range(40))
    part = dead_server_report(_LogOnly(text), "server s0 died during the test (killed by signal 6)")
    lines = part.splitlines()
    assert lines[0] == "server s0 died during the test (killed by signal 6)"
    assert lines[1].startswith("crash signature ") and "btr0cur.cc" in lines[1]
    assert lines[2] == ("UniqueID: !cursor->index()->is_committed()|SIGABRT|"
                        "ut_dbg_assertion_failed|btr_cur_t::search_leaf_page|row_ins_clust")
    assert lines[3] == "error log /wd/var_s0/log/error.log ends with:"
    assert lines[-1] == "filler 39" and "Failing assertion" not in "\n".join(lines[4:])


def test_no_crash_report_keeps_the_one_line_form():
    part = dead_server_report(_LogOnly("a\nb"), "server s0 (pid 5) is running but does not answer SQL")
    assert part == ("server s0 (pid 5) is running but does not answer SQL; "
                    "error log /wd/var_s0/log/error.log ends with:\na\nb")
