"""Reads that judge a run: a transient refusal is "unknown, retry", within a bound.

A read whose rows decide a verdict (a workload's final state, a table
checksum, a causal ``wsrep_sync_wait`` read, a list read) may be refused for
reasons that say nothing about the data: a lock wait timeout (1205, also what
a causal read that waited too long for its node to catch up returns), a
deadlock (1213, also what Galera returns for a certification failure), a
Galera node not ready for statements (1047, ``WSREP has not yet prepared node
for application use``, while it rejoins or re-forms its component).  Jepsen's
clients treat such an outcome as indeterminate, not as an answer: so does
:func:`retry_transient`, which runs the read again with a growing pause until
it answers or ``bound`` seconds have passed.  Then it raises
:class:`ReadUnknownError` with the reason (every code seen, the last message,
the attempts), and the checker's verdict is ``unknown`` with that reason:
never a crash, never a silent pass.  Any other error is raised at once (it
is an answer: a missing table, a dead server).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping, TypeVar


from ..errors import QueryError
from ..platform.logsetup import get_logger

T = TypeVar("T")

# code -> what it means for a judging read (the reason a verdict names)
TRANSIENT_CODES: Mapping[int, str] = MappingProxyType({
    1205: "lock wait timeout (or a causal read that waited too long)",
    1213: "deadlock (or a Galera certification failure)",
    1047: "Galera node not ready (wsrep not prepared for application use)",
})
JUDGING_BOUND = 90.0  # seconds (three causal reads' own 30 s waits) a judging read keeps retrying before it says unknown
FIRST_PAUSE = 0.2
MAX_PAUSE = 2.0


class ReadUnknownError(Exception):
    """A judging read was refused transiently until its bound ran out: its outcome is
    unknown (the checker's verdict says so, with ``reason``)."""

    def __init__(self, what: str, reason: str, attempts: int, waited: float) -> None:
        super().__init__(f"{what}: unknown after {attempts} attempts in {waited:.1f}s: {reason}")
        self.what = what
        self.reason = reason
        self.attempts = attempts
        self.waited = waited


def transient_code(exc: BaseException) -> int:
    """The error code of exc when it is a transient refusal (TRANSIENT_CODES), else 0."""
    import pymysql  # not at import: ~15 ms (ssl), after the first server's launch
    if isinstance(exc, QueryError):
        code = exc.code
    elif isinstance(exc, pymysql.MySQLError) and exc.args and isinstance(exc.args[0], int):
        code = exc.args[0]
    else:
        return 0
    return code if code in TRANSIENT_CODES else 0


@dataclass
class Attempts:
    """What the refused attempts of one read said."""

    count: int = 0
    codes: list[int] = field(default_factory=list)
    last: str = ""
    last_code: int = 0

    def note(self, code: int, exc: BaseException) -> None:
        """Record one refusal."""
        self.count += 1
        self.last_code = code
        if code not in self.codes:
            self.codes.append(code)
        self.last = " ".join(str(exc).split())[:200]

    def reason(self) -> str:
        """Every code seen with its meaning, then the last message."""
        seen = ", ".join(f"{c} {TRANSIENT_CODES[c]}" for c in self.codes)
        return f"refused ({seen}); last: {self.last}"


def retry_transient(read: Callable[[], T], what: str, bound: float = JUDGING_BOUND,
                    sleep: Callable[[float], None] = time.sleep,
                    clock: Callable[[], float] = time.monotonic) -> T:
    """read()'s result; a transient refusal (TRANSIENT_CODES) is retried with a growing
    pause until ``bound`` seconds have passed, then ReadUnknownError.  Any other
    exception is raised at once."""
    import pymysql
    start = clock()
    attempts = Attempts()
    pause = FIRST_PAUSE
    while True:
        try:
            return read()
        except (QueryError, pymysql.MySQLError) as exc:
            code = transient_code(exc)
            if not code:
                raise
            attempts.note(code, exc)
        waited = clock() - start
        if waited + pause > bound:
            raise ReadUnknownError(what, attempts.reason(), attempts.count, waited) from None
        get_logger().debug("%s: transient refusal %d (attempt %d), retrying in %.1fs: %s",
                           what, attempts.last_code, attempts.count, pause, attempts.last)
        sleep(pause)
        pause = min(pause * 2, MAX_PAUSE)
