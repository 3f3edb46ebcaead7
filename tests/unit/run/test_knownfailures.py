"""Failures on known bugs in ordinary runs: the lookup, the exit rule, the CLI checks.

Covers: lib/run/knownfailures.py, lib/run/report.py (Outcome.fails_run), lib/cli.py
(--known-bugs, --allow-known), percona_tests/crash_recovery/known_bugs.txt,
lib/hunt/knownbugs.py (a known_bugs.strings file)
"""
import os

import pytest

from lib.hunt.errors import KnownBugsError
from lib.run.knownfailures import KnownFailures
from lib.run.report import Outcome
from lib.suites.status import TestStatus
from tests.conftest import ROOT

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "hunt")


class _Version:
    version = "10.11.19"


class _Tree:
    version = _Version()


class _Dead:
    """What the lookup reads of a dead server: name, code tree version, error log."""

    tree = _Tree()

    def __init__(self, name: str, log: str) -> None:
        self.name = name
        self.log = log
        self.errlog = self   # its error log: text in memory

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.splitlines()[-lines:])


def _log(name):
    with open(os.path.join(FIXTURES, name)) as fh:
        return fh.read()


def _suite(tmp_path, text):
    (tmp_path / "known_bugs.txt").write_text(text)
    return str(tmp_path)


def test_every_dead_server_on_a_known_open_bug_is_known(tmp_path):
    suite = _suite(tmp_path, "MDEV-1 open 're:btr0cur\\.cc' leaf page\n")
    verdict = KnownFailures().judge(suite, [_Dead("s0", _log("crash_innodb.log"))])
    assert verdict.known == "MDEV-1 (open): leaf page"
    assert verdict.note.startswith("known bug MDEV-1 (open): leaf page — s0 crashed with signature ")


def test_a_known_bugs_strings_file_names_the_crash_by_its_unique_id(tmp_path):
    strings = tmp_path / "kb.strings"
    strings.write_text("!cursor->index()->is_committed()|SIGABRT|ut_dbg_assertion_failed|"
                       "btr_cur_t::search_leaf_page|row_ins_clust_index_entry_low  ## MDEV-7\n")
    verdict = KnownFailures(extra_files=(str(strings),)).judge(
        str(tmp_path), [_Dead("s0", _log("crash_innodb.log"))])
    assert verdict.known.startswith("MDEV-7 (open)")


def test_one_unknown_death_makes_it_an_ordinary_failure(tmp_path):
    suite = _suite(tmp_path, "MDEV-1 open 're:btr0cur\\.cc'\n")
    verdict = KnownFailures().judge(suite, [_Dead("s0", _log("crash_innodb.log")),
                                            _Dead("s1", _log("crash_signal11.log"))])
    assert verdict.known == "" and "known bug MDEV-1" in verdict.note


def test_no_crash_report_is_not_known(tmp_path):
    suite = _suite(tmp_path, "MDEV-1 open 're:.'\n")
    verdict = KnownFailures().judge(suite, [_Dead("s0", "2025-01-01 0 [Note] ready\n")])
    assert verdict.known == "" and verdict.note == ""


def test_a_fixed_bug_seen_again_is_a_regression(tmp_path):
    suite = _suite(tmp_path, "MDEV-2 fixed:10.11.9 're:btr0cur\\.cc'\n")
    verdict = KnownFailures().judge(suite, [_Dead("s0", _log("crash_innodb.log"))])
    assert verdict.known == ""
    assert verdict.note.startswith("REGRESSION: s0 crashed of MDEV-2, fixed in 10.11.9")


def test_extra_files_follow_the_suites_own(tmp_path):
    extra = tmp_path / "more.txt"
    extra.write_text("LOCAL-3 open 're:signal 11'\n")
    suite = tmp_path / "suite"
    suite.mkdir()
    verdict = KnownFailures((str(extra),)).judge(str(suite), [_Dead("s0", _log("crash_signal11.log"))])
    assert verdict.known == "LOCAL-3 (open)"


def test_a_broken_suite_file_is_said_not_raised(tmp_path):
    suite = _suite(tmp_path, "MDEV-1 maybe 're:.'\n")
    verdict = KnownFailures().judge(suite, [_Dead("s0", _log("crash_innodb.log"))])
    assert verdict.known == "" and verdict.note.startswith("known bugs not looked up: known-bugs file")
    with pytest.raises(KnownBugsError):
        KnownFailures().bugs_for(suite)


@pytest.mark.parametrize("status,known,allow,fails", [
    (TestStatus.FAIL, "", True, True), (TestStatus.FAIL, "MDEV-1 (open)", False, True),
    (TestStatus.FAIL, "MDEV-1 (open)", True, False), (TestStatus.PASS, "", True, False),
    (TestStatus.TIMEOUT, "", True, True)])
def test_only_known_failures_pass_with_allow_known(status, known, allow, fails):
    assert Outcome("s.t", status, 1, known=known).fails_run(allow) is fails


def test_the_shipped_crash_recovery_entry_matches_its_signature():
    """kewpie-1 (docs/consistency.md) is written for this signature text."""
    from lib.hunt.knownbugs import KNOWN, KnownBugs
    from lib.hunt.signature import Signature
    bugs = KnownBugs.load([os.path.join(ROOT, "percona_tests", "crash_recovery", "known_bugs.txt")])
    sig = Signature("crash", (
        "assertion: flst_add_first(rseg_header, TRX_RSEG + TRX_RSEG_HISTORY, undo_page, "
        "uint16_t(undo_header_offset + TRX_UNDO_HISTORY_NODE), rseg->space->free_limit, mtr) "
        "== DB_SUCCESS (trx0purge.cc)",
        "frames: plugin_foreach_with_mask < my_hash_iterate < ha_recover_complete < "
        "Recovery_context::complete < MYSQL_BIN_LOG::recover"))
    assert sig.id == "0c30876a46f9"
    tagged = bugs.tag(sig, "10.11.19")
    assert tagged.tag == KNOWN and tagged.bug.bug_id == "kewpie-1"


def test_known_bugs_files_are_read_before_a_native_or_mtr_run(tmp_path):
    from lib.cli import config_from_args
    from lib.errors import KewpieError
    good = tmp_path / "kb.txt"
    good.write_text("MDEV-1 open sig:0c30876a46f9\n")
    cfg = config_from_args([f"--known-bugs={good}", "--allow-known", "--suite=main"])
    assert cfg.reporting.known_bugs == (str(good),) and cfg.reporting.allow_known
    with pytest.raises(KewpieError, match="cannot read it"):
        config_from_args([f"--known-bugs={tmp_path / 'none.txt'}", "--suite=main"])
    assert config_from_args(["--mode=mtr", "--allow-known", "--suite=main"]).reporting.allow_known
    with pytest.raises(KewpieError, match="only with --mode=native, --mode=mtr, --mode=hunt or --mode=replay"):
        config_from_args(["--mode=cleanup", "--allow-known"])


def test_a_crash_before_the_last_start_is_not_the_last_deaths(tmp_path):
    """A server that crashed, was started again and then died without a report: the
    earlier report is not the last run's, so no known bug and no signature."""
    from lib.hunt.crashreport import crash_headline
    suite = _suite(tmp_path, "MDEV-1 open 're:btr0cur\\.cc'\n")
    restarted = (_log("crash_innodb.log")
                 + "2025-11-21 11:05:00 0 [Note] Starting MariaDB 10.11.19-MariaDB as process 7\n"
                 + "2025-11-21 11:05:01 0 [Note] InnoDB: Completed initialization of buffer pool\n")
    assert KnownFailures().judge(suite, [_Dead("s0", restarted)]).known == ""
    assert crash_headline(restarted) == ""
    assert crash_headline(restarted + _log("crash_innodb.log")).startswith("crash signature ")
