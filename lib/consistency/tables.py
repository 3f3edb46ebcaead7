"""Cross-server table checks that name the rows: checksums first, then a row diff.

``CHECKSUM TABLE`` finds the tables that differ; for those, the rows are
compared by primary key so the evidence says which rows are missing, extra
or changed (and in which columns).
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from ..checks import dbcompare
from .reads import read_rows
from .verdict import Verdict, VerdictStatus
from ..errors import QueryError
from ..servers.judging import JUDGING_BOUND, ReadUnknownError
from ..servers.server import Server

ROWS_SHOWN = 20


def _key_text(columns: list[str], key: tuple[Any, ...]) -> str:
    return ", ".join(f"{c}={v!r}" for c, v in zip(columns, key))


def primary_key(server: Server, schema: str, table: str) -> list[str]:
    """The primary key's columns in order ([] when there is none)."""
    rows = server.execute("SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE "
                          "TABLE_SCHEMA=%s AND TABLE_NAME=%s AND INDEX_NAME='PRIMARY' "
                          "ORDER BY SEQ_IN_INDEX", (schema, table))
    return [r[0] for r in rows]


def table_columns(server: Server, schema: str, table: str) -> list[str]:
    """Column names in order."""
    rows = server.execute("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE "
                          "TABLE_SCHEMA=%s AND TABLE_NAME=%s ORDER BY ORDINAL_POSITION",
                          (schema, table))
    return [r[0] for r in rows]


def row_differences(reference: Server, other: Server, schema: str, table: str,
                    limit: int = ROWS_SHOWN, bound: float = JUDGING_BOUND) -> list[str]:
    """Lines naming the rows of schema.table that differ between two servers."""
    name = f"`{schema}`.`{table}`"
    columns = table_columns(reference, schema, table)
    key = primary_key(reference, schema, table)
    order = ", ".join(f"`{c}`" for c in key) or "1"
    sql = f"SELECT {', '.join(f'`{c}`' for c in columns)} FROM {name} ORDER BY {order}"
    mine, theirs = read_rows(reference, sql, bound=bound), read_rows(other, sql, bound=bound)
    lines: list[str] = []
    if not key:
        a, b = Counter(mine), Counter(theirs)
        for row in sorted((a - b).keys(), key=repr)[:limit]:
            lines.append(f"{name}: row {row!r} on {reference.name} but not on {other.name}")
        for row in sorted((b - a).keys(), key=repr)[:limit]:
            lines.append(f"{name}: row {row!r} on {other.name} but not on {reference.name}")
        return lines[:limit]
    index = [columns.index(c) for c in key]
    ref_rows = {tuple(r[i] for i in index): r for r in mine}
    other_rows = {tuple(r[i] for i in index): r for r in theirs}
    for pk in sorted(set(ref_rows) | set(other_rows), key=repr):
        where = f"{name} {_key_text(key, pk)}"
        ours, their = ref_rows.get(pk), other_rows.get(pk)
        if ours == their:
            continue
        if their is None:
            lines.append(f"{where}: on {reference.name} but missing on {other.name} "
                         f"(row {dict(zip(columns, ours or ()))})")
        elif ours is None:
            lines.append(f"{where}: on {other.name} but not on {reference.name} "
                         f"(row {dict(zip(columns, their))})")
        else:
            changed = [f"{c}={x!r} on {reference.name} but {y!r} on {other.name}"
                       for c, x, y in zip(columns, ours, their) if x != y]
            lines.append(f"{where}: " + "; ".join(changed))
        if len(lines) >= limit:
            lines.append(f"{name}: (stopped after {limit} differing rows)")
            break
    return lines


def check_tables_equal(reference: Server, others: list[Server],
                       schemas: list[str] | None = None, checker: str = "checksums",
                       bound: float = JUDGING_BOUND) -> Verdict:
    """Valid when every table's checksum matches; invalid with the differing rows;
    unknown (with the reason) when a read stays refused for bound seconds."""
    try:
        schemas = schemas if schemas is not None else dbcompare.user_schemas(reference, bound)
        comparison = dbcompare.compare_checksums(reference, others, schemas, bound)
    except (QueryError, ReadUnknownError) as exc:
        return Verdict(checker, VerdictStatus.UNKNOWN, f"cannot checksum the tables: {exc}")
    names = ", ".join(o.name for o in others)
    if comparison.equal:
        count = len(comparison.tables)
        return Verdict(checker, VerdictStatus.VALID,
                       f"{count} tables in {', '.join(schemas) or 'no schema'} "
                       f"equal on {reference.name} and {names}")
    evidence = list(comparison.differences)
    by_name = {o.name: o for o in others}
    for table, other in comparison.changed:
        schema, _, name = table.partition(".")
        try:
            evidence += row_differences(reference, by_name[other], schema, name, bound=bound)
        except ReadUnknownError as exc:  # the checksums differ: invalid, rows unknown
            evidence.append(f"{table}: the differing rows could not be read: {exc}")
    return Verdict(checker, VerdictStatus.INVALID,
                   f"{len(comparison.differences)} table(s) differ between "
                   f"{reference.name} and {names}", evidence)

