"""A simple SQL write load in background threads, for backups taken under load.

::

    with WriteLoad(server, "load", threads=2) as load:   # creates load.t1..tN
        ...                                                # back up meanwhile
    assert load.statements > 0 and not load.errors

Each thread has its own connection and runs a random mix of INSERT, UPDATE
and DELETE (and small multi-statement transactions) against InnoDB tables
until stopped.  Errors (lost connection, deadlocks...) are counted and the
first few kept; they do not stop the load.  A grammar-driven load is
randgen's (``KewpieTestCase.randgen``, docs/randgen.md).
"""
from __future__ import annotations

import random
import threading
import time
from typing import TYPE_CHECKING, Any

import pymysql
import pymysql.cursors

from ..platform.logsetup import get_logger

if TYPE_CHECKING:
    from ..servers.server import Server

DDL = ("CREATE TABLE IF NOT EXISTS `{schema}`.`{table}` (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, "
       "k INT NOT NULL, c VARCHAR(64) NOT NULL, t TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), "
       "KEY (k)) ENGINE=InnoDB")


class WriteLoad:
    """Threads writing to tables of one schema until :meth:`stop`."""

    def __init__(self, server: Server, schema: str = "load", tables: int = 4, threads: int = 2,
                 seed: int = 1, pause: float = 0.0) -> None:
        self.server = server
        self.schema = schema
        self.tables = [f"t{i}" for i in range(1, tables + 1)]
        self.threads = threads
        self.seed = seed
        self.pause = pause
        self.statements = 0
        self.errors = 0
        self.first_errors: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._workers: list[threading.Thread] = []

    def create_tables(self, rows: int = 100) -> None:
        """Create the schema and tables, each with rows initial rows."""
        self.server.execute(f"CREATE DATABASE IF NOT EXISTS `{self.schema}`")
        for table in self.tables:
            self.server.execute(DDL.format(schema=self.schema, table=table))
            self.server.execute(f"INSERT INTO `{self.schema}`.`{table}` (k, c) "
                                f"SELECT seq, CONCAT('row', seq) FROM `{self.schema}`.seq_1_to_{rows}")

    def start(self) -> "WriteLoad":
        """Create the tables and start the threads."""
        self.create_tables()
        self._stop.clear()
        for n in range(self.threads):
            worker = threading.Thread(target=self._run, args=(n,), name=f"writeload-{n}",
                                      daemon=True)
            worker.start()
            self._workers.append(worker)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the threads and wait for them."""
        self._stop.set()
        for worker in self._workers:
            worker.join(timeout)
        self._workers = []
        get_logger().debug("write load on %s: %d statements, %d errors %s", self.server.name,
                           self.statements, self.errors, self.first_errors[:3])

    def __enter__(self) -> "WriteLoad":
        return self.start()

    def __exit__(self, *_exc: Any) -> None:
        self.stop()

    def _note_error(self, exc: Exception) -> None:
        with self._lock:
            self.errors += 1
            if len(self.first_errors) < 5:
                self.first_errors.append(str(exc))

    def _run(self, n: int) -> None:
        rng = random.Random(self.seed * 1000 + n)
        conn = None
        while not self._stop.is_set():
            try:
                if conn is None:
                    conn = self.server.connect(db=self.schema, autocommit=True)
                with conn.cursor() as cur:
                    done = self._one(cur, rng)
                with self._lock:
                    self.statements += done
            except pymysql.MySQLError as exc:
                self._note_error(exc)
                if conn is not None:
                    try:
                        conn.close()
                    except Exception:  # noqa: BLE001 - a dead connection
                        pass
                conn = None
                time.sleep(0.05)
            if self.pause:
                time.sleep(self.pause)
        if conn is not None:
            conn.close()

    def _one(self, cur: pymysql.cursors.Cursor, rng: random.Random) -> int:
        """One unit of work; returns the number of statements run."""
        table = f"`{rng.choice(self.tables)}`"
        what = rng.random()
        if what < 0.5:
            cur.execute(f"INSERT INTO {table} (k, c) VALUES (%s, %s)",
                        (rng.randint(1, 10000), f"v{rng.randint(1, 10**9)}"))
            return 1
        if what < 0.75:
            cur.execute(f"UPDATE {table} SET c = %s, k = k + 1 WHERE k = %s",
                        (f"u{rng.randint(1, 10**9)}", rng.randint(1, 200)))
            return 1
        if what < 0.85:
            cur.execute(f"DELETE FROM {table} WHERE k = %s LIMIT 1", (rng.randint(1, 10000),))
            return 1
        cur.execute("BEGIN")
        for _ in range(3):
            cur.execute(f"INSERT INTO {table} (k, c) VALUES (%s, 'txn')", (rng.randint(1, 10000),))
        cur.execute("COMMIT")
        return 5
