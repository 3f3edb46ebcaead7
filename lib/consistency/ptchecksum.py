"""pt-table-checksum (percona-toolkit) for a primary and its replicas.

The tool checksums the primary's tables chunk by chunk with statements that
replicate, so each replica computes the same checksums on its own data into
``percona.checksums``.  With ROW-based replicas it needs
``--no-check-binlog-format`` (the checksum statements replicate as statements
anyway: the tool sets its session's binlog_format).  Differences are
reported per chunk from the replicas' checksum table, then per row with a
primary-key comparison of the table.  The replicas to check are listed in a
DSN table on the primary (``--recursion-method=dsn``), so a check covers
exactly the replicas asked for.
"""
from __future__ import annotations

import os
import shutil
from types import MappingProxyType

from .reads import read_rows
from .tables import row_differences
from .verdict import INVALID, UNKNOWN_VERDICT, VALID, Verdict
from ..errors import QueryError
from ..platform.tools import run_tool
from ..servers.judging import ReadUnknownError
from ..servers.server import Server

TABLE_DIFF = 16
FLAG_NAMES = MappingProxyType({1: "ERROR", 2: "ALREADY_RUNNING", 4: "CAUGHT_SIGNAL",
                               8: "NO_SLAVES_FOUND", 16: "TABLE_DIFF", 32: "SKIP_CHUNK",
                               64: "SKIP_TABLE", 128: "REPLICATION_STOPPED"})
CHECKSUM_SCHEMA = "percona"


DSN_TABLE = "kewpie_dsns"


def dsn(server: Server) -> str:
    """A percona-toolkit DSN for server (root over TCP)."""
    return f"h={server.host},P={server.port},u=root"


def pt_table_checksum_command(tool: str, primary: Server, schemas: list[str]) -> list[str]:
    """The command line: TCP to the primary, the replicas listed in a DSN table."""
    return [tool, dsn(primary), f"--databases={','.join(schemas)}",
            f"--recursion-method=dsn={dsn(primary)},D={CHECKSUM_SCHEMA},t={DSN_TABLE}",
            "--no-check-binlog-format", "--no-version-check",
            f"--replicate={CHECKSUM_SCHEMA}.checksums"]


def write_dsn_table(primary: Server, replicas: list[Server]) -> None:
    """List exactly the replicas to check (``--recursion-method=dsn``) on the primary."""
    primary.execute(f"CREATE DATABASE IF NOT EXISTS `{CHECKSUM_SCHEMA}`")
    primary.execute(f"CREATE TABLE IF NOT EXISTS `{CHECKSUM_SCHEMA}`.`{DSN_TABLE}` "
                    f"(id INT PRIMARY KEY, parent_id INT, dsn VARCHAR(255) NOT NULL)")
    primary.execute(f"DELETE FROM `{CHECKSUM_SCHEMA}`.`{DSN_TABLE}`")
    for i, replica in enumerate(replicas, start=1):
        primary.execute(f"INSERT INTO `{CHECKSUM_SCHEMA}`.`{DSN_TABLE}` VALUES (%s, NULL, %s)",
                        (i, dsn(replica)))


def tool_env(primary: Server) -> dict[str, str]:
    """The tool's environment: TMPDIR in the primary's vardir, so nothing goes to /tmp."""
    env = dict(os.environ)
    tmpdir = getattr(primary, "tmpdir", None)
    if tmpdir and os.path.isdir(tmpdir):
        env["TMPDIR"] = tmpdir
    return env


def tool_error(text: str) -> str:
    """The informative part of the tool's error output, on one line."""
    lines = [l.strip() for l in text.splitlines() if l.strip()
             and not l.startswith(("Checking if", "Starting checksum"))]
    return " ".join(" ".join(lines[:3]).split())[:400] or "no output"


def flags(returncode: int) -> list[str]:
    """The names of the bits set in the tool's exit status."""
    return [name for bit, name in FLAG_NAMES.items() if returncode & bit]


def parse_report(text: str) -> list[dict[str, str]]:
    """The tool's per-table lines as dicts keyed by its header (TS, ERRORS, DIFFS, ... TABLE)."""
    rows: list[dict[str, str]] = []
    header: list[str] = []
    for line in text.splitlines():
        fields = line.split()
        if fields[:2] == ["TS", "ERRORS"]:
            header = fields
        elif header and len(fields) == len(header):
            rows.append(dict(zip(header, fields)))
    return rows


def differing_chunks(replica: Server, primary: Server) -> list[str]:
    """Chunks whose count or checksum on replica differs from the primary's."""
    sql = (f"SELECT db, tbl, chunk, lower_boundary, upper_boundary, this_cnt, master_cnt, "
           f"this_crc, master_crc FROM `{CHECKSUM_SCHEMA}`.checksums WHERE master_cnt <> this_cnt "
           f"OR master_crc <> this_crc OR ISNULL(master_crc) <> ISNULL(this_crc) "
           f"ORDER BY db, tbl, chunk")
    try:
        rows = read_rows(replica, sql)
    except (QueryError, ReadUnknownError) as exc:
        return [f"cannot read {CHECKSUM_SCHEMA}.checksums on {replica.name}: {exc}"]
    return [f"pt-table-checksum: {db}.{tbl} chunk {chunk} ({lower} .. {upper}) differs on "
            f"{replica.name}: {this_cnt} rows, crc {this_crc} vs {master_cnt} rows, crc "
            f"{master_crc} on {primary.name}"
            for db, tbl, chunk, lower, upper, this_cnt, master_cnt, this_crc, master_crc in rows]


def check_pt_table_checksum(primary: Server, replicas: list[Server], schemas: list[str],
                            tool: str | None = None, timeout: float = 300.0) -> Verdict:
    """Run pt-table-checksum on primary; invalid with chunks and rows when replicas differ."""
    tool = tool or shutil.which("pt-table-checksum")
    if not tool:
        return Verdict("pt-table-checksum", UNKNOWN_VERDICT,
                       "pt-table-checksum is not installed (package percona-toolkit)")
    if not replicas:
        return Verdict("pt-table-checksum", UNKNOWN_VERDICT, f"{primary.name} has no replicas")
    try:
        write_dsn_table(primary, replicas)
    except QueryError as exc:
        return Verdict("pt-table-checksum", UNKNOWN_VERDICT, f"cannot list the replicas: {exc}")
    argv = pt_table_checksum_command(tool, primary, schemas)
    try:
        proc = run_tool(argv, timeout=timeout, env=tool_env(primary))
    except OSError as exc:
        return Verdict("pt-table-checksum", UNKNOWN_VERDICT, f"cannot run {argv[0]}: {exc}")
    if proc.timed_out:
        return Verdict("pt-table-checksum", UNKNOWN_VERDICT,
                       f"did not finish within {timeout:.0f}s", [f"command: {' '.join(argv)}"])
    took = proc.seconds
    command = " ".join(argv)
    if proc.returncode == 255 or (proc.returncode & ~(TABLE_DIFF | 32 | 64)):
        return Verdict("pt-table-checksum", UNKNOWN_VERDICT,
                       f"exit {proc.returncode} ({', '.join(flags(proc.returncode)) or 'fatal'}): "
                       f"{tool_error(proc.stderr or proc.stdout)}", [f"command: {command}"])
    tables = parse_report(proc.stdout)
    diff_tables = [t for t in tables if t.get("DIFFS", "0") != "0"]
    if not proc.returncode & TABLE_DIFF and not diff_tables:
        skipped = f"; skipped: {', '.join(flags(proc.returncode))}" if proc.returncode else ""
        status = VALID if not proc.returncode else UNKNOWN_VERDICT
        return Verdict("pt-table-checksum", status,
                       f"{len(tables)} tables checksummed on {primary.name} and "
                       f"{len(replicas)} replica(s), no differences ({took:.1f}s){skipped}",
                       [f"command: {command}"])
    evidence = [f"pt-table-checksum: {t['TABLE']}: {t['DIFFS']} differing chunk(s) of "
                f"{t.get('CHUNKS', '?')}, {t.get('ROWS', '?')} rows" for t in diff_tables]
    for replica in replicas:
        evidence += differing_chunks(replica, primary)
        for t in diff_tables:
            schema, _, table = t["TABLE"].partition(".")
            try:
                evidence += row_differences(primary, replica, schema, table)
            except ReadUnknownError as exc:  # the chunks differ: invalid, rows unknown
                evidence.append(f"{t['TABLE']}: the differing rows could not be read: {exc}")
    return Verdict("pt-table-checksum", INVALID,
                   f"{len(diff_tables)} of {len(tables)} tables differ between {primary.name} "
                   f"and its replicas", evidence + [f"command: {command}"])
