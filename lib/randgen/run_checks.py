"""Validators and reporters inside a built-in run (imported only by runs that use them).

Functions over a :class:`lib.randgen.executor.RandgenRun` (``run``): set up
the validators and reporters from the options, record a validator's
difference, the reporters' work after the load, the Deadlock reporter's
verdict, and a statement run with its result kept for the validators.
Kept out of the executor so that plain runs do not load (and, with
PYTHONDONTWRITEBYTECODE, compile) them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pymysql
import pymysql.cursors

from .connection import LOST_CONNECTION_CODES, error_message
from .errors import RandgenEnvironmentError
from .result import STATUS_FAILURE, STATUS_OK, STATUS_SERVER_LOST, ThreadStats

if TYPE_CHECKING:  # the executor imports this module when a run needs it
    from .executor import RandgenRun
    from .generator import Generator
    from .validators import Difference, Validators

MAX_SAMPLE = 300



def plugins(run: RandgenRun) -> None:
    """Set up the run's validators and reporters from its options (and comparison servers)."""
    opts = run.opts
    from . import reporters, validators
    from .connection import parse_dsn
    run.validators, unknown_v = validators.normalise_names(opts.validators)
    run.reporters, unknown_r = reporters.normalise_names(opts.reporters)
    for name in unknown_v + unknown_r:
        run.log.write(f"validator/reporter not in the built-in engine, ignored: {name}",
                       "WARNING")
        run.result.notes.append(f"not in the built-in engine, ignored: {name}")
    from .transformers import TRANSFORMERS
    known_t = {t.lower(): t for t in TRANSFORMERS}
    unknown_t = [t for t in opts.transformers if t.lower() not in known_t]
    opts.transformers = [known_t[t.lower()] for t in opts.transformers if t.lower() in known_t]
    for name in unknown_t:
        run.log.write(f"transformer not in the built-in engine, ignored: {name}", "WARNING")
        run.result.notes.append(f"transformer not in the built-in engine, ignored: {name}")
    for dsn in opts.compare_dsns:
        other = parse_dsn(dsn)
        run.compare.append(other if other.database else
                            other.with_database(run.conn.database or "test"))
    if "ResultsetComparator" in run.validators and not run.compare:
        raise RandgenEnvironmentError("ResultsetComparator needs a second server to compare "
                                      "with (--dsn2=..., or compare=[server] in a test)")
    if run.compare and "ResultsetComparator" not in run.validators:
        run.validators.insert(0, "ResultsetComparator")  # randgen compares when given 2 DSNs
    needs_server = [r for r in run.reporters if r in ("Shutdown", "Recovery")]
    if needs_server and run.server is None:
        run.log.write(f"reporters {', '.join(needs_server)} need a kewpie server (not just a "
                       f"DSN): skipped", "WARNING")
        run.reporters = [r for r in run.reporters if r not in needs_server]
    if run.server is not None:
        try:
            run._log_mark = run.server.errlog.size()
        except (OSError, AttributeError):
            run._log_mark = 0
    if "Deadlock" in run.reporters:
        run._deadlock = reporters.DeadlockWatch(run.conn, opts.deadlock_timeout, opts.threads)
    if run.validators or run.reporters:
        run.log.write(f"validators: {', '.join(run.validators) or '-'}"
                       + (f" (transformers: {', '.join(opts.transformers) or 'all'})"
                          if "Transformer" in run.validators else "")
                       + f"; reporters: {', '.join(run.reporters) or '-'}"
                       + (f"; comparing with {', '.join(c.describe() for c in run.compare)}"
                          if run.compare else ""))


def record_difference(run: RandgenRun, diff: Difference, stop: bool) -> None:
    """Keep a validator's finding; stop the run when the servers diverged."""
    res = run.result
    with run._diff_lock:
        res.difference_count += 1
        if len(res.differences) < 50:
            res.differences.append(diff.to_json())
        if res.difference_count <= 20:
            run.log.write(diff.summary(), "ERROR")
    if stop:
        run._fail(STATUS_FAILURE, f"{diff.validator}: the servers diverged on a statement "
                                   f"that changes data: {diff.query[:300]}")


def after_run(run: RandgenRun) -> None:
    """Reporters after the load: crash report, Shutdown/Recovery; validators' verdict."""
    res = run.result
    from . import reporters
    if res.status == STATUS_OK and res.difference_count:
        first = res.differences[0]
        run._fail(STATUS_FAILURE, f"{res.difference_count} validator difference(s); first: "
                                   f"{first['validator']} on {first['query'][:300]}")
    if res.status == STATUS_SERVER_LOST and run.server is not None and \
            {"Backtrace", "ErrorLog"} & set(run.reporters):
        report = reporters.crash_report(run.server, run._log_mark)
        res.reports.append(report)
        run.log.write(report, "ERROR")
    for name in ("Shutdown", "Recovery"):
        if name in run.reporters and res.status == STATUS_OK and run.server is not None:
            passed, report = reporters.restart_and_check(
                run.server, run.conn, name == "Recovery",
                lambda line: run.log.write(line))
            res.reports.append(report)
            run.log.write(report, "INFO" if passed else "ERROR")
            if not passed:
                run._exit_override = reporters.EXIT_RECOVERY_FAILURE
                run._fail(STATUS_FAILURE, report.splitlines()[0])


def deadlocked(run: RandgenRun, evidence: str, stuck: list[int]) -> None:
    """The Deadlock reporter fired: keep the evidence, fail the run, free the stuck statements."""
    from .reporters import EXIT_DEADLOCKED
    run.result.reports.append(evidence)
    if run._deadlock is not None:
        run.result.stalled = list(run._deadlock.stalled)
    run.log.write(evidence, "ERROR")
    run._exit_override = EXIT_DEADLOCKED
    run._fail(STATUS_FAILURE, evidence.splitlines()[0])
    for conn_id in stuck:  # let the run end; the evidence is taken
        run._killed.add((conn_id, -1.0))
        run._kill_query(conn_id, "Deadlock reporter: stuck statement")


def execute_checked(run: RandgenRun, gen: Generator, st: ThreadStats,
                    cur: pymysql.cursors.Cursor, sql: str, checker: Validators) -> str:
    """Run a statement keeping its result, then let the validators judge it."""
    from .validators import run_statement
    tid = gen.thread_id
    trace = run.trace
    seq, sent = trace.begin() if trace is not None else (0, 0.0)
    try:
        first = run_statement(cur, sql, run.conn.describe())
    finally:
        run._current[tid] = None
    if trace is not None:
        if first.error:
            trace.done(seq, sent, tid, gen.connection_id, sql, error=first.error,
                       message=first.message)
        else:
            trace.done(seq, sent, tid, gen.connection_id, sql,
                       None if first.rows is None else len(first.rows), first.affected)
    if run.opts.sqltrace:
        err = f"/* error {first.error}: {first.message} */ " if first.error else ""
        run.log.write(f"[{tid}] {err}{sql};", keep=False)
    if first.error:
        code = first.error
        st.errors[code] = st.errors.get(code, 0) + 1
        if code not in run.result.error_samples:
            run.result.error_samples[code] = f"{first.message} [sql: {sql[:MAX_SAMPLE]}]"
        if code in LOST_CONNECTION_CODES or code == 2014:
            return "lost"
    else:
        st.ok += 1
        if run._cache is not None and run._is_ddl(sql):
            run._refresh_wanted.set()
    try:
        checker.check(cur, sql, first)
    except pymysql.MySQLError as exc:
        run.log.write(f"[{tid}] a validator's statement failed: {error_message(exc)}", "WARNING")
    return "error" if first.error else "ok"
