"""The history's page without a browser (Flask's test client), its static copy, its SVG
plots, and ``kewpie history``'s commands and the run's history options.

Covers: lib/history/web.py, lib/history/export.py, lib/history/svgplot.py,
lib/history/commands.py, lib/history/templates/, lib/cli.py (history options)
"""
from __future__ import annotations

import io
import logging
import os
import re
from datetime import timedelta

import pytest

from lib.history.commands import Defaults, build_parser, run_command
from lib.history.records import RunInfo, new_run_uuid, utcnow
from lib.history.store import open_engine
from lib.history.svgplot import Series, line_plot, nice_ticks, strip
from lib.history.target import StoreTarget
from lib.history.web import Links, create_app, slug
from lib.history.writer import HistoryWriter


@pytest.fixture
def store(tmp_path) -> StoreTarget:
    """Six runs: a flake whose failure text has a timeout, and a steady test."""
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    start = utcnow() - timedelta(days=6)
    for n in range(6):
        at = start + timedelta(days=n)
        writer = HistoryWriter(target, RunInfo(new_run_uuid(), started_at=at, branch="main",
                                               tree_version="10.11.19", mode="native"),
                               str(tmp_path / "spool"), logging.getLogger("t"), background=False)
        writer.record_result("main.flake <odd>", "fail" if n % 2 else "pass", 500 + n,
                             failure="AssertionError: <b>timeout</b>" if n % 2 else "",
                             evidence="/wd/failed/main.flake" if n % 2 else "", finished_at=at)
        writer.record_result("main.steady", "pass", 1000 + 10 * n, finished_at=at)
        writer.close(0)
    return target


def test_pages_answer_and_escape(store):
    engine = open_engine(store)
    client = create_app(engine).test_client()
    page = client.get("/", query_string={"failure": "*timeout*"})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert html.count('<tr class="result">') == 3
    assert "&lt;b&gt;timeout&lt;/b&gt;" in html and "<b>timeout</b>" not in html
    assert "<script" not in html and 'method="get"' in html
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    test = client.get("/test", query_string={"name": "main.flake <odd>"}).get_data(as_text=True)
    assert test.count('class="cell"') == 6 and 'id="duration-plot"' in test
    assert client.get("/test", query_string={"name": "nope"}).status_code == 404
    for path in ("/runs", "/flaky", "/slowest", "/sweeps", "/run/1"):
        assert client.get(path).status_code == 200, path
    assert client.get("/run/999").status_code == 404
    bad = client.get("/", query_string={"since": "yesterday"}).get_data(as_text=True)
    assert 'class="error"' in bad
    older = client.get("/", query_string={"status": "all", "limit": "5"}).get_data(as_text=True)
    assert 'id="older"' in older
    assert client.post("/").status_code == 405
    engine.dispose()


def test_static_copy_links_to_files_it_wrote(store, tmp_path):
    from lib.history.export import export
    out = str(tmp_path / "copy")
    engine = open_engine(store)
    written = export(engine, out)
    assert written >= 8
    for page in ("index.html", "flaky.html", "runs.html", "slowest.html", "sweeps.html"):
        html = open(os.path.join(out, page)).read()
        for href in re.findall(r'href="([^"#:]+)"', html):
            assert os.path.exists(os.path.join(out, href.replace("%20", " "))), (page, href)
    assert os.path.exists(os.path.join(out, "tests", slug("main.flake <odd>") + ".html"))
    with pytest.raises(Exception, match="new or empty directory"):
        export(engine, out)
    engine.dispose()


def test_evidence_no_longer_on_disk_is_marked_pruned(tmp_path):
    """Evidence older than the last runs' is pruned from disk (lib/run/evidence.py): its
    result says ``(pruned)`` with no link, on the search, the result's page and the static
    copy; evidence still on disk and a URL (a CI artifact) stay links."""
    from urllib.parse import quote

    from lib.history.export import export
    target = StoreTarget(sqlite_path=str(tmp_path / "h.sqlite"))
    gone = str(tmp_path / "wd" / "failed" / "run1" / "main.t")
    kept = tmp_path / "wd" / "failed" / "run2" / "main.t"
    kept.mkdir(parents=True)
    url = "https://ci.example/job/7/artifact/failed/main.t/"
    for where in (gone, str(kept), url):
        writer = HistoryWriter(target, RunInfo(new_run_uuid(), mode="native"),
                               str(tmp_path / "spool"), logging.getLogger("t"), background=False)
        writer.record_result("main.t", "fail", 100, failure="AssertionError: no", evidence=where)
        writer.close(1)
    engine = open_engine(target)
    client = create_app(engine).test_client()
    html = client.get("/", query_string={"test": "main.t"}).get_data(as_text=True)
    assert html.count('<tr class="result">') == 3
    assert f'title="{gone}: pruned, no longer on disk">evidence (pruned)</span>' in html
    assert f'href="file://{quote(gone)}"' not in html
    assert f'href="file://{quote(str(kept))}"' in html and f'href="{url}"' in html
    result = client.get("/result/1").get_data(as_text=True)
    assert f">{gone} (pruned)</span>" in result and f'href="file://{quote(gone)}"' not in result
    assert f'href="file://{quote(str(kept))}"' in client.get("/result/2").get_data(as_text=True)
    export(engine, str(tmp_path / "copy"))
    static = open(tmp_path / "copy" / "index.html").read()
    assert static.count("evidence (pruned)") == 1 and f'href="{url}"' in static
    engine.dispose()


def test_links_and_slugs():
    assert Links().test("main.x y") == "/test?name=main.x+y"
    assert Links(static=True, depth=1).run(3) == "../runs/3.html"
    assert Links().evidence("/a b") == "file:///a%20b" and Links().evidence("https://x/") == "https://x/"
    assert slug("main.ok_1") == "main.ok_1"
    assert slug("a/b") != slug("a b") and "/" not in slug("a/b")


def test_plot_geometry():
    assert nice_ticks(0, 1870) == [0, 500, 1000, 1500, 2000]
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    plot = line_plot([Series("a", [(1, 10), (2, 20), (4, 40)])], log2_x=True,
                     x_labels={1.0: "1", 2.0: "2", 4.0: "4"})
    xs = [x for x, _, _ in plot.lines[0].markers]
    assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1])  # log2 spacing
    ys = [y for _, y, _ in plot.lines[0].markers]
    assert ys[0] > ys[1] > ys[2]  # up is more
    assert line_plot([]).empty
    cells = strip([("pass", "t", 1), ("fail", "t", 2)])
    assert [c.color for c in cells] == ["#2e9d4a", "#d62728"] and cells[1].x == 16


def _command(store: StoreTarget, *argv: str) -> str:
    args = build_parser().parse_args(list(argv) + [f"--history={store.sqlite_path}"])
    out = io.StringIO()
    assert run_command(args, Defaults(workdir="/nonexistent"), out) == 0
    return out.getvalue()


def test_history_commands(store, tmp_path):
    flaky = _command(store, "flaky")
    assert re.search(r"main\.flake <odd>\s+6\s+3/6 \(50\.0%\)", flaky), flaky
    assert "AssertionError: <b>timeout</b>" in flaky
    found = _command(store, "failures", "--failure=*timeout*", "--branch=main")
    assert found.count("main.flake <odd>") >= 3 and "evidence /wd/failed/main.flake" in found
    assert "oldest to newest: .F.F.F" in _command(store, "test", "main.flake <odd>")
    unstable = _command(store, "unstable", "--min-rate=0.4", "--format=disabled")
    assert "# main/disabled.txt" in unstable and "flake <odd> : failed 3/6" in unstable
    assert "main.steady" in _command(store, "slowest")
    assert _command(store, "runs").count(" native ") == 6
    assert "branch: main" in _command(store, "run", "1")
    assert "wrote" in _command(store, "html", str(tmp_path / "copy"))


def test_run_options_for_the_history(tmp_path):
    from lib.cli import config_from_args, main
    config = config_from_args(["--label=branch=x", "--label=nightly", "--label=node=a1",
                               "--history-dsn=mysql://u@h:1/db", "--no-config", "--mode=sweep",
                               "--sweep-file=nightly.json"])
    assert config.history.labels == (("branch", "x"), ("node", "a1"))
    assert config.mode_section.label == "nightly" and config.history.dsn == "mysql://u@h:1/db"
    assert not config_from_args(["--history=off", "--no-config"]).history.record
    assert config_from_args(["--no-config"]).history.record and config_from_args(["--no-config"]).history.path == ""
    old = config_from_args(["--results-db-dsn=mysql://u@h:1/old", "--no-config"])
    assert old.history.dsn == "mysql://u@h:1/old"
    for argv in (["--label=a", "--label=b"], ["--history-dsn=http://x/y"],
                 ["--xml-report=r.xml"], ["--label=bad key=v"]):
        assert main([*argv, "--no-config", f"--workdir={tmp_path}/wd"]) == 2, argv
    assert main(["history", "flaky", f"--workdir={tmp_path}/none"]) == 2
