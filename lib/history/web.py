"""The cross-reference page (Flask and Jinja2 templates): the search, a test's page, a
run's page (with the findings its hunt wrote), the runs, the flaky and slowest
tables, the sweeps' plots, the hunts' findings (``/findings``: one row per signature
across runs and machines; ``/finding?signature=``: its timeline, lib/history/findings.py)
and the replayed bugs (``/bugs``, ``/bug?name=MDEV-12345``: lib/history/replays.py).

Each page is a function from a connection and its parameters to a template's values
(``*_page``), rendered by a Flask route (``kewpie history serve``, lib/history/serve.py)
or written to a file (``kewpie history html``, lib/history/export.py).  :class:`Links`
makes the pages' links for either: the server's paths, or relative file names.  The
search is a plain GET form: it works with JavaScript off, and no page has any script.
A link to evidence that is no longer on disk (kewpie keeps the evidence of the last
runs only: lib/run/evidence.py) is no link but a mark, ``(pruned)`` (:func:`pruned`).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Mapping
from urllib.parse import quote, urlencode

from flask import Flask, Response, abort, render_template, request
from sqlalchemy.engine import Connection, Engine

from .errors import HistoryUsageError
from .whereelse import machine, result_detail
from .findings import FindingFilter, finding_detail, run_findings, search_findings
from .patterns import parse_when
from .records import evidence_gone, headline
from .replays import bug_history, find_bugs
from .queries import (STATUS_CHOICES, SearchFilter, Window, flaky, recent_runs, run_detail,
                      search, slowest, test_records, timeline)
from .svgplot import Series, line_plot, strip, time_plot
from .sweeps import StoredSweep, SweepStore

SAFE_NAME = re.compile(r"^[A-Za-z0-9._-]{1,120}$")
PAGES = ("index", "runs", "flaky", "slowest", "sweeps", "findings", "bugs")
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
STRIP_LENGTH = 60


def slug(name: str) -> str:
    """A file name for a test's page: the name when it is safe, else a cleaned one plus
    a hash (names differ only in unsafe characters stay apart)."""
    if SAFE_NAME.match(name):
        return name
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:80].strip("_.") or "test"
    return f"{clean}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


@dataclass
class Links:
    """The pages' links: the server's paths (static=False) or a static copy's relative
    file names, from a page depth folders below the copy's top."""

    static: bool = False
    depth: int = 0

    @property
    def prefix(self) -> str:
        """From this page to the top."""
        return "../" * self.depth if self.static else "/"

    def page(self, name: str) -> str:
        """One of PAGES."""
        if self.static:
            return f"{self.prefix}{name}.html"
        return "/" if name == "index" else f"/{name}"

    def test(self, name: str) -> str:
        """A test's page."""
        if self.static:
            return f"{self.prefix}tests/{quote(slug(name))}.html"
        return "/test?" + urlencode({"name": name})

    def result(self, result_id: int) -> str:
        """A result's page: its whole failure and where else (lib/history/whereelse.py)."""
        return f"{self.prefix}results/{result_id}.html" if self.static else f"/result/{result_id}"

    def run(self, run_id: int) -> str:
        """A run's page."""
        return f"{self.prefix}runs/{run_id}.html" if self.static else f"/run/{run_id}"

    def bug(self, name: str) -> str:
        """A replayed bug's page (lib/history/replays.py)."""
        if self.static:
            return f"{self.prefix}bugs/{quote(slug(name))}.html"
        return "/bug?" + urlencode({"name": name})

    def finding(self, signature: str) -> str:
        """A finding's page (lib/history/findings.py)."""
        if self.static:
            return f"{self.prefix}findings/{quote(slug(signature))}.html"
        return "/finding?" + urlencode({"signature": signature})

    def sweep(self, sweep_id: int) -> str:
        """A sweep's page."""
        return f"{self.prefix}sweeps/{sweep_id}.html" if self.static else f"/sweep/{sweep_id}"

    def search(self, params: Mapping[str, Any]) -> str:
        """The search with these parameters ('' in a static copy: it has no search)."""
        if self.static:
            return ""
        return "/?" + urlencode({k: v for k, v in params.items() if v not in ("", None)})

    @staticmethod
    def evidence(where: str) -> str:
        """A result's evidence: its URL, or the file:// URL of its folder."""
        if not where:
            return ""
        return where if "://" in where else "file://" + quote(where)


def search_filter(args: Mapping[str, str]) -> SearchFilter:
    """The search form's parameters (HistoryUsageError for a bad date or pattern)."""
    return SearchFilter(test=args.get("test", ""), failure=args.get("failure", ""),
                        branch=args.get("branch", ""), tree=args.get("tree", ""),
                        platform=args.get("platform", ""), signature=args.get("signature", ""),
                        status=args.get("status", "failing") or "failing",
                        since=parse_when(args.get("since", "")),
                        until=parse_when(args.get("until", "")),
                        limit=_int(args.get("limit", ""), 50), offset=_int(args.get("offset", ""), 0))


def _int(text: str, fallback: int) -> int:
    try:
        return int(text)
    except ValueError:
        return fallback


def index_page(conn: Connection, args: Mapping[str, str]) -> dict[str, Any]:
    """The search form and its results (recent failures when nothing is asked)."""
    form = {k: args.get(k, "") for k in ("test", "failure", "branch", "tree", "platform",
                                         "signature", "since", "until")}
    form["status"] = args.get("status", "failing") or "failing"
    error = ""
    try:
        f = search_filter(args)
        rows = search(conn, f)
    except HistoryUsageError as exc:
        f, rows, error = SearchFilter(), [], str(exc)
    older = dict(form, offset=f.offset + f.limit, limit=f.limit) if len(rows) == f.limit else None
    return {"form": form, "rows": rows, "error": error, "filter": f, "older": older,
            "statuses": STATUS_CHOICES, "title": "Search"}


def test_page(conn: Connection, name: str) -> dict[str, Any] | None:
    """A test's strip of its last results, its duration plot, its record, its results."""
    rows = timeline(conn, name, STRIP_LENGTH)
    if not rows:
        return None
    ordered = list(reversed(rows))
    cells = strip([(r.status, f"{r.finished_at:%Y-%m-%d %H:%M} {r.status} "
                              f"{r.duration_ms / 1000:.1f}s run #{r.run_id}"
                              + (f" [{r.combination}]" if r.combination else ""), r.run_id)
                   for r in ordered])
    timed = [(r.finished_at, float(r.duration_ms)) for r in ordered
             if r.status in ("pass", "flaky", "fail", "timeout")]
    plot = time_plot(timed, name, f"{name}: duration of its last {len(timed)} run(s)")
    records = test_records(conn, Window(runs=STRIP_LENGTH * 4), only_failing=False, tests=[name])
    return {"name": name, "rows": rows, "cells": cells, "plot": plot, "records": records,
            "title": name}


def run_page(conn: Connection, run_id: int) -> dict[str, Any] | None:
    """A run's facts and results."""
    run, rows = run_detail(conn, run_id)
    if run is None:
        return None
    return {"run": run, "rows": rows, "findings": run_findings(conn, run_id),
            "title": f"Run #{run_id}"}


def result_page(conn: Connection, result_id: int) -> dict[str, Any] | None:
    """A result whole: its failure text, its run's revision, job, build and machine, its
    evidence, and where else the same test failed with the same text."""
    found = result_detail(conn, result_id)
    if found is None:
        return None
    row, run, elsewhere = found
    return {"row": row, "run": run, "machine": machine(run.host, json.dumps(run.labels)),
            "elsewhere": elsewhere, "title": f"{row.test} in run #{row.run_id}"}


def runs_page(conn: Connection, args: Mapping[str, str]) -> dict[str, Any]:
    """The latest runs."""
    return {"runs": recent_runs(conn, _int(args.get("limit", ""), 50), args.get("branch", ""),
                                args.get("job", "")), "title": "Runs"}


def _window(args: Mapping[str, str]) -> Window:
    days = args.get("days", "")
    try:
        day_count = max(0.0, float(days)) if days else 0.0
    except ValueError:
        day_count = 0.0
    return Window(runs=max(1, _int(args.get("runs", ""), 50)), days=day_count,
                  branch=args.get("branch", ""), job=args.get("job", ""))


def flaky_page(conn: Connection, args: Mapping[str, str]) -> dict[str, Any]:
    """The flaky table over a window."""
    w = _window(args)
    return {"rows": flaky(conn, w), "window": w, "title": "Flaky tests"}


def slowest_page(conn: Connection, args: Mapping[str, str]) -> dict[str, Any]:
    """The slowest tests, their trend and a plot of the slowest ones."""
    w = _window(args)
    rows = slowest(conn, w, 20)
    plot = line_plot([Series(r.test, [(float(i), float(ms)) for i, (_, ms) in enumerate(r.points)])
                      for r in rows[:5]], "The 5 slowest tests, run after run", "run",
                     "ms") if rows else None
    return {"rows": rows, "window": w, "plot": plot, "title": "Slowest tests"}


FINDING_FORM = ("signature", "kind", "bug", "tree", "machine", "since", "until")


def findings_page(conn: Connection, args: Mapping[str, str]) -> dict[str, Any]:
    """The hunts' findings, one row per signature across runs and machines, searched by
    signature (id, text or UniqueID), kind, bug, tree, machine and time."""
    form = {k: args.get(k, "") for k in FINDING_FORM}
    error = ""
    try:
        f = FindingFilter(signature=form["signature"], kind=form["kind"], bug=form["bug"],
                          tree=form["tree"], machine=form["machine"],
                          since=parse_when(form["since"]), until=parse_when(form["until"]),
                          limit=_int(args.get("limit", ""), 100))
        rows = search_findings(conn, f)
    except HistoryUsageError as exc:
        rows, error = [], str(exc)
    return {"form": form, "rows": rows, "error": error, "title": "Findings"}


def finding_page(conn: Connection, signature: str) -> dict[str, Any] | None:
    """One finding: its facts, reduction, and its sightings oldest first (the timeline)."""
    row, seen = finding_detail(conn, signature)
    if row is None:
        return None
    return {"finding": row, "sightings": seen, "title": f"Finding {row.signature}"}


def bugs_page(conn: Connection, args: Mapping[str, str]) -> dict[str, Any]:
    """The replayed bugs, searched by bug id, signature or UniqueID (``q``)."""
    query, error = args.get("q", ""), ""
    try:
        bugs = find_bugs(conn, query)
    except HistoryUsageError as exc:
        bugs, error = [], str(exc)
    trees = sorted({t for b in bugs for t in b.trees})
    return {"bugs": bugs, "trees": trees, "query": query, "error": error,
            "title": "Bugs"}


def bug_page(conn: Connection, name: str) -> dict[str, Any] | None:
    """One replayed bug: its status per tree and per run."""
    bug = bug_history(conn, name)
    return None if bug is None else {"bug": bug, "title": bug.name}


def sweep_plots(sweep: StoredSweep) -> list[Any]:
    """A sweep's plots: median tps against threads (one line per version and value),
    and the p95 latency likewise."""
    plots = []
    for field_name, what in (("tps", "transactions/s (median)"), ("lat_pct", "latency ms (pct)")):
        groups: dict[str, dict[int, list[float]]] = {}
        for run in sweep.runs:
            if run.get(field_name) is None or run.get("threads") is None:
                continue
            variable = sweep.spec.get("variable")
            key = str(run.get("version") or "")
            if variable:
                key = f"{key} {variable}={run.get('value')}".strip()
            groups.setdefault(key, {}).setdefault(int(run["threads"]), []).append(float(run[field_name]))
        series = [Series(key, [(float(t), sorted(v)[len(v) // 2]) for t, v in sorted(by.items())])
                  for key, by in sorted(groups.items())]
        threads = sorted({int(r["threads"]) for r in sweep.runs if r.get("threads")})
        plots.append(line_plot(series, f"{sweep.name}: {what}", "client threads", what,
                               x_labels={float(t): str(t) for t in threads}, log2_x=True))
    return plots


def sweeps_page(engine: Engine) -> dict[str, Any]:
    """The latest sweeps with their plots."""
    sweeps = SweepStore(engine).recent(20)
    return {"sweeps": [(s, sweep_plots(s)) for s in sweeps], "title": "Sweeps"}


def sweep_page(engine: Engine, sweep_id: int) -> dict[str, Any] | None:
    """One sweep: its context, plots and runs."""
    try:
        sweep = SweepStore(engine).load(sweep_id)
    except Exception:  # noqa: BLE001 - no such sweep
        return None
    return {"sweep": sweep, "plots": sweep_plots(sweep), "title": f"Sweep #{sweep_id}"}


def fmt_time(at: datetime | None) -> str:
    """A stored time (UTC) for the page."""
    return at.strftime("%Y-%m-%d %H:%M") if at else "-"


def first_line(text: str) -> str:
    """A failure's line that says what went wrong (its headline)."""
    return headline(text or "")


def pruned(where: object) -> bool:
    """The templates' test ``is pruned``: evidence (a path) that is no longer on disk
    (lib/history/records.py); a URL never is."""
    return isinstance(where, str) and evidence_gone(where)


Render = Callable[[str, dict[str, Any] | None], str]  # a template with its values: the page


def create_app(engine: Engine) -> Flask:
    """The Flask application over a store's engine (routes are GET only)."""
    app = Flask(__name__, template_folder=TEMPLATES)
    app.jinja_env.filters["when"] = fmt_time
    app.jinja_env.filters["first_line"] = first_line
    app.jinja_env.tests["pruned"] = pruned
    link = Links(static=False)

    def render(template: str, values: dict[str, Any] | None) -> str:
        """A template with the links, or 404 when there is nothing to show."""
        if values is None:
            abort(404)
        return render_template(template, link=link, static=False, **values)

    _add_result_routes(app, engine, render)
    _add_sweep_routes(app, engine, render)
    _add_bug_routes(app, engine, render)
    _add_finding_routes(app, engine, render)
    app.after_request(_headers)
    return app



def _add_result_routes(app: Flask, engine: Engine, render: Render) -> None:
    """The pages of tests and runs: the search, a test, a run, the latest runs, the
    flaky and the slowest tests."""
    @app.get("/")
    def index() -> str:
        """The search."""
        with engine.connect() as conn:
            return render("search.html", index_page(conn, request.args))

    @app.get("/test")
    def test() -> str:
        """A test's page."""
        with engine.connect() as conn:
            return render("test.html", test_page(conn, request.args.get("name", "")))

    @app.get("/run/<int:run_id>")
    def run(run_id: int) -> str:
        """A run's page."""
        with engine.connect() as conn:
            return render("run.html", run_page(conn, run_id))

    @app.get("/result/<int:result_id>")
    def result(result_id: int) -> str:
        """A result's page."""
        with engine.connect() as conn:
            return render("result.html", result_page(conn, result_id))

    @app.get("/runs")
    def runs() -> str:
        """The latest runs."""
        with engine.connect() as conn:
            return render("runs.html", runs_page(conn, request.args))

    @app.get("/flaky")
    def flaky_tests() -> str:
        """The flaky table."""
        with engine.connect() as conn:
            return render("flaky.html", flaky_page(conn, request.args))

    @app.get("/slowest")
    def slowest_tests() -> str:
        """The slowest tests."""
        with engine.connect() as conn:
            return render("slowest.html", slowest_page(conn, request.args))


def _add_bug_routes(app: Flask, engine: Engine, render: Render) -> None:
    """The pages of replayed bugs: their list and a bug."""
    @app.get("/bugs")
    def bugs() -> str:
        """The replayed bugs."""
        with engine.connect() as conn:
            return render("bugs.html", bugs_page(conn, request.args))

    @app.get("/bug")
    def bug() -> str:
        """A replayed bug's page."""
        with engine.connect() as conn:
            return render("bug.html", bug_page(conn, request.args.get("name", "")))


def _add_finding_routes(app: Flask, engine: Engine, render: Render) -> None:
    """The pages of the hunts' findings: their list and a finding."""
    @app.get("/findings")
    def findings() -> str:
        """The findings."""
        with engine.connect() as conn:
            return render("findings.html", findings_page(conn, request.args))

    @app.get("/finding")
    def finding() -> str:
        """A finding's page."""
        with engine.connect() as conn:
            return render("finding.html", finding_page(conn, request.args.get("signature", "")))


def _add_sweep_routes(app: Flask, engine: Engine, render: Render) -> None:
    """The pages of sweeps: their list and a sweep."""
    @app.get("/sweeps")
    def sweeps() -> str:
        """The sweeps."""
        return render("sweeps.html", sweeps_page(engine))

    @app.get("/sweep/<int:sweep_id>")
    def sweep(sweep_id: int) -> str:
        """A sweep's page."""
        return render("sweep.html", sweep_page(engine, sweep_id))


def _headers(response: Response) -> Response:
    """No scripts, no sniffing: the page is data only."""
    response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
