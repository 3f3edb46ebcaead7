"""The divergence oracle: replicas or Galera nodes that no longer agree after a trial.

Once the load is over, every replica (node) is given ``timeout`` seconds to
apply what its primary (the cluster) committed -- the manager's own wait
(:mod:`lib.servers.replication`, :mod:`lib.servers.galera_cluster`).  A
replica that stopped (an SQL-thread error) or does not catch up is a
finding, signed with its error code.  Then the tables are compared with the
consistency checkers' pieces (:mod:`lib.checks.dbcompare` checksums,
:func:`lib.consistency.tables.row_differences` for the rows): tables that
differ are a finding signed with the set's kind and the tables' names.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Sequence

import pymysql

from ..checks import dbcompare
from ..consistency.tables import row_differences
from ..errors import KewpieError, QueryError
from ..servers.replication import replica_status
from .finding import Finding
from .signature import divergence_signature

if TYPE_CHECKING:
    from ..servers.server import Server

ROWS_SHOWN = 20
_TABLE_RE = re.compile(r"^(`[^`]*`\.`[^`]*`|\S+):")


def _stopped(replicas: Sequence[Server]) -> list[tuple[Server, dict[str, object]]]:
    """Replicas whose replication threads stopped, with their status."""
    found = []
    for replica in replicas:
        try:
            status = replica_status(replica)
        except QueryError:
            continue
        if status and (status.get("Slave_SQL_Running") != "Yes"
                       or status.get("Slave_IO_Running") != "Yes"):
            found.append((replica, status))
    return found


def apply_finding(set_kind: str, replicas: Sequence[Server], error: Exception) -> Finding:
    """The finding for a set whose replicas (nodes) did not apply the trial's writes."""
    stopped = _stopped(replicas) if set_kind == "replication" else []
    if stopped:
        replica, status = stopped[0]
        errno = status.get("Last_SQL_Errno") or status.get("Last_IO_Errno") or 0
        what = f"replica stopped: error {errno}"
        why = status.get("Last_SQL_Error") or status.get("Last_IO_Error")
        summary = f"{replica.name} stopped replicating: {why}"
        details: dict[str, object] = {
            "replica": replica.name, "errno": errno,
            "status": {k: str(v) for k, v in status.items()}}
        server = replica.name
    else:
        what = "did not catch up"
        summary = f"the {set_kind} set did not apply the trial's writes: {error}"
        details = {"error": str(error)}
        server = replicas[0].name if replicas else "s0"
    return Finding("divergence", "divergence", divergence_signature(set_kind, what), summary,
                   server, details, {"divergence.txt": f"{summary}\n{error}\n"})


def compare_finding(set_kind: str, reference: Server, others: Sequence[Server]) -> Finding | None:
    """The finding for tables that differ between reference and others (None: all equal)."""
    schemas = dbcompare.user_schemas(reference)
    comparison = dbcompare.compare_checksums(reference, others, schemas)
    if comparison.equal:
        return None
    tables = sorted({m.group(1).replace("`", "") for line in comparison.differences
                     if (m := _TABLE_RE.match(line))})
    evidence = list(comparison.differences)
    by_name = {o.name: o for o in others}
    for table, other in comparison.changed:
        schema, _, name = table.replace("`", "").partition(".")
        try:
            evidence += row_differences(reference, by_name[other], schema, name, ROWS_SHOWN)
        except QueryError as exc:
            evidence.append(f"{table}: rows not compared: {exc}")
    names = ", ".join(o.name for o in others)
    summary = (f"{len(tables)} table(s) differ between {reference.name} and {names}: "
               f"{', '.join(tables[:5])}")
    return Finding("divergence", "divergence",
                   divergence_signature(set_kind, "tables differ: " + ", ".join(tables)),
                   summary, others[0].name if others else reference.name,
                   {"tables": tables, "differences": evidence[:200]},
                   {"divergence.txt": summary + "\n" + "\n".join(evidence) + "\n"})


def divergence_findings(set_kind: str, servers: Sequence[Server],
                        wait_applied: Callable[[float], None], timeout: float) -> list[Finding]:
    """Wait for the set to apply, then compare each replica (node) with s0."""
    reference, others = servers[0], list(servers[1:])
    if not others:
        return []
    try:
        wait_applied(timeout)
    except (KewpieError, pymysql.MySQLError) as exc:
        return [apply_finding(set_kind, others, exc)]
    finding = compare_finding(set_kind, reference, others)
    return [finding] if finding else []
