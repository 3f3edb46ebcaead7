"""A run's writer: its results go to the store as they finish, from a thread of their own.

The API every way in uses (native and mtr runs, sweeps, the pytest plugin, hunts)::

    writer = HistoryWriter(StoreTarget.choose(path, dsn, workdir), run_info,
                           spool_dir(workdir), log)
    writer.record_result("suite.test", "fail", duration_ms=1200, attempts=2,
                         failure="AssertionError: ...", signature="<finding's signature>",
                         evidence="/path/to/workdir/failed/suite.test")
    writer.close(exit_code=1)

``record_result`` never blocks on the store and never raises for it: results are
queued and a background thread (started with the first result) opens the store
(creating or upgrading it), sends earlier runs' spooled results, inserts the run and
then each batch of results in one transaction.  When the store cannot be reached,
or fails later, the run logs ONE warning and the thread keeps the results in the
workdir's spool (lib/history/spool.py) for the next run to send.  ``close`` waits
(a bounded time) for the queue to drain and records the run's end.
"""
from __future__ import annotations

import logging
import os
import queue
import threading
from dataclasses import dataclass
from datetime import datetime

from typing import TYPE_CHECKING, Callable

from .errors import HistoryError
from .records import FindingRecord, ResultRecord, RunInfo, machine_of, utcnow
from .spool import Spool, claim, pending, read
from .target import StoreTarget

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

CLOSE_WAIT = 60.0
BATCH = 500


@dataclass
class _End:
    """The queue's last item: the run ended."""

    ended_at: datetime
    exit_code: int | None


class HistoryWriter:
    """Writes one run and its results to a store, spooling them when it is down."""

    def __init__(self, target: StoreTarget, run: RunInfo, spool_directory: str,
                 log: logging.Logger, background: bool = True,
                 fill_run: Callable[[RunInfo], None] | None = None) -> None:
        """background=False writes in the caller's thread (tools, benchmarks).  fill_run
        completes run where it is first stored or spooled, in the writer's thread (what is
        slow to learn and not needed before: kewpie's installed version)."""
        self.target = target
        self.run = run
        self._fill_run = fill_run
        self._fill_lock = threading.Lock()
        self.log = log
        self.spool = Spool(spool_directory, run)
        self.background = background
        self.run_id: int | None = None
        self.sent = 0
        self.warned = ""
        self._engine: "Engine | None" = None
        self._conn: "Connection | None" = None  # held for the run: no checkout per batch
        self._queue: "queue.SimpleQueue[ResultRecord | FindingRecord | _End]" = \
            queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._seq = 0
        self._closed = False
        self._opened = False

    # ------------------------------------------------------------------ the API
    def record_result(self, test: str, status: str, duration_ms: int = 0, combination: str = "",
                      attempts: int = 1, failure: str = "", signature: str = "",
                      evidence: str = "", bot: str = "",
                      finished_at: datetime | None = None) -> ResultRecord:
        """Record one result (statuses: pass, flaky, fail, skipped, timeout; finished_at
        in UTC, now by default); returns it.  HistoryUsageError for an unknown status;
        nothing else is raised."""
        record = ResultRecord(test=test, status=status, duration_ms=duration_ms,
                              combination=combination, attempts=attempts, failure=failure,
                              signature=signature, evidence=evidence, bot=bot,
                              finished_at=finished_at or utcnow())
        self.record(record)
        return record

    def record_finding(self, record: FindingRecord) -> FindingRecord:
        """Record a hunt's finding (its machine and code tree: the run's unless set);
        returns it.  Nothing is raised."""
        record.machine = record.machine or machine_of(self.run)
        record.tree = record.tree or self.run.tree_version
        self.record(record)
        return record

    def record(self, record: ResultRecord | FindingRecord) -> None:
        """Record a result (or finding) built by the caller (its seq is set here)."""
        with self._lock:
            if self._closed:
                return
            self._seq += 1
            record.seq = self._seq
        if not self.background:
            self._handle([record])
            return
        self._queue.put(record)
        self._ensure_thread()

    def close(self, exit_code: int | None = None, wait: float = CLOSE_WAIT) -> None:
        """Record the run's end and wait (at most wait seconds) for every result to be
        stored or spooled."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        end = _End(utcnow(), exit_code)
        if not self.background:
            self._finish(end)
            return
        self._queue.put(end)
        self._ensure_thread()
        assert self._thread is not None
        self._thread.join(wait)
        if self._thread.is_alive():  # the store hangs: keep what it did not take
            self._warn(f"no answer within {wait:g} s")
            self._drain_to_spool()

    def engine(self) -> "Engine | None":
        """The store's engine, opened now (the run inserted), for a writer that writes in
        the caller's thread (background=False): sweeps store their rows through it.
        None when the store cannot be reached (the warning was logged)."""
        if self.background:
            raise HistoryError("HistoryWriter.engine() is for writers with background=False")
        return self._engine if self._open() else None

    @property
    def spooled(self) -> int:
        """Results kept in the spool this run."""
        return self.spool.count

    # ------------------------------------------------------------------ the thread
    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="kewpie-history",
                                                daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        """Take batches off the queue until the end."""
        while True:
            item = self._queue.get()
            batch: list[ResultRecord | FindingRecord] = []
            end: _End | None = None
            while True:
                if isinstance(item, _End):
                    end = item
                    break
                batch.append(item)
                if len(batch) >= BATCH:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self._handle(batch)
            if end is not None:
                self._finish(end)
                return

    def _complete_run(self) -> None:
        """Run fill_run once, before the run's record is first used."""
        with self._fill_lock:
            fill, self._fill_run = self._fill_run, None
            if fill is not None:
                fill(self.run)

    def _drain_to_spool(self) -> None:
        self._complete_run()
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, (ResultRecord, FindingRecord)):
                self.spool.add(item)
            else:
                self.spool.end(item.ended_at, item.exit_code)

    # ------------------------------------------------------------------ the store
    def _open(self) -> bool:
        """Open the store and insert the run (once); False when it is unreachable."""
        self._complete_run()
        if self._opened:
            return self._engine is not None and self.run_id is not None
        self._opened = True
        try:  # SQLAlchemy is imported here, in the writer's thread, not at the run's start
            from .store import open_engine
            from .writes import insert_run
            self._engine = open_engine(self.target, writer=True, create=True)
            self._conn = self._engine.connect()
            self._send_spooled()
            with self._conn.begin():
                self.run_id = insert_run(self._conn, self.run)
            return True
        except HistoryError as exc:
            self._warn(str(exc).split(": ", 1)[-1])
        except Exception as exc:  # noqa: BLE001 - the history must never fail a run
            self._warn(_describe(exc))
        return False

    def _handle(self, batch: list[ResultRecord | FindingRecord]) -> None:
        """Store a batch of results (and findings), or spool it."""
        self._complete_run()
        if not self.warned and self._open() and self._conn is not None:
            try:
                from .writes import insert_findings, insert_results
                with self._conn.begin():
                    assert self.run_id is not None
                    self.sent += insert_results(self._conn, self.run_id, [
                        r for r in batch if isinstance(r, ResultRecord)])
                    insert_findings(self._conn, self.run_id, [
                        r for r in batch if isinstance(r, FindingRecord)])
                return
            except Exception as exc:  # noqa: BLE001 - spooled instead, never a failed run
                self._warn(_describe(exc))
        for record in batch:
            self._spool(record)

    def _spool(self, record: ResultRecord | FindingRecord) -> None:
        try:
            self.spool.add(record)
        except OSError as exc:  # the workdir is gone or full: the result is lost, say so once
            self.log.debug("history spool %s: %s", self.spool.path, exc)

    def _finish(self, end: _End) -> None:
        """Record the end in the store (or the spool), then let the engine go."""
        self._complete_run()
        try:
            if not self.warned and self._open() and self._conn is not None:
                try:
                    from .writes import end_run
                    with self._conn.begin():
                        assert self.run_id is not None
                        end_run(self._conn, self.run_id, end.ended_at, end.exit_code)
                    return
                except Exception as exc:  # noqa: BLE001 - spooled instead
                    self._warn(_describe(exc))
            if self.spool.count or self.warned:
                try:
                    self.spool.end(end.ended_at, end.exit_code)
                except OSError as exc:
                    self.log.debug("history spool %s: %s", self.spool.path, exc)
        finally:
            if self._conn is not None:
                try:
                    self._conn.close()
                except Exception:  # noqa: BLE001 - a connection the store already dropped
                    pass
                self._conn = None
            if self._engine is not None:
                self._engine.dispose()

    def _warn(self, why: str) -> None:
        """The one warning of a run whose store is down."""
        if self.warned:
            return
        self.warned = why
        self.log.warning(f"results history {self.target.display} unreachable ({why}): this "
                         f"run's results are kept in {self.spool.directory} and sent by the "
                         f"next run that reaches it")

    def _send_spooled(self) -> None:
        """Send what earlier runs of this workdir kept while the store was down."""
        from .writes import end_run, insert_findings, insert_results, insert_run
        conn = self._conn
        assert conn is not None
        for path in pending(self.spool.directory, skip=self.run.uuid):
            claimed = claim(path)
            if claimed is None:
                continue
            try:
                spooled = read(claimed)
                if spooled is not None:
                    with conn.begin():
                        run_id = insert_run(conn, spooled.run)
                        count = insert_results(conn, run_id, spooled.results, skip_stored=True)
                        insert_findings(conn, run_id, spooled.findings, skip_stored=True)
                        if spooled.ended_at is not None:
                            end_run(conn, run_id, spooled.ended_at, spooled.exit_code)
                    self.log.info(f"results history: sent {count} result(s) of run "
                                  f"{spooled.run.uuid[:12]} kept in {os.path.basename(path)}")
            except BaseException:
                os.rename(claimed, path)  # for the next run to try again
                raise
            os.unlink(claimed)


def _describe(exc: BaseException) -> str:
    """One line for a failure of the store (the driver's message)."""
    from .store import describe_error
    return describe_error(exc)
