"""A failure a person can act on: a result's page with its whole failure text, revision,
job and build, worker and "where else" (the same test failing with the same text in
other runs, branches, trees and workers, first and last seen), and --evidence-url
recorded instead of a local path.

Covers: lib/history/whereelse.py, lib/history/records.py, lib/history/web.py, lib/history/export.py, lib/run/recording.py, lib/cli.py (--evidence-url)
"""
from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from lib.errors import KewpieError
from lib.history.records import RunInfo, evidence_link, new_run_uuid, utcnow
from lib.history.store import open_engine
from lib.history.target import StoreTarget
from lib.history.web import create_app
from lib.history.whereelse import result_detail
from lib.history.writer import HistoryWriter

TEXT = ("Traceback (most recent call last):\n  File \"t.py\", line 9, in test_x\n"
        "AssertionError: replica behind by 3 rows\n" + "\n".join(f"line {n}" for n in range(6)))


@pytest.fixture
def store(tmp_path) -> StoreTarget:
    """The same failure on two branches, trees and workers; another text once; a pass."""
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    start = utcnow() - timedelta(days=2)
    for n, (branch, tree, node, text) in enumerate([
            ("main", "10.11.18", "worker-1", TEXT), ("feature", "10.11.19", "worker-2", TEXT),
            ("main", "10.11.19", "worker-1", "AssertionError: other"),
            ("main", "10.11.19", "worker-2", "")]):
        at = start + timedelta(hours=n)
        run = RunInfo(new_run_uuid(), started_at=at, branch=branch, tree_version=tree,
                      revision=f"abc{n}", job="kewpie-shard", build=n, host="box",
                      labels={"node": node})
        writer = HistoryWriter(target, run, str(tmp_path / "spool"), logging.getLogger("t"),
                               background=False)
        writer.record_result("rpl.catchup", "fail" if text else "pass", 100, failure=text,
                             finished_at=at)
        writer.close(1)
    return target


def test_where_else_the_same_test_failed_with_the_same_text(store):
    engine = open_engine(store)
    with engine.connect() as conn:
        found = result_detail(conn, 2)
        assert found is not None
        row, run, elsewhere = found
        assert row.failure == TEXT and run.revision == "abc1" and run.labels["node"] == "worker-2"
        assert (elsewhere.results, elsewhere.runs) == (2, 2)
        assert elsewhere.branches == ["feature", "main"] and elsewhere.trees == ["10.11.18", "10.11.19"]
        assert elsewhere.machines == ["worker-1", "worker-2"]
        assert elsewhere.first_seen < elsewhere.last_seen
        assert result_detail(conn, 99) is None
        passed = result_detail(conn, 4)
        assert passed is not None and passed[2].results == 0
    engine.dispose()


def test_the_result_page_shows_the_whole_failure_and_where_else(store, tmp_path):
    engine = open_engine(store)
    client = create_app(engine).test_client()
    html = client.get("/result/1").get_data(as_text=True)
    assert "line 5" in html and 'id="failure-text"' in html          # the whole text, inline
    assert "main abc0" in html and "kewpie-shard #0" in html and "worker-1" in html
    assert "2 time(s) in 2 run(s)" in html and "worker-1, worker-2" in html
    assert client.get("/result/99").status_code == 404
    assert 'href="/result/1"' in client.get("/run/1").get_data(as_text=True)
    engine.dispose()
    from lib.history.export import export
    engine = open_engine(store)
    export(engine, str(tmp_path / "copy"))
    engine.dispose()
    page = (tmp_path / "copy" / "results" / "1.html").read_text()
    assert "line 5" in page and 'href="../runs/1.html"' in page


def test_evidence_is_recorded_as_the_evidence_url_when_given(tmp_path):
    workdir = tmp_path / "wd"
    (workdir / "failed" / "main.t").mkdir(parents=True)
    path = str(workdir / "failed" / "main.t")
    assert evidence_link(path, {}, "https://ci.example/art/7/workdir", str(workdir)) == \
        "https://ci.example/art/7/workdir/failed/main.t"
    assert evidence_link("/elsewhere/x", {}, "https://ci.example/a", str(workdir)) == "/elsewhere/x"
    assert evidence_link(path, {}) == path
    from lib.cli import _evidence_url
    assert _evidence_url("https://ci.example/a/") == "https://ci.example/a"
    with pytest.raises(KewpieError, match="--evidence-url"):
        _evidence_url("ci.example/a")
