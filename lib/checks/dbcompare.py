"""Dumps, checksums and comparisons of schemas across servers.

The checksum reads are judging reads (lib/servers/judging.py): a transient
refusal is retried within a bound, then ReadUnknownError."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..errors import KewpieError
from ..servers.judging import JUDGING_BOUND, retry_transient
from ..servers.server import Server
from ..platform.tools import run_tool

SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")
VOLATILE_DUMP_PREFIXES = ("-- Dump completed", "-- MariaDB dump", "-- MySQL dump",
                          "-- Server version", "-- Host:")


class DumpError(KewpieError):
    """The dump tool failed."""


def _judging(server: Server, sql: str, args: object = None,
             bound: float = JUDGING_BOUND) -> list[tuple[Any, ...]]:
    """server.execute as a judging read: transient refusals (lock wait timeout,
    deadlock, node not ready) retried for bound seconds, then ReadUnknownError
    (lib/servers/judging.py)."""
    return retry_transient(lambda: server.execute(sql, args), f"checksum read on {server.name}",
                           bound)


def user_schemas(server: Server, bound: float = JUDGING_BOUND) -> list[str]:
    """Every schema except the system ones."""
    rows = _judging(server, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1",
                    bound=bound)
    return [r[0] for r in rows if r[0] not in SYSTEM_SCHEMAS]


def dump_schemas(server: Server, schemas: list[str] | None = None, path: str | None = None) -> str:
    """A deterministic SQL dump of schemas (all user schemas by default) as text."""
    schemas = schemas if schemas is not None else user_schemas(server)
    argv = [server.tree.tool("dump"), "--no-defaults", f"--socket={server.paths.socket_file}",
            "--user=root",
            "--skip-dump-date", "--skip-comments", "--order-by-primary", "--routines",
            "--triggers", "--skip-extended-insert", "--databases", *schemas]
    if not schemas:
        return ""
    proc = run_tool(argv, timeout=600)
    if proc.timed_out:
        raise DumpError(f"{argv[0]} did not finish on {server.name} within 600 s")
    if proc.returncode != 0:
        raise DumpError(f"{argv[0]} failed on {server.name} (exit {proc.returncode}): "
                        f"{proc.stderr.strip()[:500]}")
    text = filter_dump(proc.stdout)
    if path:
        with open(path, "w") as fh:
            fh.write(text)
    return text


def filter_dump(text: str) -> str:
    """Remove the lines of a dump that change from run to run."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith(VOLATILE_DUMP_PREFIXES))


def diff_text(a: str, b: str, name_a: str, name_b: str, limit: int = 200) -> str:
    """A unified diff of two texts ('' when equal), cut to limit lines."""
    lines = list(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                      fromfile=name_a, tofile=name_b))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)\n"]
    return "".join(lines)


def table_checksums(server: Server, schemas: list[str] | None = None,
                    bound: float = JUDGING_BOUND) -> dict[str, int | None]:
    """``CHECKSUM TABLE`` of every base table in schemas: {'schema.table': checksum}
    (judging reads: transient refusals retried for bound seconds)."""
    schemas = schemas if schemas is not None else user_schemas(server, bound)
    if not schemas:
        return {}
    marks = ", ".join(["%s"] * len(schemas))
    rows = _judging(
        server, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
        f"WHERE TABLE_TYPE='BASE TABLE' AND TABLE_SCHEMA IN ({marks}) ORDER BY 1, 2", schemas, bound)
    tables = [f"`{s}`.`{t}`" for s, t in rows]
    result: dict[str, int | None] = {}
    for i in range(0, len(tables), 100):
        chunk = "CHECKSUM TABLE " + ", ".join(tables[i:i + 100])
        for name, checksum in _judging(server, chunk, bound=bound):
            result[name] = checksum
    return result


@dataclass
class Comparison:
    """The outcome of comparing servers: equal, or the differences."""

    differences: list[str] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)  # (schema.table, other server)
    tables: list[str] = field(default_factory=list)  # the reference's tables (checksums)

    @property
    def equal(self) -> bool:
        """True when nothing differs."""
        return not self.differences

    def __str__(self) -> str:
        return "equal" if self.equal else "\n".join(self.differences)


def compare_checksums(reference: Server, others: Sequence[Server],
                      schemas: list[str] | None = None,
                      bound: float = JUDGING_BOUND) -> Comparison:
    """Compare per-table checksums of others against reference (judging reads:
    transient refusals retried for bound seconds, then ReadUnknownError)."""
    schemas = schemas if schemas is not None else user_schemas(reference, bound)
    expected = table_checksums(reference, schemas, bound)
    result = Comparison(tables=sorted(expected))
    for other in others:
        got = table_checksums(other, schemas, bound)
        for table in sorted(set(expected) | set(got)):
            if table not in got:
                result.differences.append(f"{table}: missing on {other.name}")
            elif table not in expected:
                result.differences.append(f"{table}: only on {other.name}")
            elif expected[table] != got[table]:
                result.changed.append((table, other.name))
                result.differences.append(f"{table}: checksum {expected[table]} on "
                                          f"{reference.name} but {got[table]} on {other.name}")
    return result


def compare_dumps(reference: Server, others: Sequence[Server],
                  schemas: list[str] | None = None) -> Comparison:
    """Compare deterministic dumps of others against reference (diff on mismatch)."""
    schemas = schemas if schemas is not None else user_schemas(reference)
    expected = dump_schemas(reference, schemas)
    result = Comparison()
    for other in others:
        diff = diff_text(expected, dump_schemas(other, schemas), reference.name, other.name)
        if diff:
            result.differences.append(diff)
    return result
