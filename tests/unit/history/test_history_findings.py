"""The hunts' findings in the store over real SQLite files: schema version 4 (upgraded
from versions 1, 2 and 3), sightings counted once per signature across runs and
machines (and once when a spool is sent again), the search by signature, UniqueID,
kind, bug, tree, machine and time, ``kewpie history findings``/``finding``, the
Findings page and a run's findings, the reduction's claim (one owner per signature),
``history failures`` matching any line of a failure's text, and the read back of a row
another writer made (a locking read on a server: tests/integration/test_history_races.py
makes those races happen on MariaDB).

Covers: lib/history/findings.py, lib/history/schema.py, lib/history/migrations.py,
lib/history/writes.py, lib/history/writer.py, lib/history/spool.py,
lib/history/records.py, lib/history/patterns.py, lib/history/commands.py,
lib/history/web.py, lib/history/export.py, lib/history/templates/
"""
from __future__ import annotations

import io
import logging
import sqlite3
from datetime import timedelta

import pytest

from lib.history.commands import Defaults, build_parser, run_command
from lib.history.findings import (FindingFilter, claim_reduction, finding_detail,
                                  finish_reduction, run_findings, search_findings)
from lib.history.migrations import current_version
from lib.history.queries import SearchFilter, search
from lib.history.records import FindingRecord, RunInfo, new_run_uuid, utcnow
from lib.history.schema import SCHEMA_VERSION
from lib.history.spool import Spool, spool_dir
from lib.history.store import open_engine
from lib.history.target import StoreTarget
from lib.history.web import create_app
from lib.history.writer import HistoryWriter

LOG = logging.getLogger("test-findings")
SIG = "0123456789ab"
UID = "SIGSEGV|kw_planted_crash|Item_func_udf_int::val_int"


def _finding(**values: object) -> FindingRecord:
    fields: dict[str, object] = dict(signature=SIG, kind="crash", oracle="crash",
                                     signature_text="crash|SIGSEGV|kw_planted_crash",
                                     unique_id=UID, title="SIGSEGV in kw_planted_crash",
                                     trial=1, seed=7, folder="/wd/hunt/x/findings/t0001-0",
                                     summary="signal 11")
    fields.update(values)
    return FindingRecord(**fields)  # type: ignore[arg-type]


def _hunt(target: StoreTarget, tmp_path, node: str, tree: str, *found: FindingRecord,
          at=None) -> HistoryWriter:
    run = RunInfo(new_run_uuid(), host="box", mode="hunt", tree_version=tree,
                  labels={"node": node}, **({"started_at": at} if at else {}))
    writer = HistoryWriter(target, run, spool_dir(str(tmp_path), target), LOG, background=False)
    writer.record_result("hunt.planted", "fail", 900, failure="crash " + SIG,
                         signature=SIG, evidence="/wd/hunt/x/findings/t0001-0")
    for record in found:
        writer.record_finding(record)
    writer.close(1)
    return writer


@pytest.fixture
def fleet(tmp_path) -> StoreTarget:
    """Two workers that found the same crash, one of them twice, and another finding."""
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    old = utcnow() - timedelta(days=3)
    _hunt(target, tmp_path, "worker-a", "10.11.18", _finding(found_at=old), at=old)
    _hunt(target, tmp_path, "worker-b", "10.11.19", _finding(seed=8), _finding(seed=9, trial=2),
          _finding(signature="fedcba987654", kind="hang", oracle="hang", unique_id="",
                   signature_text="hang|select",
                   title="server hung", tag="known", bug_id="MDEV-1"))
    return target


def test_one_row_per_signature_counted_across_runs_and_machines(fleet):
    engine = open_engine(fleet)
    with engine.connect() as conn:
        rows = search_findings(conn, FindingFilter())
        crash = next(r for r in rows if r.signature == SIG)
        assert (crash.count, crash.machines, crash.trees) == (
            3, ["worker-a", "worker-b"], ["10.11.18", "10.11.19"])
        assert crash.unique_id == UID and crash.first_seen < crash.last_seen
        assert len(crash.runs) == 2
        assert [r.signature for r in rows] == ["fedcba987654", SIG] or \
            [r.signature for r in rows] == [SIG, "fedcba987654"]
        row, seen = finding_detail(conn, SIG)
        assert row is not None and [s.seed for s in seen] == [7, 8, 9]  # oldest first
        assert [s.machine for s in seen] == ["worker-a", "worker-b", "worker-b"]
        assert {s.signature for s in run_findings(conn, seen[-1].run_id)} == {
            SIG, "fedcba987654"}
    engine.dispose()


@pytest.mark.parametrize("asked, expected", [
    (dict(signature=SIG), {SIG}), (dict(signature="*kw_planted*"), {SIG}),
    (dict(signature="SIGSEGV|kw_planted_crash|*"), {SIG}), (dict(kind="hang"), {"fedcba987654"}),
    (dict(bug="MDEV-*"), {"fedcba987654"}), (dict(tree="10.11.18"), {SIG}),
    (dict(machine="worker-b"), {SIG, "fedcba987654"}), (dict(machine="nope"), set()),
])
def test_the_search_by_signature_kind_bug_tree_and_machine(fleet, asked, expected):
    engine = open_engine(fleet)
    with engine.connect() as conn:
        assert {r.signature for r in search_findings(conn, FindingFilter(**asked))} == expected
    engine.dispose()


def test_the_search_by_time(fleet):
    engine = open_engine(fleet)
    with engine.connect() as conn:
        recent = search_findings(conn, FindingFilter(since=utcnow() - timedelta(days=1)))
        early = search_findings(conn, FindingFilter(until=utcnow() - timedelta(days=1)))
    assert {r.signature for r in recent} == {SIG, "fedcba987654"}
    assert {r.signature for r in early} == {SIG}
    engine.dispose()


def test_a_row_another_writer_made_is_read_back_with_a_locking_read():
    from sqlalchemy import select
    from sqlalchemy.dialects import mysql, sqlite

    from lib.history.schema import findings
    from lib.history.writes import committed
    query = committed(select(findings.c.id).where(findings.c.signature == SIG))
    assert str(query.compile(dialect=mysql.dialect())).endswith("LOCK IN SHARE MODE")
    assert "FOR" not in str(query.compile(dialect=sqlite.dialect())).split("WHERE")[-1]


def test_a_spool_sent_again_counts_each_sighting_once(tmp_path):
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    run = RunInfo(new_run_uuid(), host="box", mode="hunt")
    spool = Spool(spool_dir(str(tmp_path), target), run)
    for seq in (1, 2):
        record = _finding(seed=seq)
        record.seq = seq
        spool.add(record)
    spool.end(utcnow(), 1)
    copy = spool.path + ".copy"
    with open(spool.path) as src, open(copy, "w") as dst:
        dst.write(src.read())
    _hunt(target, tmp_path, "w", "10.11.19")            # sends the spool
    import os
    os.rename(copy, spool.path)
    _hunt(target, tmp_path, "w", "10.11.19")            # sends it again: nothing new
    engine = open_engine(target)
    with engine.connect() as conn:
        row, seen = finding_detail(conn, SIG)
    assert row is not None and row.count == 2 and len(seen) == 2
    engine.dispose()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_older_store_gains_the_findings_tables(tmp_path, version):
    path = str(tmp_path / "h.sqlite")
    _hunt(StoreTarget(sqlite_path=path), tmp_path, "w", "10.11.19")
    with sqlite3.connect(path) as db:  # back to the older version
        db.execute("DROP TABLE history_sightings")
        db.execute("DROP TABLE history_findings")
        db.execute(f"UPDATE history_meta SET value = '{version}' WHERE name = 'schema_version'")
    _hunt(StoreTarget(sqlite_path=path), tmp_path, "w", "10.11.19", _finding())
    engine = open_engine(StoreTarget(sqlite_path=path))
    with engine.connect() as conn:
        assert current_version(conn) == SCHEMA_VERSION == 4
        assert [r.count for r in search_findings(conn, FindingFilter())] == [1]
        assert len(search(conn, SearchFilter(signature=SIG))) == 2   # both runs' trials kept
    engine.dispose()


def test_a_reduction_is_claimed_once_and_recorded(fleet):
    engine = open_engine(fleet, writer=True)
    with engine.begin() as conn:
        first = claim_reduction(conn, _finding(), "worker-a pid 1")
    with engine.begin() as conn:
        second = claim_reduction(conn, _finding(), "worker-b pid 2")
    assert first.ours and not second.ours
    assert (second.state, second.owner) == ("running", "worker-a pid 1")
    with engine.begin() as conn:
        assert not finish_reduction(conn, SIG, "worker-b pid 2", "done")
        assert finish_reduction(conn, SIG, "worker-a pid 1", "done", "/wd/reduce/t.test",
                                "/wd/reduce/report.txt")
        done = claim_reduction(conn, _finding(), "worker-b pid 2")
        assert not done.ours and done.state == "done" and done.reduced_case == "/wd/reduce/t.test"
        assert claim_reduction(conn, _finding(), "worker-b pid 2", again=True).ours
        # a signature no hunt recorded: its row is made, claimed
        assert claim_reduction(conn, _finding(signature="aaaaaaaaaaaa"), "me").ours
    with engine.begin() as conn:
        assert finish_reduction(conn, SIG, "worker-b pid 2", "failed")
        assert claim_reduction(conn, _finding(), "worker-a pid 3").ours  # failed: free again
    engine.dispose()


def test_failures_are_found_by_any_line_of_their_text(tmp_path):
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    writer = HistoryWriter(target, RunInfo(new_run_uuid()), str(tmp_path / "spool"), LOG,
                           background=False)
    writer.record_result("main.t", "fail", failure="Traceback (most recent call last):\n"
                         "  File \"x.py\", line 3, in test\nAssertionError: 3 != 4\n"
                         "server log: InnoDB: page corrupted")
    writer.close(1)
    engine = open_engine(target)
    with engine.connect() as conn:
        for pattern, hits in (("AssertionError: *", 1), ("AssertionError: 3 != 4", 1),
                              ("server log: *", 1), ("Traceback*", 1), ("*corrupted", 1),
                              ("AssertionError: 5*", 0), ("InnoDB: page*", 0),
                              ("page corrupted", 1)):
            assert len(search(conn, SearchFilter(failure=pattern))) == hits, pattern
    engine.dispose()


def test_the_commands_and_the_pages_show_the_findings(fleet, tmp_path):
    out = io.StringIO()
    args = build_parser().parse_args(["findings", "--history", fleet.sqlite_path,
                                      "--machine", "worker-a"])
    assert run_command(args, Defaults(workdir=str(tmp_path)), out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("LAST SEEN") and SIG in lines[1] and "worker-a,worker-b" in lines[1]
    out = io.StringIO()
    args = build_parser().parse_args(["finding", SIG, "--history", fleet.sqlite_path])
    assert run_command(args, Defaults(workdir=str(tmp_path)), out) == 0
    assert "3 time(s)" in out.getvalue() and UID in out.getvalue()
    engine = open_engine(fleet)
    client = create_app(engine).test_client()
    page = client.get("/findings").get_data(as_text=True)
    assert page.count('<tr class="finding">') == 2 and "worker-a, worker-b" in page
    assert client.get("/findings", query_string={"kind": "hang"}).get_data(
        as_text=True).count('<tr class="finding">') == 1
    one = client.get("/finding", query_string={"signature": SIG}).get_data(as_text=True)
    assert one.count('<tr class="sighting">') == 3 and "10.11.18" in one
    assert client.get("/finding", query_string={"signature": "nope"}).status_code == 404
    run = client.get("/run/2").get_data(as_text=True)
    assert run.count('<tr class="run-finding">') == 3
    engine.dispose()
    from lib.history.export import export
    engine = open_engine(fleet)
    assert export(engine, str(tmp_path / "copy")) > 0
    assert (tmp_path / "copy" / "findings" / f"{SIG}.html").exists()
    assert 'href="findings/' in (tmp_path / "copy" / "findings.html").read_text()
    engine.dispose()
