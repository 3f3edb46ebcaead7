"""Is a restored server the same as the original?  Snapshots, comparisons, CHECK TABLE.

A :class:`Snapshot` keeps a deterministic dump (volatile lines removed) and
the ``CHECKSUM TABLE`` of every table of chosen schemas, taken before the
backup, because the original server is usually gone (wiped) by the time the
restored one can be compared.  :func:`compare_snapshot` gives a
:class:`~lib.checks.dbcompare.Comparison`: the tables whose checksums differ and a
unified diff of the dumps.  ``AUTO_INCREMENT=N`` table options are left
out of the dump comparison: InnoDB forgets auto-increment values it reserved
but never used when a server restarts, which is not a backup difference.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..checks import dbcompare
from ..checks.dbcompare import Comparison

if TYPE_CHECKING:
    from ..servers.server import Server


AUTO_INCREMENT_RE = re.compile(r" AUTO_INCREMENT=\d+")


def normalize_dump(text: str) -> str:
    """A dump without the ``AUTO_INCREMENT=N`` table options (see the module doc)."""
    return "".join(AUTO_INCREMENT_RE.sub("", line) if line.startswith(")") else line
                   for line in text.splitlines(keepends=True))


@dataclass
class Snapshot:
    """What a server held: schemas, deterministic dump text and per-table checksums."""

    server_name: str
    schemas: list[str]
    dump: str
    checksums: dict[str, int | None] = field(default_factory=dict)


def take_snapshot(server: Server, schemas: list[str] | None = None) -> Snapshot:
    """Dump and checksum schemas (all user schemas by default) on server."""
    schemas = schemas if schemas is not None else dbcompare.user_schemas(server)
    return Snapshot(server.name, list(schemas), dbcompare.dump_schemas(server, schemas),
                    dbcompare.table_checksums(server, schemas))


def compare_checksum_maps(expected: dict[str, int | None], got: dict[str, int | None],
                          expected_name: str, got_name: str) -> list[str]:
    """One line per table that is missing, extra, or has another checksum."""
    out = []
    for table in sorted(set(expected) | set(got)):
        if table not in got:
            out.append(f"{table}: missing on {got_name}")
        elif table not in expected:
            out.append(f"{table}: only on {got_name}")
        elif expected[table] != got[table]:
            out.append(f"{table}: checksum {expected[table]} on {expected_name} but "
                       f"{got[table]} on {got_name}")
    return out


def compare_snapshot(snapshot: Snapshot, server: Server, dumps: bool = True) -> Comparison:
    """Compare server now with snapshot: checksum differences, then the dump diff."""
    label = f"{snapshot.server_name} (snapshot)"
    result = Comparison()
    tables = compare_checksum_maps(snapshot.checksums,
                                   dbcompare.table_checksums(server, snapshot.schemas),
                                   label, server.name)
    if tables:
        result.differences.append("tables that differ:\n" + "\n".join(tables))
    if dumps:
        diff = dbcompare.diff_text(normalize_dump(snapshot.dump),
                                   normalize_dump(dbcompare.dump_schemas(server, snapshot.schemas)),
                                   label, server.name)
        if diff:
            result.differences.append("dump diff:\n" + diff)
    return result


def check_tables(server: Server, schemas: list[str] | None = None) -> list[str]:
    """CHECK TABLE every base table of schemas; the rows that are not 'OK' ([] = all fine)."""
    schemas = schemas if schemas is not None else dbcompare.user_schemas(server)
    if not schemas:
        return []
    marks = ", ".join(["%s"] * len(schemas))
    rows = server.execute(
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
        f"WHERE TABLE_TYPE='BASE TABLE' AND TABLE_SCHEMA IN ({marks}) ORDER BY 1, 2", schemas)
    tables = [f"`{s}`.`{t}`" for s, t in rows]
    problems = []
    for i in range(0, len(tables), 50):
        for table, _op, msg_type, text in server.execute("CHECK TABLE " + ", ".join(tables[i:i + 50])):
            if msg_type.lower() in ("error", "warning") or (msg_type.lower() == "status"
                                                            and text != "OK"):
                problems.append(f"{table}: {msg_type}: {text}")
    return problems
