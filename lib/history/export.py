"""``kewpie history html OUT``: a static copy of the page, to archive with a CI build.

The same templates as the server's, with relative links: ``index.html`` (the newest
failures), ``runs.html``, ``flaky.html``, ``slowest.html``, ``sweeps.html``,
``bugs.html`` (the replayed bugs), and the pages of the newest runs, of the tests that
failed or flaked (up to ``max_tests``, worst first), of the replayed bugs and of the
sweeps.  There is no search in a static copy.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from ..errors import UsageError
from ..platform.safewrite import OutputDir
from ..platform.trustedpath import Trust
from .errors import HistoryUsageError
from .queries import SearchFilter, Window, recent_runs, search, test_records
from .schema import results
from .sweeps import SweepStore
from .replays import find_bugs
from .web import (Links, bug_page, bugs_page, create_app, flaky_page, index_page, run_page,
                  runs_page, slowest_page, slug, sweep_page, sweeps_page, test_page)

RUN_PAGES = 100


def export(engine: Engine, out: str, max_tests: int = 300, trust: Trust | None = None) -> int:
    """Write the static copy into out (a new or empty directory, written without following
    links: lib/platform/safewrite.py; trust: what the user trusts on purpose); the pages
    written."""
    try:
        folder = OutputDir.create(out, "history html", trust)
    except UsageError as exc:
        raise HistoryUsageError(str(exc)) from None
    with folder:
        return _export(engine, folder, max_tests)


def _export(engine: Engine, folder: OutputDir, max_tests: int) -> int:
    """The pages into folder; how many."""
    env = create_app(engine).jinja_env
    written = 0

    def page(rel: str, template: str, values: dict[str, Any] | None) -> None:
        """Write one page (nothing when there is nothing to show)."""
        nonlocal written
        if values is None:
            return
        link = Links(static=True, depth=rel.count("/"))
        folder.write_text(rel, env.get_template(template).render(link=link, static=True,
                                                                 **values))
        written += 1

    with engine.connect() as conn:
        page("index.html", "search.html", index_page(conn, {"limit": "200"}))
        page("runs.html", "runs.html", runs_page(conn, {"limit": str(RUN_PAGES)}))
        page("flaky.html", "flaky.html", flaky_page(conn, {}))
        page("slowest.html", "slowest.html", slowest_page(conn, {}))
        runs = recent_runs(conn, RUN_PAGES)
        linked = {r.run_id for r in search(conn, SearchFilter(limit=200))}
        for run_id in sorted({r.id for r in runs} | linked):
            page(f"runs/{run_id}.html", "run.html", run_page(conn, run_id))
        worst = [r.test for r in test_records(conn, Window(runs=200))]
        names = list(dict.fromkeys(worst))[:max_tests]
        if len(names) < max_tests:
            recent = conn.execute(select(results.c.test).group_by(results.c.test)
                                  .order_by(results.c.test).limit(max_tests)).scalars().all()
            names += [n for n in recent if n not in names][:max_tests - len(names)]
        for name in names:
            page(f"tests/{slug(name)}.html", "test.html", test_page(conn, name))
        page("bugs.html", "bugs.html", bugs_page(conn, {}))
        for bug in find_bugs(conn)[:max_tests]:
            page(f"bugs/{slug(bug.name)}.html", "bug.html", bug_page(conn, bug.name))
    page("sweeps.html", "sweeps.html", sweeps_page(engine))
    for sweep in SweepStore(engine).recent(20):
        page(f"sweeps/{sweep.id}.html", "sweep.html", sweep_page(engine, sweep.id))
    return written
