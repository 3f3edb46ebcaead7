"""Writers racing on one MariaDB results store (a fleet's workers, pytest-xdist's
workers, a build's shards), on a real server kewpie starts.  Each race is made to
happen: one writer's transaction holds a new row while the other one's, its snapshot
taken, runs into the row's key and waits; then the first commits.  The second must
find the row (a plain SELECT, in its REPEATABLE READ snapshot, does not: the fleet's
hunt lost its sighting to the spool that way, counted 1 where both workers found the
crash).  And two writers counting one signature at once, round after round, count
every sighting (no deadlock between the sighting's foreign key and the count's update).

Covers: lib/history/writes.py (insert_findings, insert_run, committed), lib/history/weights.py (the shards' cut)
"""
import re
import threading
import time
from typing import Callable

import pymysql
import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Connection, Engine

from lib.history.records import FindingRecord, RunInfo, new_run_uuid
from lib.history.schema import findings, runs, shard_cuts, sightings
from lib.history.store import open_engine
from lib.history.target import StoreTarget
from lib.history.weights import _cut
from lib.history.writes import insert_findings, insert_run
from tests.conftest import FIXTURE_SUITES

SIGNATURE = "7eeb1eeb9e1f"
WAIT = 30.0
ROUNDS = 25


@pytest.fixture
def store(kewpie):
    """(an engine over a fresh store on a MariaDB server kewpie started, its port)."""
    started = kewpie.run("--suitepath=" + FIXTURE_SUITES, "--suite=fleet", "--start-and-exit")
    assert started.returncode == 0, started.stdout[-3000:]
    port = int(re.findall(r"INFO MASTER_PORT: (\d+)", started.stdout)[0])
    engine = None
    try:
        engine = open_engine(StoreTarget(dsn=f"mysql://root@127.0.0.1:{port}/kewpie_races"),
                             writer=True, create=True)
        yield engine, port
    finally:
        if engine is not None:
            engine.dispose()
        clean = kewpie.run("--mode=cleanup")
        assert clean.returncode == 0, clean.stdout


def _run(engine: Engine, node: str, uuid: str = "") -> int:
    with engine.begin() as conn:
        return insert_run(conn, RunInfo(uuid or new_run_uuid(), host=node, mode="hunt",
                                        labels={"node": node}))


def _found(node: str, seq: int = 1) -> FindingRecord:
    return FindingRecord(signature=SIGNATURE, kind="crash", oracle="crash", bot="bot0",
                         machine=node, seq=seq, folder=f"/{node}/findings/{seq}")


def _lock_waits(port: int) -> int:
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM information_schema.innodb_trx "
                        "WHERE trx_state = 'LOCK WAIT'")
            return int(cur.fetchone()[0])
    finally:
        conn.close()


def _race(engine: Engine, port: int, first: Callable[[Connection], object],
          second: Callable[[Connection], object]) -> object:
    """first's write held uncommitted while second's transaction reads (its snapshot)
    and waits on the row first made; then first commits.  second's value (or the
    exception it raised)."""
    holder, other = engine.connect(), engine.connect()
    outcome: dict[str, object] = {}

    def run_second() -> None:
        try:
            with other.begin():
                outcome["value"] = second(other)
        except Exception as exc:  # noqa: BLE001 - the test says what it was
            outcome["value"] = exc

    try:
        held = holder.begin()
        first(holder)
        thread = threading.Thread(target=run_second)
        thread.start()
        deadline = time.monotonic() + WAIT
        while _lock_waits(port) == 0 and thread.is_alive():
            assert time.monotonic() < deadline, "the second writer never waited on the row"
            time.sleep(0.05)
        held.commit()
        thread.join(WAIT)
        assert not thread.is_alive(), "the second writer did not finish"
    finally:
        holder.close()
        other.close()
    return outcome["value"]


def test_a_signature_two_workers_find_at_once_counts_both_sightings(store):
    engine, port = store
    one, two = _run(engine, "worker-1"), _run(engine, "worker-2")
    got = _race(engine, port, lambda c: insert_findings(c, one, [_found("worker-1")]),
                lambda c: insert_findings(c, two, [_found("worker-2")]))
    assert got == 1, repr(got)
    with engine.connect() as conn:
        assert conn.execute(select(findings.c.count)).all() == [(2,)]
        assert sorted(conn.execute(select(sightings.c.machine)).scalars()) == \
            ["worker-1", "worker-2"]


def test_a_run_two_processes_insert_at_once_is_one_row(store):
    engine, port = store
    uuid = new_run_uuid()
    run = RunInfo(uuid, host="box", mode="pytest")
    got = _race(engine, port, lambda c: insert_run(c, run), lambda c: insert_run(c, run))
    with engine.connect() as conn:
        ids = conn.execute(select(runs.c.id).where(runs.c.uuid == uuid)).scalars().all()
    assert ids == [got], (ids, repr(got))


def test_a_cut_two_shards_make_at_once_is_the_first_ones(store):
    engine, port = store
    got = _race(engine, port, lambda c: _cut(c, "job#7#2", True),
                lambda c: _cut(c, "job#7#2", True))
    with engine.connect() as conn:
        cut = conn.execute(select(shard_cuts.c.max_result_id, shard_cuts.c.created_at)).one()
    assert got == tuple(cut), (repr(got), cut)


def test_two_workers_counting_one_signature_round_after_round_count_every_sighting(store):
    engine, _ = store
    ids = {node: _run(engine, node) for node in ("worker-1", "worker-2")}
    start = threading.Barrier(len(ids))
    errors: list[str] = []

    def count(node: str) -> None:
        with engine.connect() as conn:
            for n in range(1, ROUNDS + 1):
                start.wait(WAIT)
                try:
                    with conn.begin():
                        insert_findings(conn, ids[node], [_found(node, n)])
                except Exception as exc:  # noqa: BLE001 - the test says what it was
                    errors.append(f"{node} round {n}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=count, args=(node,)) for node in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(ROUNDS * WAIT)
    assert not errors, errors
    with engine.connect() as conn:
        assert conn.execute(select(findings.c.count)).all() == [(2 * ROUNDS,)]
        assert conn.execute(select(func.count()).select_from(sightings)).scalar() == 2 * ROUNDS
