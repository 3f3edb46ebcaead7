"""Is a running reproducer waiting rather than working?

A corpus's slowest replays mostly wait: a ``SELECT SLEEP(15)`` that gives a
background thread its time, a statement behind a prepared XA transaction's row
lock until ``innodb_lock_wait_timeout`` (50 s), a metadata lock wait.  Their
time is the reproducer's own and is spent in full -- what follows the wait still
runs and may crash -- but it costs no CPU.  :class:`WaitWatch` looks at the
server while the reproducer runs (every :data:`POLL` seconds, on a connection of
its own, statements of a few milliseconds) and says when every statement of the
reproducer's connections waits (:func:`waiting`) and when one works again, so the
replay's scheduler may let another bot work in the meantime
(lib/modes/replay/run.py).  It changes nothing on the server.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from ..servers.server import Server

POLL = 0.5                 # seconds between two looks
SETTLE = 1.0               # a wait counts once it lasted this long (short waits come and go)
READ_SECONDS = 5
SYSTEM_COMMANDS = frozenset({"daemon", "binlog dump", "slave_io", "slave_sql", "slave_worker"})
WAIT_STATES = ("user sleep", "user lock")      # SLEEP(), GET_LOCK()
# the connections opened after the watch's own (connection ids only grow): the
# reproducer's, not kewpie's own kept connection (idle, in 'Sleep')
USER_CONNECTIONS = ("SELECT ID, USER, COMMAND, STATE FROM information_schema.PROCESSLIST "
                    "WHERE ID > CONNECTION_ID()")
LOCK_WAITS = ("SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX "
              "WHERE trx_state = 'LOCK WAIT'")


def waiting(connections: Iterable[tuple[Any, ...]], lock_waiting: Iterable[Any]) -> str:
    """What the reproducer waits on ('' when it works): connections are the server's
    other connections as (id, user, command, state); lock_waiting the connection ids
    whose transaction waits for a row lock.  It waits when it has a statement running
    and each of its statements sleeps (``User sleep``), waits for a user or a
    metadata lock (a state ``Waiting for ... lock``) or for a row lock."""
    locked = {int(i) for i in lock_waiting if i is not None}
    kinds: list[str] = []
    for conn_id, user, command, state in connections:
        command_text, state_text = str(command or "").lower(), str(state or "").lower()
        if str(user or "") == "system user" or command_text in SYSTEM_COMMANDS:
            continue
        if command_text not in ("query", "execute"):
            return ""           # a client between two statements: it works
        if int(conn_id) in locked:
            kinds.append("a row lock")
        elif state_text in WAIT_STATES or (state_text.startswith("waiting for")
                                           and state_text.endswith("lock")):
            kinds.append(str(state))
        else:
            return ""
    return ", ".join(sorted(set(kinds)))


class WaitWatch:
    """A thread that tells on_change(True) once the reproducer waits (:func:`waiting`,
    for :data:`SETTLE` seconds) and on_change(False) when it works again; stop() ends it
    (and tells False if it had told True)."""

    def __init__(self, server: "Server", on_change: Callable[[bool], None]) -> None:
        self.server = server
        self.on_change = on_change
        self.idle = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conn: Any = None
        self._thread = threading.Thread(target=self._run, name="replay-waits", daemon=True)

    def start(self) -> "WaitWatch":
        """Start watching: its connection is made now, before the reproducer's (so its id
        is below theirs); a server that does not take it is not watched."""
        import pymysql
        try:
            self._conn = self.server.connect(connect_timeout=READ_SECONDS,
                                             read_timeout=READ_SECONDS)
        except pymysql.MySQLError:
            return self
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching (the reproducer ended)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._tell(False)

    def _tell(self, idle: bool) -> None:
        with self._lock:
            if idle != self.idle:
                self.idle = idle
                self.on_change(idle)

    def _run(self) -> None:
        import pymysql
        conn = self._conn
        since: float | None = None
        try:
            with conn.cursor() as cur:
                while not self._stop.wait(POLL):
                    cur.execute(USER_CONNECTIONS)
                    connections = list(cur.fetchall())
                    cur.execute(LOCK_WAITS)
                    what = waiting(connections, [r[0] for r in cur.fetchall()])
                    since = (since or 0.0) + POLL if what else None
                    self._tell(since is not None and since >= SETTLE)
        except pymysql.MySQLError:
            pass        # the server went away or stopped answering: the replay judges it
        finally:
            self._tell(False)
            try:
                conn.close()
            except pymysql.MySQLError:
                pass
