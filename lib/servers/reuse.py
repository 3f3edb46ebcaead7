"""The reuse rule: may the next test have this set of servers?  (docs/servers.md)

After a passing test, every server must be running with the pid it was handed
over with, replicas and cluster nodes must have applied everything (10 s),
and each server's :mod:`fingerprint <lib.servers.fingerprint>` must equal the
one taken when the set started: what the next test would see, not whether
anything was written.  The ``test`` schema is exempt: when it holds
anything it is dropped and recreated on every server, unlogged and
unreplicated (``sql_log_bin=0``, and ``wsrep_on=0`` on Galera nodes) so no
GTID position moves, and the servers are fingerprinted again.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Callable, Hashable, Mapping, Sequence


from ..errors import KewpieError, QueryError
from .fingerprint import (SETTLING_PARTS, TEST_SCHEMA, Fingerprint, Part,
                          StateProbe, changed_parts, describe_changes)
from .server import Server

SETTLE_SECONDS = 0.5  # a connection closed by the test may be listed for a moment
APPLY_WAIT_SECONDS = 10.0
EMPTY_LOCK_WAIT_SECONDS = 5


@dataclass(frozen=True)
class Baseline:
    """Each server's probe and its fingerprint as handed to the first test of the set."""

    probes: Mapping[str, StateProbe]
    prints: Mapping[str, Fingerprint]


class BaselineTaker:
    """Takes baselines, remembering per (requirements, server) what a fresh server of
    those requirements has in common with the next: its parts (which privilege
    tables it has) and, for --verbose, its rows, so a reset costs one query per
    server and details are read once per requirements rather than per reset."""

    def __init__(self) -> None:
        self._parts: dict[tuple[Hashable, str], tuple[Part, ...]] = {}
        self._details: dict[tuple[Hashable, str], Mapping[str, Mapping[str, str]]] = {}

    def take(self, key: Hashable, servers: Sequence[Server], with_details: bool) -> Baseline:
        """Fingerprint each server of a set started for requirements key."""
        probes, prints = {}, {}
        for server in servers:
            known = (key, server.name)
            probe = StateProbe(server, self._parts.get(known))
            self._parts[known] = probe.parts
            print_ = probe.take(server.pid)
            if with_details:
                if known not in self._details:
                    self._details[known] = probe.details(probe.by_name)
                print_ = dataclasses.replace(print_, details=self._details[known])
            probes[server.name], prints[server.name] = probe, print_
        return Baseline(probes, prints)


def settled_fingerprint(server: Server, probe: StateProbe, before: Fingerprint,
                        wait: float = SETTLE_SECONDS) -> Fingerprint:
    """The server's fingerprint; while it differs from before only in parts that settle
    by themselves (a session the test just closed), look again for up to wait seconds."""
    deadline = time.monotonic() + wait
    while True:
        after = probe.take(server.pid)
        names = changed_parts(before, after)
        if not names or not set(names) <= SETTLING_PARTS or time.monotonic() >= deadline:
            return after
        time.sleep(0.02)


def server_reason(server: Server, probe: StateProbe, before: Fingerprint | None,
                  with_details: bool) -> tuple[str | None, Fingerprint | None]:
    """Why this server cannot be reused (None: it can), and its fingerprint."""
    if before is None:
        return f"{server.name} has no baseline", None
    try:
        after = settled_fingerprint(server, probe, before)
        problem = server.reuse_problem()
    except (QueryError, KewpieError) as exc:
        return f"{server.name} does not answer: {exc}", None
    if problem:
        return problem, after
    names = changed_parts(before, after)
    if not names:
        return None, after
    if names != ["restarted"] and with_details and before.details:
        try:
            after = dataclasses.replace(after, details=probe.details(names))
        except QueryError:
            pass
    return f"{server.name} changed: {describe_changes(before, after, names)}", after


def empty_test_schema(server: Server) -> None:
    """Drop and recreate ``test`` on this server only: no binlog event, no Galera write set."""
    conn = server.connect(read_timeout=EMPTY_LOCK_WAIT_SECONDS * 4)
    try:
        with conn.cursor() as cur:
            for statement in server.sql.unreplicated_session:
                cur.execute(statement)
            cur.execute(f"SET SESSION lock_wait_timeout = {EMPTY_LOCK_WAIT_SECONDS}")
            cur.execute(f"DROP DATABASE IF EXISTS `{TEST_SCHEMA}`")
            cur.execute(f"CREATE DATABASE `{TEST_SCHEMA}`")
    finally:
        conn.close()


def set_reasons(servers: Sequence[Server], baseline: Baseline,
                wait_applied: Callable[[float], None], with_details: bool) -> list[str]:
    """Why the set cannot go to the next test ([] = it can; ``test`` has been emptied)."""
    import pymysql  # not at import: ~15 ms (ssl), after the first server's launch
    reasons = [f"{s.name} is not running" for s in servers if not s.is_alive()]
    if reasons:
        return reasons
    try:
        wait_applied(APPLY_WAIT_SECONDS)
    except (KewpieError, QueryError, pymysql.MySQLError, OSError) as exc:
        return [f"replicas/nodes did not apply everything within {APPLY_WAIT_SECONDS:g}s: "
                f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"]
    prints: dict[str, Fingerprint] = {}
    for server in servers:
        server.sql.close()  # the test's session state (USE, SET SESSION, temp tables) ends here
        reason, after = server_reason(server, baseline.probes[server.name],
                                      baseline.prints.get(server.name), with_details)
        if reason:
            reasons.append(reason)
        elif after is not None:
            prints[server.name] = after
    if reasons or not any(p.test_objects for p in prints.values()):
        return reasons
    try:
        for server in servers:
            empty_test_schema(server)
    except (pymysql.MySQLError, KewpieError) as exc:
        return [f"emptying the test schema failed: {exc}"]
    for server in servers:
        reason, after = server_reason(server, baseline.probes[server.name],
                                      baseline.prints.get(server.name), with_details)
        if reason:
            reasons.append(f"after emptying {TEST_SCHEMA}: {reason}")
        elif after is not None and after.test_objects:
            reasons.append(f"{server.name}: {TEST_SCHEMA} still holds {after.test_objects} "
                           f"object(s)")
    return reasons
