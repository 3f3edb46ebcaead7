"""The comparisons of DQE and CERT as mysqltest lines: a reduced case's check.

lib/hunt/wrongresult/replay.py writes the other oracles' comparisons (digests of
the compared statements' rows); these two compare something else:

- :func:`dqe_lines`: the rows the SELECT finds, those the UPDATE changes and those
  the DELETE removes, on the copy the reduction made (its statements come first,
  :class:`~lib.hunt.wrongresult.oracle.Rebuilt`): each set as ``<count>:<MD5 of
  the kw_rowid list>`` -- the SELECT's with its select list replaced by that digest
  (the same FROM and WHERE, one query block), the UPDATE's read from the copy's
  ``kw_touched = 1`` rows, the DELETE's from a list of every kw_rowid made before
  (``kw_oracle.kw_ids``) less the rows left --, each DML undone after (ROLLBACK, or
  the copy put back from its pristine one), and its ``ROW_COUNT()`` compared with
  its set's count; ``--die wrong result (dqe): ...`` while they differ;
- :func:`cert_lines`: each EXPLAIN EXTENDED prepared (``PREPARE ... FROM``: mysqltest's
  ``query_get_value`` cuts its query at the first comma) and read row by row with
  ``query_get_value(EXECUTE ...)``; when both plans are the ones the reduction saw
  (every row's id, table and access type: the estimates compare like plans only) each
  estimate is computed in SQL as the oracle computes it
  (:func:`~lib.hunt.wrongresult.cert.floored_expression`: rows × filtered / 100 per
  step of the top block, a "Const row not found" step 1, the floored LEFT JOIN sides
  of the reduction's notes), and ``--die performance (cert): ...`` when the
  restriction's estimate is above the query's bound (its range steps' slack and the
  tolerance, lib/hunt/wrongresult/cert.py); another plan skips the case
  (``--skip``: CERT compares no other plans, so the case says nothing there).

Both forms die with a line lib/mtr/travel.py's confirmation recognises for the
finding's kind (``wrong result (dqe):``, ``performance (cert):``).
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from .cert import RANGE_ACCESS, SLACK, TOLERANCE, floored_expression
from .copies import ROWID, SCHEMA, TOUCHED
from .oracle import Rebuilt
from .schema import quote_name

IDS = f"{quote_name(SCHEMA)}.`kw_ids`"   # every kw_rowid of the copy, before the DELETE
GROUP_CONCAT_MAX = 64 * 1024 * 1024      # the digests' lists are never cut


def id_digest(column: str, distinct: bool = False) -> str:
    """SQL of a set of row ids as ``<count>:<MD5 of the ids in order>`` (``0:`` when none)."""
    d = "DISTINCT " if distinct else ""
    return (f"CONCAT(COUNT({d}{column}), ':', IFNULL(MD5(GROUP_CONCAT({d}{column} ORDER BY "
            f"{column})), ''))")


def found_digest(select: str) -> str:
    """DQE's SELECT with its select list (``t1.kw_rowid``) replaced by the digest of the
    distinct ids it finds; ValueError when it has no such list."""
    head = f"SELECT t1.{ROWID} FROM "
    at = select.find(head)
    if at < 0:
        raise ValueError("not DQE's SELECT: no SELECT t1.kw_rowid FROM")
    return (select[:at] + f"SELECT {id_digest(f't1.{ROWID}', distinct=True)} FROM "
            + select[at + len(head):])


def _seen(rebuilt: Rebuilt, count: int) -> list[dict[str, Any]] | None:
    """The rebuilt's seen entries read as JSON objects (None unless there are count)."""
    try:
        out = [json.loads(s) for s in rebuilt.seen]
    except ValueError:
        return None
    return out if len(out) == count and all(isinstance(o, dict) for o in out) else None


def dqe_lines(queries: Sequence[str], rebuilt: Rebuilt, delimiter: str = ";") -> list[str]:
    """The mysqltest lines of DQE's comparison (see the module docstring); [] when the
    reduction saw no copy (``rebuilt.seen``) or the statements are not DQE's."""
    seen = _seen(rebuilt, 1)
    if seen is None or len(queries) != 3:
        return []
    copy = str(seen[0].get("copy") or "")
    try:
        found = found_digest(queries[0].strip().rstrip(";"))
    except ValueError:
        return []
    d = delimiter
    if seen[0].get("transactional"):
        begin, undo = [f"START TRANSACTION{d}"], [f"ROLLBACK{d}"]
    else:
        listed = ", ".join(str(c) for c in seen[0].get("columns") or [])
        begin, undo = [], [f"DELETE FROM {copy}{d}",
                           f"INSERT INTO {copy} ({listed}, {ROWID}) SELECT {listed}, {ROWID} "
                           f"FROM {seen[0].get('pristine')}{d}"]
    lines = ["", "# the wrong result (dqe): the SELECT, UPDATE and DELETE of one condition must "
                 "touch the same rows",
             "# what the dqe oracle built for them, as the reduction built it"]
    lines += [sql + d for sql in rebuilt.statements]
    lines += [f"SET SESSION group_concat_max_len = {GROUP_CONCAT_MAX}{d}",
              f"CREATE TABLE {IDS} ENGINE=MyISAM AS SELECT {ROWID} FROM {copy}{d}",
              "# each set of rows as <count>:<MD5 of their kw_rowid>",
              f"let $kw_found= `{found}`{d}"]
    lines += begin + [queries[1].strip().rstrip(";") + d,
                      f"let $kw_updated= `SELECT ROW_COUNT()`{d}",
                      f"let $kw_touched= `SELECT {id_digest(ROWID)} FROM {copy} "
                      f"WHERE {TOUCHED} = 1`{d}"] + undo
    lines += begin + [queries[2].strip().rstrip(";") + d,
                      f"let $kw_deleted= `SELECT ROW_COUNT()`{d}",
                      f"let $kw_removed= `SELECT {id_digest('i.' + ROWID)} FROM {IDS} AS i "
                      f"WHERE i.{ROWID} NOT IN (SELECT {ROWID} FROM {copy})`{d}"] + undo
    lines += [f"let $kw_same= `SELECT '$kw_found' = '$kw_touched' AND '$kw_found' = "
              f"'$kw_removed' AND '$kw_touched' LIKE '$kw_updated:%' AND '$kw_removed' LIKE "
              f"'$kw_deleted:%'`{d}",
              "if (!$kw_same)", "{",
              "  --die wrong result (dqe): the SELECT found $kw_found, the UPDATE touched "
              "$kw_touched ($kw_updated affected), the DELETE removed $kw_removed "
              "($kw_deleted affected) (rows as <count>:<MD5 of their kw_rowid>)", "}"]
    return lines + [sql + d for sql in rebuilt.undo]


def sql_text(text: str) -> str:
    """A string literal of text for PREPARE ... FROM: quoted (a quote doubled), or as a
    hex literal converted to utf8mb4 when it holds a backslash (whose meaning depends on
    the sql_mode's NO_BACKSLASH_ESCAPES)."""
    if "\\" in text:
        return f"CONVERT(X'{text.encode('utf-8').hex().upper()}' USING utf8mb4)"
    return "'" + text.replace("'", "''") + "'"


def _steps(plan: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(row number from 1, table, access type) of each top-block step of a seen plan."""
    rows = plan.get("rows") or []
    assert isinstance(rows, list)
    return [(n, str(r[1]), str(r[2])) for n, r in enumerate(rows, 1) if str(r[0]) == "1"]


def cert_lines(queries: Sequence[str], rebuilt: Rebuilt, delimiter: str = ";") -> list[str]:
    """The mysqltest lines of CERT's comparison (see the module docstring); [] when the
    reduction saw no plans (``rebuilt.seen``)."""
    plans = _seen(rebuilt, 2)
    if plans is None or len(queries) != 2:
        return []
    d = delimiter
    lines = ["", "# the performance finding (cert): the restricted query (statement 2) must "
                 "not be estimated at more rows than the query it restricts (statement 1)"]
    if not all(q.isascii() for q in queries):
        lines.append(f"SET NAMES utf8mb4{d}")
    same, estimates = [], []
    for j, (sql, plan) in enumerate(zip(queries, plans), 1):
        rows = plan.get("rows") or []
        assert isinstance(rows, list)
        lines.append(f"PREPARE kw_q{j} FROM {sql_text(sql.strip().rstrip(';'))}{d}")
        for n, row in enumerate(rows, 1):
            for column, var in (("id", "i"), ("table", "t"), ("type", "a")):
                lines.append(f"let $kw_{var}{j}_{n}= query_get_value(EXECUTE kw_q{j}, "
                             f"{column}, {n}){d}")
            same += [f"'$kw_i{j}_{n}' = {sql_text(str(row[0]))}",
                     f"'$kw_t{j}_{n}' = {sql_text(str(row[1]))}",
                     f"'$kw_a{j}_{n}' = {sql_text(str(row[2]))}"]
        lines.append(f"let $kw_i{j}_{len(rows) + 1}= query_get_value(EXECUTE kw_q{j}, id, "
                     f"{len(rows) + 1}){d}")
        same.append(f"'$kw_i{j}_{len(rows) + 1}' = 'No such row'")
        factors: list[tuple[str, str]] = []
        bounds: list[tuple[str, str]] = []
        for n, table, access in _steps(plan):
            for column, var in (("rows", "r"), ("filtered", "f"), ("Extra", "x")):
                lines.append(f"let $kw_{var}{j}_{n}= query_get_value(EXECUTE kw_q{j}, "
                             f"{column}, {n}){d}")
            slack = f" + {SLACK:g}" if access in RANGE_ACCESS else ""
            for out, extra in ((factors, ""), (bounds, slack)):
                out.append((table, f"IF(LOCATE('Const row not found', '$kw_x{j}_{n}'), 1, "
                                   f"(IFNULL($kw_r{j}_{n}, 0){extra}) * "
                                   f"IFNULL($kw_f{j}_{n}, 100) / 100)"))
        groups = [frozenset(str(t) for t in g) for g in plan.get("floored") or []
                  if isinstance(g, list)]
        estimates.append((floored_expression(factors, groups),
                          floored_expression(bounds, groups)))
    lines += [f"let $kw_like= `SELECT {' AND '.join(same)}`{d}",
              "if (!$kw_like)", "{",
              "  --skip the plans are not the ones the reduction compared (CERT compares "
              "like plans only)", "}",
              f"let $kw_e1= `SELECT {estimates[0][0]}`{d}",
              f"let $kw_e2= `SELECT {estimates[1][0]}`{d}",
              f"let $kw_more= `SELECT {estimates[1][0]} > ({estimates[0][1]}) * "
              f"{1 + TOLERANCE:g} + 1e-9`{d}",
              "if ($kw_more)", "{",
              "  --die performance (cert): the restricted query (statement 2) is estimated at "
              "$kw_e2 row(s), more than the $kw_e1 of the query it restricts (statement 1), "
              "under a like plan", "}",
              f"DEALLOCATE PREPARE kw_q1{d}", f"DEALLOCATE PREPARE kw_q2{d}"]
    return lines
