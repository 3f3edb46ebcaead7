"""Reporters: watch the server during and after a run, as the Perl tool's ``--reporters`` do.

- **Deadlock**: every second, ``SHOW FULL PROCESSLIST``; when statements of
  the run have been running longer than ``--deadlock-timeout`` seconds
  (randgen: 600) — at least ``min(5, threads)`` of them, or any one when the
  server no longer accepts a connection within 20 s — the server is
  deadlocked (a connection refused at once is a server gone, not a hang):
  the run stops with status ``failure`` (exit 107,
  STATUS_SERVER_DEADLOCKED), the processlist and ``SHOW ENGINE INNODB
  STATUS`` are the evidence, and the stuck statements get ``KILL QUERY``.
- **Backtrace** / **ErrorLog**: when the server is lost, what its error log
  gained during the run (the crash report and stack trace mariadbd writes)
  is added to the result; the test's failure then brings kewpie's own
  evidence (core file, gdb backtrace) as for any crashed server.
- **Shutdown**: after the run, a clean shutdown and start of the server,
  then ``CHECK TABLE`` of every table.  **Recovery**: the same after a
  ``kill -9`` (crash recovery).  A server that does not come back, or a
  table that does not check ``OK``, fails the run (exit 105,
  STATUS_RECOVERY_FAILURE).

Shutdown, Recovery and the error log need the server object (a kewpie
server: ``error_log_size``/``error_log_since``, ``restart``, ``kill``,
``start``); a run given only a DSN notes that they were skipped.
"""
from __future__ import annotations

import time
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import pymysql

from .cmdline import known_names
from .connection import ConnectionSpec
from .errors import RandgenEnvironmentError

if TYPE_CHECKING:
    from ..servers.server import Server

REPORTER_ALIASES: Mapping[str, str] = MappingProxyType({
    "deadlock": "Deadlock", "deadlock1": "Deadlock", "backtrace": "Backtrace",
    "errorlog": "ErrorLog", "errorlogalarm": "ErrorLog", "shutdown": "Shutdown",
    "recovery": "Recovery", "crashrecovery": "Recovery", "restart": "Shutdown",
    "restartconsistency": "Shutdown", "recoveryconsistency": "Recovery", "none": ""})
EXIT_RECOVERY_FAILURE = 105
EXIT_DEADLOCKED = 107
CONNECT_TIMEOUT = 20
STALLED_COUNT = 5


def normalise_names(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """(known reporter names, unknown ones) from ``--reporters`` values."""
    return known_names(names, REPORTER_ALIASES)


class DeadlockWatch:
    """The Deadlock reporter: looks at the processlist once per ``interval``."""

    def __init__(self, conn: ConnectionSpec, timeout: float, threads: int,
                 interval: float = 1.0) -> None:
        self.conn = conn
        self.timeout = timeout
        self.need = max(1, min(STALLED_COUNT, threads))
        self.interval = interval
        self._next = 0.0
        self.stalled: list[dict[str, Any]] = []  # the processlist rows of the stuck statements

    def check(self, own_ids: Callable[[], set[int] | None]) -> tuple[str, list[int]] | None:
        """None, or (evidence, stuck connection ids) when the server looks deadlocked.

        own_ids gives the run's connection ids (None: any connection of the
        run's user and schema, when worker processes hold some of them).
        """
        now = time.monotonic()
        if now < self._next:
            return None
        self._next = now + self.interval
        try:
            # text as bytes (use_unicode=False), decoded here with replacement: a statement
            # sent as raw bytes (a replayed corpus has latin1 and sjis ones) is no UTF-8,
            # and PyMySQL failed to decode its processlist row (an error that ended a hunt)
            c = self.conn.connect(connect_timeout=CONNECT_TIMEOUT, use_unicode=False)
        except RandgenEnvironmentError as exc:
            if time.monotonic() - now < CONNECT_TIMEOUT * 0.9:
                return None  # refused at once: the server is gone (a crash), not hung
            return (f"Deadlock: the server did not accept a connection within "
                    f"{CONNECT_TIMEOUT}s: {exc}", [])
        try:
            with c.cursor() as cur:
                cur.execute("SHOW FULL PROCESSLIST")
                plist = [tuple(_plain(v) for v in r) for r in cur.fetchall()]
                names = [d[0] for d in cur.description]
                ids = own_ids()
                db = self.conn.database
                stalled = [r for r in plist
                           if (r[0] in ids if ids is not None else str(r[3]) == db) and r[7]
                           and str(r[4]) == "Query" and float(r[5] or 0) >= self.timeout]
                if len(stalled) < self.need:
                    return None
                self.stalled = [{n: _plain(v) for n, v in zip(names, r)} for r in stalled]
                evidence = [f"Deadlock: {len(stalled)} statement(s) of the run running for "
                            f"{self.timeout:g}s or more: the server is deadlocked "
                            f"(STATUS_SERVER_DEADLOCKED)", "SHOW FULL PROCESSLIST:",
                            "  " + " | ".join(names)]
                evidence += ["  " + " | ".join(_cell(v) for v in r) for r in plist]
                try:
                    cur.execute("SHOW ENGINE INNODB STATUS")
                    row = cur.fetchone()
                    if row:
                        evidence += ["SHOW ENGINE INNODB STATUS:", str(_plain(row[2]))[:6000]]
                except pymysql.MySQLError:
                    pass
                return "\n".join(evidence), [int(r[0]) for r in stalled]
        except pymysql.MySQLError:
            # no verdict: a failed look is no evidence of a deadlock (a replayed corpus can
            # make it fail: the table '(temporary)' is full); a server that stopped
            # answering is the health check's to judge after the load
            return None
        finally:
            c.close()


def _plain(value: Any) -> Any:
    """A processlist value as JSON-friendly data (bytes decoded, decimals as floats)."""
    if value is None or isinstance(value, (int, float, str)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def _cell(value: Any) -> str:
    text = "NULL" if value is None else str(value)
    return text if len(text) <= 300 else text[:297] + "..."


def crash_report(server: Server, mark: int) -> str:
    """Backtrace/ErrorLog: what the server's error log gained since mark (its crash report)."""
    try:
        text = server.errlog.since(mark)
    except (OSError, AttributeError) as exc:
        return f"ErrorLog: cannot read the error log: {exc}"
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines)
                  if "got signal" in ln or "Attempting backtrace" in ln or "[ERROR]" in ln), 0)
    shown = lines[start:start + 120]
    return ("Backtrace/ErrorLog: the server's error log during the run"
            + (f" (from line {start + 1})" if start else "") + ":\n" + "\n".join(shown)
            if shown else "Backtrace/ErrorLog: the error log gained nothing during the run")


def restart_and_check(server: Server, conn: ConnectionSpec, crash: bool,
                      log: Callable[[str], None]) -> tuple[bool, str]:
    """Shutdown (crash=False) or Recovery (crash=True): restart, then CHECK TABLE everything.

    Returns (passed, report).
    """
    name = "Recovery" if crash else "Shutdown"
    t0 = time.monotonic()
    mark = server.errlog.size()
    try:
        if crash:
            server.kill()
            server.start()
        else:
            server.stop()
            server.start()
    except Exception as exc:  # a server that does not come back is the finding
        tail = server.errlog.since(mark)[-3000:]
        return False, f"{name}: the server did not come back: {exc}\n{tail}"
    log(f"{name}: server {'killed' if crash else 'shut down'} and started again in "
        f"{time.monotonic() - t0:.1f}s; checking tables")
    bad: list[str] = []
    checked = 0
    try:
        c = conn.connect(database="")
    except RandgenEnvironmentError as exc:
        return False, f"{name}: the server does not answer after the restart: {exc}"
    try:
        with c.cursor() as cur:
            cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE "
                        "TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('mysql', "
                        "'information_schema', 'performance_schema', 'sys')")
            for schema, table in cur.fetchall():
                try:
                    cur.execute(f"CHECK TABLE `{schema}`.`{table}` EXTENDED")
                    rows = cur.fetchall()
                except pymysql.MySQLError as exc:
                    bad.append(f"{schema}.{table}: {exc}")
                    continue
                checked += 1
                status = [r for r in rows if str(r[2]).lower() in ("status", "error")]
                if not any(str(r[3]) in ("OK", "Table is already up to date") for r in status) \
                        and status:
                    bad.append(f"{schema}.{table}: " + "; ".join(str(r[3]) for r in rows))
    finally:
        c.close()
    corrupt = [ln for ln in server.errlog.since(mark).splitlines()
               if "corrupt" in ln.lower() and "[ERROR]" in ln]
    if bad or corrupt:
        return False, (f"{name}: {len(bad)} of {checked} table(s) failed CHECK TABLE after the "
                       f"restart (STATUS_RECOVERY_FAILURE):\n" + "\n".join(bad[:20] + corrupt[:20]))
    return True, (f"{name}: the server came back after a {'crash' if crash else 'clean shutdown'}"
                  f"; {checked} table(s) checked, all OK")
