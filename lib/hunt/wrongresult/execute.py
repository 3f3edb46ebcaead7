"""Running one generated statement and judging its errors.

:func:`run_query` executes a statement on any DB-API connection (PyMySQL,
mysqlclient) and returns an :class:`Outcome`: the rows, or the error code
and message.  A lost connection is no outcome: it raises
:class:`~lib.hunt.wrongresult.errors.ServerLostError` (the hunt's crash and
hang oracles judge the server; a wrong-result oracle stops).

:func:`error_kind` sorts error codes: ``'lost'`` (the connection is gone),
``'generator'`` (the generated SQL is malformed: a bug of the generator,
counted apart so a benchmark shows it) or ``'expected'`` (a data-dependent
error such as an out-of-range value, a subquery returning more than one row,
an illegal mix of collations, a statement timeout).  Every SQL error skips
the check it happened in: it is never a finding.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ...servers.sql import LOST_CONNECTION_CODES, error_code
from .errors import ServerLostError

# malformed SQL: the generator's fault, not the data's
GENERATOR_ERROR_CODES = frozenset({
    1064,  # syntax error
    1052,  # column is ambiguous
    1054,  # unknown column (the generator only names columns of its tables)
    1111,  # invalid use of group function
    1140,  # mixing of GROUP columns without GROUP BY
    1055,  # not in GROUP BY (ONLY_FULL_GROUP_BY)
    1221,  # incorrect usage of UNION and ORDER BY / LIMIT
    1222,  # different number of columns in a UNION
    1248,  # every derived table must have an alias
    1582, 1583, 1584,  # wrong parameter count / parameters to a native function
})
TIMEOUT_ERROR_CODES = frozenset({1969, 1317, 3024, 1028})
# a result set the driver could not decode (a value not valid in the connection's
# character set): an expected error, the check is skipped
UNDECODABLE = -2
STATEMENT_TIMEOUT = 10.0   # seconds: max_statement_time of every generated statement
DRIVER_MODULES = frozenset({"pymysql", "MySQLdb", "_mysql_exceptions"})


class Connection(Protocol):
    """The part of a DB-API connection the oracles use."""

    def cursor(self) -> Any:
        """A new cursor."""


@dataclass(frozen=True)
class Outcome:
    """What one statement gave: rows (a result set) or an error code and message."""

    rows: tuple[tuple[Any, ...], ...] | None = None
    error: int = 0
    message: str = ""
    decimals: tuple[int, ...] = ()  # each result column's scale (the driver's description)
    types: tuple[int, ...] = ()     # each result column's protocol type code (same source)
    lengths: tuple[int, ...] = ()   # each result column's length (same source)
    unsigned: tuple[bool, ...] = ()  # each result column's UNSIGNED flag (the protocol's fields)
    affected: int = -1              # a statement without a result set: its affected rows

    @property
    def failed(self) -> bool:
        """True when the statement ended in an SQL error."""
        return self.error != 0 or self.rows is None


def error_kind(code: int) -> str:
    """'lost', 'generator' or 'expected' for an error code (see the module docstring)."""
    if code in LOST_CONNECTION_CODES:
        return "lost"
    if code in GENERATOR_ERROR_CODES:
        return "generator"
    return "expected"


def _is_lost(exc: BaseException, code: int) -> bool:
    if code in LOST_CONNECTION_CODES:
        return True
    # PyMySQL raises InterfaceError (code 0) on a closed connection; a broken socket
    # surfaces as OSError
    return type(exc).__name__ == "InterfaceError" or isinstance(exc, (OSError, EOFError))


def run_query(conn: Connection, sql: str) -> Outcome:
    """Execute sql on conn: its rows, or the SQL error (ServerLostError when the connection died)."""
    try:
        with conn.cursor() as cur:
            count = cur.execute(sql)
            affected = -1 if cur.description else int(count or 0)
            rows = tuple(tuple(r) for r in cur.fetchall()) if cur.description else ()
            described = cur.description or ()
            decimals = tuple(_field(d, 5) for d in described)
            types = tuple(_field(d, 1) for d in described)
            lengths = tuple(_field(d, 3) for d in described)
            unsigned = unsigned_flags(cur, len(described))
            while cur.nextset():
                if cur.description:
                    cur.fetchall()
        return Outcome(rows, decimals=decimals, types=types, lengths=lengths, unsigned=unsigned,
                       affected=affected)
    except UnicodeDecodeError as exc:
        reopen(conn)
        return Outcome(None, UNDECODABLE, f"a value the driver cannot decode ({exc.reason} at "
                                          f"byte {exc.start}); the connection was reopened")
    except Exception as exc:  # DB-API errors differ by driver: sorted by code below
        code = error_code(exc)
        if _is_lost(exc, code):
            raise ServerLostError(f"the connection was lost running: {sql[:300]} ({exc})") from exc
        if type(exc).__module__.split(".")[0] not in DRIVER_MODULES:
            raise  # not an SQL error: a bug, shown as one
        message = str(exc.args[1]) if len(getattr(exc, "args", ())) > 1 else str(exc)
        return Outcome(None, code or -1, message)


def _field(description: Any, index: int) -> int:
    """One number of a column's DB-API description (0 when the driver gives none)."""
    try:
        return int(description[index] or 0)
    except (IndexError, TypeError, ValueError):
        return 0


UNSIGNED_FLAG = 32  # the protocol's column flag


def unsigned_flags(cur: Any, count: int) -> tuple[bool, ...]:
    """Each result column's UNSIGNED flag: DB-API's description has no flags, so they are
    read from PyMySQL's fields (or mysqlclient's description_flags); all False when the
    driver gives neither."""
    fields = getattr(getattr(cur, "_result", None), "fields", None)
    flags = ([getattr(f, "flags", 0) for f in fields] if fields
             else list(getattr(cur, "description_flags", None) or ()))
    if len(flags) != count:
        return (False,) * count
    return tuple(bool(int(f or 0) & UNSIGNED_FLAG) for f in flags)


def reopen(conn: Connection) -> None:
    """Close and reopen a PyMySQL connection whose result set could not be decoded.

    PyMySQL stops reading a result set at the first value it cannot decode, and
    the rest of it stays on the socket: the next statement would read it.  The
    connection is reopened (same account and schema; the session starts with
    ``max_statement_time`` at :data:`STATEMENT_TIMEOUT`); ServerLostError when
    that fails."""
    try:
        conn.close()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - the connection is out of step: any error is expected
        pass
    try:
        conn.connect()  # type: ignore[attr-defined]
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION max_statement_time = {STATEMENT_TIMEOUT:g}")
    except Exception as exc:  # noqa: BLE001 - DB-API errors differ by driver
        raise ServerLostError(f"cannot reopen the connection after an undecodable result: "
                              f"{exc}") from exc
