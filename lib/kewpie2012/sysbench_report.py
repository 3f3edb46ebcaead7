"""kewpie 2012's sysbench regression reports: a results database and two reports.

Importable as 2012 had them, from ``lib.util.sysbench_methods`` and from
``lib.util.sysbench_report``:

- ``sysbench_db_analysis(dsn_string, test_data)`` stores one sysbench run in
  the results database the DSN names (``host:user:password:database:port``,
  :mod:`lib.kewpie2012.database_connect`) and returns ``(0, report)``: the run's
  tps per concurrency against the same workload's earlier runs on the same
  machine (the last 5, the last 20, all), with the percentage and difference
  from their average, their minimum, maximum, average and standard
  deviation.  test_data is 2012's dict: ``run_date``, ``test_machine``,
  ``test_server_type``, ``test_server_revno``, ``test_server_comment``,
  ``config_name``, and for each concurrency (an int key) a list of iteration
  dicts (``iteration``, ``tps``, ``rwreqps``, ``deadlocksps``,
  ``min_req_lat_ms``, ``max_req_lat_ms``, ``avg_req_lat_ms``,
  ``95p_req_lat_ms``; a figure sysbench 1.0 does not print counts 0).  The
  tables (``bench_config``, ``bench_runs``, ``sysbench_run_iterations``, as
  2012's) are created when missing; a statement that fails gives
  ``(1, what failed)``.
- ``getSysbenchReport(run, fetch)``: one iteration's figures (run, with its
  ``mode``) against the recorded ones (fetch, with ``concurrency`` and
  ``iteration``), as 2012's text block.
"""
from __future__ import annotations

import statistics
from typing import Any, Mapping, Sequence

import pymysql

from .database_connect import Dsn, error_text

BRANCH = "staging"  # 2012 recorded every run's version as staging-<revno>
TABLES = (
    "CREATE TABLE IF NOT EXISTS bench_config (config_id INT NOT NULL AUTO_INCREMENT "
    "PRIMARY KEY, name VARCHAR(255) NOT NULL, UNIQUE KEY (name))",
    "CREATE TABLE IF NOT EXISTS bench_runs (run_id INT NOT NULL PRIMARY KEY, config_id INT "
    "NOT NULL, server VARCHAR(255) NOT NULL, version VARCHAR(255) NOT NULL, run_date "
    "DATETIME NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sysbench_run_iterations (run_id INT NOT NULL, concurrency "
    "INT NOT NULL, iteration INT NOT NULL, tps DECIMAL(15,2), read_write_req_per_second "
    "DECIMAL(15,2), deadlocks_per_second DECIMAL(15,2), min_req_latency_ms DECIMAL(15,2), "
    "max_req_latency_ms DECIMAL(15,2), avg_req_latency_ms DECIMAL(15,2), "
    "`95p_req_latency_ms` DECIMAL(15,2), PRIMARY KEY (run_id, concurrency, iteration))",
)
ITERATION_COLUMNS = (("tps", "tps"), ("read_write_req_per_second", "rwreqps"),
                     ("deadlocks_per_second", "deadlocksps"),
                     ("min_req_latency_ms", "min_req_lat_ms"),
                     ("max_req_latency_ms", "max_req_lat_ms"),
                     ("avg_req_latency_ms", "avg_req_lat_ms"),
                     ("`95p_req_latency_ms`", "95p_req_lat_ms"))
WINDOWS = (("LAST 5 runs", 5), ("LAST 20 runs", 20), ("ALL runs", None))
RULE = "=" * 100
HEADINGS = ("Conc", "TPS", "% Diff from Avg", "Diff", "Min", "Max", "Avg", "STD")


class AnalysisError(Exception):
    """A statement on the results database failed (the text says which)."""


def _query(conn: pymysql.Connection, query: str, args: Sequence[Any] | None = None) -> Any:
    """Run one statement on the results database and commit; its rows."""
    try:
        with conn.cursor() as cursor:
            cursor.execute(query, args)
            rows = cursor.fetchall()
        conn.commit()
        return rows
    except pymysql.MySQLError as exc:
        raise AnalysisError(f"sysbench_db_analysis: {query.split('(')[0].strip()} failed: "
                            f"{error_text(exc)}") from None


def next_run_id(conn: pymysql.Connection) -> int:
    """One more than the highest run id recorded (1 for the first run)."""
    rows = _query(conn, "SELECT MAX(run_id) FROM bench_runs")
    return int(rows[0][0] or 0) + 1


def config_id_of(conn: pymysql.Connection, name: str) -> int:
    """The id of the workload called name, recorded now if it is new."""
    rows = _query(conn, "SELECT config_id FROM bench_config WHERE name = %s", [name])
    if not rows:
        _query(conn, "INSERT INTO bench_config (name) VALUES (%s)", [name])
        rows = _query(conn, "SELECT config_id FROM bench_config WHERE name = %s", [name])
    return int(rows[0][0])


def concurrencies(test_data: Mapping[Any, Any]) -> list[int]:
    """The concurrencies of a run's test_data (its int keys), sorted."""
    return sorted(k for k in test_data if isinstance(k, int) and not isinstance(k, bool))


def sysbench_db_analysis(dsn_string: str, test_data: Mapping[Any, Any]) -> tuple[int, str]:
    """Store a run and report its regressions (see the module docstring)."""
    try:
        conn = Dsn.parse(dsn_string).connect()
    except pymysql.MySQLError as exc:
        return 1, f"sysbench_db_analysis: cannot connect to {dsn_string}: {error_text(exc)}"
    try:
        for statement in TABLES:
            _query(conn, statement)
        run_id = next_run_id(conn)
        config_id = config_id_of(conn, str(test_data["config_name"]))
        _query(conn, "INSERT INTO bench_runs (run_id, config_id, server, version, run_date) "
                     "VALUES (%s, %s, %s, %s, %s)",
               [run_id, config_id, str(test_data["test_machine"]),
                f"{BRANCH}-{test_data['test_server_revno']}", str(test_data["run_date"])])
        columns = ", ".join(column for column, _ in ITERATION_COLUMNS)
        marks = ", ".join(["%s"] * (3 + len(ITERATION_COLUMNS)))
        for concurrency in concurrencies(test_data):
            for iteration in test_data[concurrency]:
                values = [float(iteration.get(key, 0.0) or 0.0) for _, key in ITERATION_COLUMNS]
                _query(conn, f"INSERT INTO sysbench_run_iterations (run_id, concurrency, "
                             f"iteration, {columns}) VALUES ({marks})",
                       [run_id, concurrency, int(iteration.get("iteration", 0)), *values])
        return 0, regression_report(conn, run_id, config_id, test_data)
    except AnalysisError as exc:
        return 1, str(exc)
    finally:
        conn.close()


def trend_rows(runs: Mapping[int, Mapping[int, list[float]]], run_id: int,
               window: int | None) -> list[tuple[str, ...]]:
    """The report's rows for one window: per concurrency of run_id, its average tps
    against the tps of the window's runs (the run_id and those before it)."""
    run_ids = sorted((r for r in runs if r <= run_id), reverse=True)[:window]
    rows: list[tuple[str, ...]] = []
    for concurrency in sorted(runs.get(run_id, {})):
        mine = statistics.fmean(runs[run_id][concurrency])
        values = [tps for r in run_ids for tps in runs[r].get(concurrency, [])]
        avg = statistics.fmean(values)
        diff = mine - avg
        pct = 100.0 * diff / avg if avg else 0.0
        rows.append((str(concurrency), f"{mine:.2f}", f"{pct:+.2f}%", f"{diff:.2f}",
                     f"{min(values):.2f}", f"{max(values):.2f}", f"{avg:.2f}",
                     f"{statistics.pstdev(values):.2f}"))
    return rows


def regression_report(conn: pymysql.Connection, run_id: int, config_id: int,
                      test_data: Mapping[Any, Any]) -> str:
    """The text of the run's report (header, then one table per window)."""
    found = _query(conn, "SELECT r.run_id, i.concurrency, i.tps FROM bench_runs r JOIN "
                               "sysbench_run_iterations i ON i.run_id = r.run_id WHERE "
                               "r.config_id = %s AND r.server = %s AND r.version LIKE %s",
                   [config_id, str(test_data["test_machine"]), f"{BRANCH}%"])
    runs: dict[int, dict[int, list[float]]] = {}
    for rid, concurrency, tps in found:
        runs.setdefault(int(rid), {}).setdefault(int(concurrency), []).append(float(tps or 0))
    lines = [RULE, "SYSBENCH BENCHMARK REPORT", RULE,
             f"MACHINE:  {test_data['test_machine']}", f"RUN ID:   {run_id}",
             f"RUN DATE: {test_data['run_date']}", f"WORKLOAD: {test_data['config_name']}",
             f"SERVER:   {test_data['test_server_type']}", f"VERSION:  {BRANCH}",
             f"REVISION: {test_data['test_server_revno']}",
             f"COMMENT:  {test_data['test_server_comment']}", RULE]
    for title, window in WINDOWS:
        lines += ["", f"TRENDING OVER {title}", "",
                  "%-6s %-7s %-17s %-10s %-10s %-10s %-10s %-10s" % HEADINGS, RULE]
        lines += ["%-6s %7s %17s %10s %10s %10s %10s %10s" % row
                  for row in trend_rows(runs, run_id, window)]
        lines.append(RULE)
    return "\n".join(lines)


def getSysbenchReport(run: Mapping[str, Any], fetch: Mapping[str, Any]) -> str:  # noqa: N802
    """One iteration's figures and their differences from the recorded ones (2012's
    block: concurrency, iteration, mode, then each figure and its difference)."""
    figures = (("TPS", "tps"), ("MIN_REQ_LAT_MS", "min_req_lat_ms"),
               ("MAX_REQ_LAT_MS", "max_req_lat_ms"), ("AVG_REQ_LAT_MS", "avg_req_lat_ms"),
               ("95P_REQ_LAT_MS", "95p_req_lat_ms"), ("RWREQPS", "rwreqps"),
               ("DEADLOCKSPS", "deadlocksps"))
    rule = "=" * 30
    lines = [rule, "  SYSBENCH REGRESSION REPORT", rule,
             f"CONCURRENCY    :  {int(fetch['concurrency'])}",
             f"ITERATIONS     :  {int(fetch['iteration']) + 1}",
             f"MODE           :  {run['mode']}"]
    for title, key in figures:
        value = float(run.get(key, 0.0) or 0.0)
        recorded = float(fetch.get(key, 0.0) or 0.0)
        lines.append(f"{title:<15}:  {value:f}      {value - recorded:f}")
    lines.append("=" * 29)
    return "\n".join(lines) + "\n"
