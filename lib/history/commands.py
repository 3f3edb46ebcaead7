"""``kewpie history ...``: the history on the command line, its page and its static copy.

``failures`` (the cross-reference search), ``flaky``, ``slowest``, ``test NAME``,
``unstable`` (lines for ``unstable-tests`` or a suite's ``disabled.txt``), ``runs``,
``run ID``, ``serve`` (the page, on 127.0.0.1), ``html OUT`` (a static copy) and
``import-sweeps FILE`` (an old sweeps database).  lib/cli.py dispatches here with the
settings' defaults (workdir, store, lock directory); this module prints, and raises
typed errors for the command line to report.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence, TextIO

from sqlalchemy.engine import Engine

from .dsn import has_password, password_on_command_line
from .errors import HistoryUsageError
from .patterns import parse_when
from .records import headline
from .queries import (DEFAULT_WINDOW_RUNS, STATUS_CHOICES, FlakyRow, ResultRow, SearchFilter,
                      Window, flaky, recent_runs, run_detail, search, slowest, timeline,
                      unstable)
from ..platform.pathoptions import PathOption, PathRole, PathShape
from ..platform.trustedpath import Trust
from .store import open_engine
from .target import StoreTarget

# The subcommands' options that take a path, by what they are to kewpie (as lib/cli.py's
# PATH_TABLE; tests/unit/test_path_options.py fails when one is missing).
PATH_TABLE: Mapping[str, PathOption] = MappingProxyType({
    "history": PathOption(PathRole.data, note="the SQLite store: queried as data"),
    "workdir": PathOption(PathRole.data, note="its history.sqlite, queried as data"),
    "config": PathOption(PathRole.input, note="checked before it is read (lib/cli.py)"),
    "lock-dir": PathOption(PathRole.own, note="lib/platform/ports.py"),
    "OUT": PathOption(PathRole.output, PathShape.folder,
                      note="made fresh or empty, written without following links "
                           "(lib/history/export.py)"),
    "FILE": PathOption(PathRole.data, note="an old sweeps database, read as data"),
})


@dataclass
class Defaults:
    """What lib/cli.py knows from the settings: the workdir, the store, port leasing."""

    workdir: str
    history_path: str = ""
    history_dsn: str = ""
    lock_dir: str = ""
    base_port: int = 9300
    trusted: tuple[str, ...] = ()  # safe-directories of the user's own config


def _store_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the store (default: the runs' WORKDIR/history.sqlite)")
    g.add_argument("--history", dest="history_path", default=None, metavar="PATH",
                   help="a SQLite history file")
    g.add_argument("--history-dsn", default=None, metavar="DSN",
                   help="a MariaDB/MySQL store: mysql://user@host:port/database (its "
                        "password: in KEWPIE_HISTORY_DSN or a config file only you can "
                        "read, never here)")
    g.add_argument("--workdir", default=None, metavar="DIR",
                   help="the runs' workdir (its history.sqlite)")
    g.add_argument("--config", dest="config_file", default="", metavar="FILE",
                   help="read the store's settings from FILE (default: kewpie.toml)")
    g.add_argument("--no-config", action="store_true", help="read no config file")
    g.add_argument("--profile", default="", metavar="NAME", help="a config file's profile")


def _window_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=DEFAULT_WINDOW_RUNS, metavar="N",
                   help="look at the last N runs (default: %(default)s)")
    p.add_argument("--days", type=float, default=0.0, metavar="D",
                   help="look at the last D days instead")
    p.add_argument("--branch", default="", metavar="PATTERN", help="only runs of these branches")
    p.add_argument("--job", default="", metavar="PATTERN", help="only runs of these CI jobs")


def build_parser() -> argparse.ArgumentParser:
    """The ``kewpie history`` parser (each subcommand documents itself: ``--help``)."""
    p = argparse.ArgumentParser(
        prog="kewpie.py history", description="Every run remembered: search failures, "
        "flaky and slow tests, a test's timeline; serve the cross-reference page "
        "(docs/history.md).", epilog="Patterns take * (any text) and ? (one character); a "
        "failure pattern without them matches anywhere in the text.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_failures(sub)
    _add_reports(sub)
    _add_outputs(sub)
    return p



def _add_failures(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``history failures``: the search."""
    s = sub.add_parser("failures", help="search results (failures by default), newest first")
    _store_options(s)
    s.add_argument("--test", default="", metavar="PATTERN", help="test names, e.g. 'main.*'")
    s.add_argument("--failure", default="", metavar="PATTERN",
                   help="failure text, e.g. '*timeout*'")
    s.add_argument("--branch", default="", metavar="PATTERN")
    s.add_argument("--tree", default="", metavar="PATTERN", help="code tree version, e.g. 10.11.*")
    s.add_argument("--platform", default="", metavar="PATTERN")
    s.add_argument("--signature", default="", metavar="PATTERN", help="a finding's signature")
    s.add_argument("--status", default="failing", choices=STATUS_CHOICES,
                   help="failing (fail, timeout, flaky; the default), all, or one status")
    s.add_argument("--since", default="", metavar="WHEN", help="e.g. 7d, 12h, 2026-11-01")
    s.add_argument("--until", default="", metavar="WHEN")
    s.add_argument("--limit", type=int, default=50, metavar="N")


def _add_reports(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``history flaky``, ``slowest``, ``test``, ``unstable``, ``runs`` and ``run``: the
    reports on tests and runs."""
    s = sub.add_parser("flaky", help="tests that failed and passed: failure and "
                                     "pass-after-retry rates with counts")
    _store_options(s)
    _window_options(s)
    s.add_argument("--limit", type=int, default=100, metavar="N")

    s = sub.add_parser("slowest", help="the slowest tests and their duration trend")
    _store_options(s)
    _window_options(s)
    s.add_argument("--limit", type=int, default=20, metavar="N")

    s = sub.add_parser("test", help="a test's timeline")
    _store_options(s)
    s.add_argument("name", metavar="NAME", help="suite.test")
    s.add_argument("--limit", type=int, default=30, metavar="N")

    s = sub.add_parser("unstable", help="lines for unstable-tests or disabled.txt: the tests "
                                        "whose failure rate is at least --min-rate")
    _store_options(s)
    _window_options(s)
    s.add_argument("--min-rate", type=float, default=0.2, metavar="FRACTION",
                   help="(default: %(default)s)")
    s.add_argument("--format", default="unstable-tests", choices=("unstable-tests", "disabled"),
                   help="unstable-tests: 'suite.test : why' (mysql-test's unstable-tests); "
                        "disabled: a disabled.txt block per suite ('test : why')")

    s = sub.add_parser("runs", help="the latest runs with their counts")
    _store_options(s)
    s.add_argument("--limit", type=int, default=20, metavar="N")
    s.add_argument("--branch", default="", metavar="PATTERN")
    s.add_argument("--job", default="", metavar="PATTERN")

    s = sub.add_parser("run", help="one run and its results")
    _store_options(s)
    s.add_argument("run_id", type=int, metavar="ID")


def _add_outputs(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``history serve``, ``html`` and ``import-sweeps``: the page served or written, an
    old sweeps database copied in."""
    s = sub.add_parser("serve", help="the cross-reference page on 127.0.0.1 (Ctrl-C stops it)")
    _store_options(s)
    s.add_argument("--port", type=int, default=0, metavar="PORT",
                   help="listen on PORT (default: a port leased as kewpie leases servers')")
    s.add_argument("--base-port", type=int, default=None, metavar="PORT")
    s.add_argument("--lock-dir", default=None, metavar="DIR")

    s = sub.add_parser("html", help="write a static copy of the page (a CI artifact)")
    _store_options(s)
    s.add_argument("out", metavar="OUT", help="a new or empty directory")
    s.add_argument("--tests", type=int, default=300, metavar="N",
                   help="write pages for at most N tests (failing and flaky first)")

    s = sub.add_parser("import-sweeps", help="copy an old sweeps results.sqlite into the store")
    _store_options(s)
    s.add_argument("file", metavar="FILE")


def config_argv(args: argparse.Namespace) -> list[str]:
    """The config-file options given, as the run's command line takes them."""
    out = [f"--config={args.config_file}"] if args.config_file else []
    out += ["--no-config"] if args.no_config else []
    out += [f"--profile={args.profile}"] if args.profile else []
    return out


def target_of(args: argparse.Namespace, defaults: Defaults) -> StoreTarget:
    """The store the options (over the settings' defaults) name; HistoryUsageError for
    a ``--history-dsn`` with a password (every user sees a command line)."""
    if args.history_dsn and has_password(args.history_dsn):
        raise HistoryUsageError(password_on_command_line("--history-dsn", args.history_dsn))
    dsn = args.history_dsn if args.history_dsn is not None else (
        "" if args.history_path else defaults.history_dsn)
    path = args.history_path if args.history_path is not None else defaults.history_path
    return StoreTarget.choose(path or "", dsn or "", args.workdir or defaults.workdir)


# ---------------------------------------------------------------- printing
def _when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M") if at else "-"


def _first(text: str, width: int = 80) -> str:
    line = headline(text)
    return line if len(line) <= width else line[:width - 3] + "..."


def _secs(ms: float) -> str:
    return f"{ms / 1000:.1f}s"


def _name(test: str, combination: str) -> str:
    return f"{test} [{combination}]" if combination else test


def _table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    """Columns padded to their widest cell (the last column is not padded)."""
    if not rows:
        return
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row, widths)] + [row[-1]]
        out.write("  ".join(cells).rstrip() + "\n")


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100.0 * part / whole:.1f}%)" if whole else "0/0"


def print_results(rows: list[ResultRow], out: TextIO) -> None:
    """Search results or a timeline, one line each."""
    table = [["WHEN (UTC)", "TEST", "STATUS", "TIME", "RUN", "BRANCH", "TREE", "PLATFORM",
              "FAILURE / EVIDENCE"]]
    for r in rows:
        detail = _first(r.failure) or ""
        if r.signature:
            detail = f"[{r.signature}] {detail}"
        table.append([_when(r.finished_at), _name(r.test, r.combination), r.status,
                      _secs(r.duration_ms), f"#{r.run_id}", r.branch or "-",
                      r.tree_version or "-", r.platform or "-", detail])
    _table(table, out)
    for r in rows:
        if r.evidence and r.status != "pass":
            out.write(f"  #{r.run_id} {r.test}: evidence {r.evidence}\n")


def print_flaky(rows: list[FlakyRow], out: TextIO) -> None:
    """The flaky (or unstable) table."""
    table = [["TEST", "RESULTS", "FAILED FIRST TIME", "PASSED ON RETRY", "LAST FAILURE"]]
    for r in rows:
        table.append([_name(r.test, r.combination), str(r.results),
                      _pct(r.failing, r.results), _pct(r.flaky, r.failing),
                      f"{_when(r.last_failure_at)} run #{r.last_failure_run}: "
                      f"{_first(r.last_failure, 60)}"])
    _table(table, out)


# ---------------------------------------------------------------- the commands
def _failures(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    f = SearchFilter(test=args.test, failure=args.failure, branch=args.branch, tree=args.tree,
                     platform=args.platform, signature=args.signature, status=args.status,
                     since=parse_when(args.since), until=parse_when(args.until), limit=args.limit)
    with engine.connect() as conn:
        rows = search(conn, f)
    if not rows:
        out.write("no result matches\n")
        return 0
    print_results(rows, out)
    return 0


def _window(args: argparse.Namespace) -> Window:
    if args.runs < 1 or args.days < 0:
        raise HistoryUsageError("--runs must be at least 1 and --days at least 0")
    return Window(runs=args.runs, days=args.days, branch=args.branch, job=args.job)


def _flaky(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    w = _window(args)
    with engine.connect() as conn:
        rows = flaky(conn, w, args.limit)
    out.write(f"Flaky tests over {w.describe()}: failed at least once and passed at least "
              f"once ({len(rows)})\n")
    print_flaky(rows, out)
    return 0


def _slowest(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    w = _window(args)
    with engine.connect() as conn:
        rows = slowest(conn, w, args.limit)
    out.write(f"Slowest tests over {w.describe()} (passing attempts):\n")
    table = [["TEST", "RESULTS", "MEDIAN", "LAST", "MAX", "TREND (newer half vs older)"]]
    for r in rows:
        trend = "-" if r.trend is None else f"{r.trend:+.0%}"
        table.append([_name(r.test, r.combination), str(r.results), _secs(r.median_ms),
                      _secs(r.last_ms), _secs(r.max_ms), trend])
    _table(table, out)
    return 0


def _test(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    with engine.connect() as conn:
        rows = timeline(conn, args.name, args.limit)
    if not rows:
        raise HistoryUsageError(f"no result of test {args.name!r} in the history (names are "
                                f"suite.test; search with: kewpie history failures --test "
                                f"'*{args.name}*' --status all)")
    strip = "".join({"pass": ".", "flaky": "f", "fail": "F", "timeout": "T",
                     "skipped": "s"}.get(r.status, "?") for r in reversed(rows))
    counts = {s: sum(1 for r in rows if r.status == s) for s in dict.fromkeys(r.status for r in rows)}
    out.write(f"{args.name}: last {len(rows)} result(s), oldest to newest: {strip}\n")
    out.write("  " + ", ".join(f"{n} {s}" for s, n in counts.items()) + "\n")
    print_results(rows, out)
    return 0


def _unstable(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    if not 0 < args.min_rate <= 1:
        raise HistoryUsageError("--min-rate must be a fraction in (0, 1]")
    w = _window(args)
    with engine.connect() as conn:
        rows = unstable(conn, w, args.min_rate)
    out.write(f"# kewpie history unstable: failure rate >= {args.min_rate:.0%} over "
              f"{w.describe()} ({len(rows)} test(s))\n")
    suites: dict[str, list[str]] = {}
    for r in rows:
        why = (f"failed {_pct(r.failing, r.results)} in kewpie history, last "
               f"{_when(r.last_failure_at)}: {_first(r.last_failure, 80)}").replace("#", "No.")
        name = _name(r.test, r.combination) if args.format == "disabled" else r.test
        if args.format == "unstable-tests":
            out.write(f"{name} : {why}\n")
        else:
            suite, _, test = r.test.partition(".")
            suites.setdefault(suite, []).append(f"{test or suite} : {why}")
    for suite, lines in suites.items():
        out.write(f"# {suite}/disabled.txt\n")
        for line in lines:
            out.write(line + "\n")
    return 0


def _runs(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    with engine.connect() as conn:
        rows = recent_runs(conn, args.limit, args.branch, args.job)
    table = [["RUN", "STARTED (UTC)", "MODE", "HOST", "BRANCH", "TREE", "RESULTS", "FAILING",
              "EXIT", "SELECTION"]]
    for r in rows:
        table.append([f"#{r.id}", _when(r.started_at), r.mode, r.host, r.branch or "-",
                      r.tree_version or "-", str(r.total), str(r.failing),
                      "-" if r.exit_code is None else str(r.exit_code), r.selection or "-"])
    _table(table, out)
    return 0


def _run(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    with engine.connect() as conn:
        run, rows = run_detail(conn, args.run_id)
    if run is None:
        raise HistoryUsageError(f"no run #{args.run_id} in the history")
    facts: list[tuple[str, Any]] = [
        ("run", f"#{run.id} {run.uuid}"), ("started (UTC)", _when(run.started_at)),
        ("ended (UTC)", _when(run.ended_at)), ("exit code", run.exit_code), ("mode", run.mode),
        ("host", run.host), ("platform", run.platform), ("selection", run.selection),
        ("shard", run.shard), ("code tree", f"{run.tree_version} ({run.tree_path})"),
        ("branch", run.branch), ("revision", run.revision), ("job", run.job),
        ("build", run.build), ("build url", run.build_url), ("labels", run.labels),
        ("options", " ".join(f"{k}={v}" for k, v in sorted(run.options.items()))),
        ("kewpie", run.kewpie_version)]
    for key, value in facts:
        if value not in ("", None, {}):
            out.write(f"{key:>14}: {value}\n")
    print_results(rows, out)
    return 0


def _import_sweeps(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    from .sweeps import import_legacy
    copied = import_legacy(engine, args.file)
    out.write(f"copied {copied} sweep(s) from {args.file}\n")
    return 0


COMMANDS: Mapping[str, Callable[[Engine, argparse.Namespace, TextIO], int]] = MappingProxyType({
    "failures": _failures, "flaky": _flaky, "slowest": _slowest, "test": _test,
    "unstable": _unstable, "runs": _runs, "run": _run, "import-sweeps": _import_sweeps})


def run_command(args: argparse.Namespace, defaults: Defaults, out: TextIO | None = None) -> int:
    """Run a parsed ``kewpie history`` command; its exit status (HistoryError,
    HistoryUsageError and KewpieError for the command line to report)."""
    out = out or sys.stdout
    target = target_of(args, defaults)
    if args.command == "serve":
        from .serve import serve
        return serve(target, args.port, args.lock_dir or defaults.lock_dir,
                     args.base_port or defaults.base_port, out)
    if args.command == "html":
        from .export import export
        engine = open_engine(target)
        try:
            written = export(engine, args.out, max_tests=args.tests,
                             trust=Trust.of(defaults.trusted))
        finally:
            engine.dispose()
        out.write(f"wrote {written} page(s) to {args.out} (open {args.out}/index.html)\n")
        return 0
    engine = open_engine(target, writer=args.command == "import-sweeps")
    try:
        return COMMANDS[args.command](engine, args, out)
    finally:
        engine.dispose()
