"""``kewpie history test`` takes the short names the runner takes, and a result's
evidence that was pruned from disk is said so.

Covers: lib/history/queries.py (resolve_test), lib/history/commands.py (test),
lib/history/records.py (evidence_gone)
"""
from __future__ import annotations

import io
import logging

import pytest

from lib.history.commands import Defaults, build_parser as history_parser, run_command
from lib.history.errors import HistoryUsageError
from lib.history.queries import resolve_test, short_name_candidates
from lib.history.records import RunInfo, evidence_gone, new_run_uuid
from lib.history.spool import spool_dir
from lib.history.store import open_engine
from lib.history.target import StoreTarget
from lib.history.writer import HistoryWriter


@pytest.fixture
def store(tmp_path):
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    writer = HistoryWriter(target, RunInfo(new_run_uuid(), mode="native"),
                           spool_dir(str(tmp_path), target), logging.getLogger("t"),
                           background=False)
    for test in ("main.basic_test", "main.crash_test", "other.crash_test", "kw_mtr.plain"):
        writer.record_result(test, "fail", 10, failure="AssertionError: x",
                             evidence=str(tmp_path / "failed" / "gone" / test))
    writer.close(1)
    return target, tmp_path


def test_the_short_forms_of_a_name():
    assert short_name_candidates("main.basic") == ["main.basic", "main.basic_test"]
    assert short_name_candidates("basic_test") == ["basic_test", "%.basic_test"]


def test_short_names_resolve_as_the_runner_reads_them(store):
    target, _ = store
    engine = open_engine(target)
    with engine.connect() as conn:
        assert resolve_test(conn, "main.basic_test") == ["main.basic_test"]
        assert resolve_test(conn, "main.basic") == ["main.basic_test"]
        assert resolve_test(conn, "basic") == ["main.basic_test"]
        assert resolve_test(conn, "plain") == ["kw_mtr.plain"]
        assert resolve_test(conn, "crash") == ["main.crash_test", "other.crash_test"]
        assert resolve_test(conn, "b_sic") == []      # '_' is no wildcard
        assert resolve_test(conn, "nothing") == []
    engine.dispose()


def _command(target: StoreTarget, *argv: str) -> str:
    args = history_parser().parse_args([*argv, f"--history={target.sqlite_path}"])
    out = io.StringIO()
    assert run_command(args, Defaults(workdir=""), out) == 0
    return out.getvalue()


def test_history_test_takes_a_short_name_and_says_pruned_evidence(store):
    target, _ = store
    text = _command(target, "test", "basic")
    assert text.startswith("main.basic_test: last 1 result(s)"), text
    assert "(pruned: no longer on disk)" in text, text
    with pytest.raises(HistoryUsageError, match="names 2 tests in the history: "
                                                "main.crash_test, other.crash_test"):
        _command(target, "test", "crash")


def test_only_a_local_folder_missing_is_gone(tmp_path):
    assert evidence_gone(str(tmp_path / "nope"))
    assert not evidence_gone(str(tmp_path))
    assert not evidence_gone("https://ci.example/job/1/artifact/failed/x")
    assert not evidence_gone("")
