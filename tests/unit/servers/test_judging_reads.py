"""The retry rule of judging reads: a lock wait timeout, a deadlock or certification
failure, or a node not ready is "unknown, retry" within a bound; when the bound runs
out the verdict is unknown with the reason (never a crash, never a silent pass).

Covers: lib/servers/judging.py, lib/consistency/reads.py, lib/consistency/run.py,
lib/consistency/tables.py, lib/checks/dbcompare.py (its checksum reads)
"""
from __future__ import annotations

import pymysql
import pytest

from lib.consistency.bank import Bank
from lib.consistency.append import Append
from lib.consistency.oplog import OK
from lib.consistency.reads import read_rows
from lib.consistency.run import judge, run_workloads
from lib.consistency.tables import check_tables_equal
from lib.consistency.verdict import INVALID, UNKNOWN_VERDICT, VALID
from lib.errors import QueryError
from lib.servers.judging import ReadUnknownError, retry_transient, transient_code

LOCK_WAIT = (1205, "Lock wait timeout exceeded; try restarting transaction")


class FakeClock:
    """A clock that advances only when the retry loop sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Refusing:
    """A read that raises ``errors`` in turn (each an exception), then returns rows."""

    def __init__(self, errors: list[BaseException], rows: list[tuple] | None = None) -> None:
        self.errors = list(errors)
        self.rows = rows or [(1,)]
        self.calls = 0

    def __call__(self) -> list[tuple]:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return self.rows


class FakeServer:
    """Answers execute() from a function of the SQL; not Galera (plain retries)."""

    server_type = "mysql"

    def __init__(self, name: str, answer) -> None:
        self.name = name
        self.answer = answer
        self.statements: list[str] = []

    def execute(self, sql: str, args=None):
        self.statements.append(sql)
        return self.answer(sql)

    def is_alive(self) -> bool:
        return True


def lock_wait(sql: str = "SELECT 1", server: str = "s0") -> QueryError:
    return QueryError(*LOCK_WAIT, sql, server)


# ---------------------------------------------------------------- the rule

def test_a_lock_wait_timeout_then_success_is_retried():
    clock = FakeClock()
    read = Refusing([pymysql.err.OperationalError(*LOCK_WAIT)], rows=[(7,)])
    assert retry_transient(read, "final read", bound=10, sleep=clock.sleep, clock=clock) == [(7,)]
    assert read.calls == 2 and clock.sleeps == [0.2]


@pytest.mark.parametrize("code", [1205, 1213, 1047])
def test_each_transient_code_is_retried(code):
    clock = FakeClock()
    read = Refusing([QueryError(code, "refused", "SELECT 1", "s1")] * 3)
    assert retry_transient(read, "r", bound=10, sleep=clock.sleep, clock=clock) == [(1,)]
    assert read.calls == 4 and clock.sleeps == [0.2, 0.4, 0.8]  # a growing pause


def test_a_lock_wait_timeout_until_the_bound_is_unknown_with_the_reason():
    clock = FakeClock()
    read = Refusing([lock_wait()] * 1000)
    with pytest.raises(ReadUnknownError) as info:
        retry_transient(read, "causal read on s1", bound=5, sleep=clock.sleep, clock=clock)
    err = info.value
    assert clock.now <= 5 and read.calls == err.attempts and err.attempts >= 3
    assert "1205 lock wait timeout" in err.reason and "Lock wait timeout exceeded" in err.reason
    assert str(err).startswith(f"causal read on s1: unknown after {err.attempts} attempts")


def test_other_errors_are_answers_raised_at_once():
    clock = FakeClock()
    read = Refusing([QueryError(1146, "Table 'bank.accounts' doesn't exist")])
    with pytest.raises(QueryError):
        retry_transient(read, "r", bound=10, sleep=clock.sleep, clock=clock)
    assert read.calls == 1 and clock.sleeps == []
    assert transient_code(OSError(1205, "an errno, not a server code")) == 0
    assert transient_code(pymysql.err.InternalError(1213, "Deadlock found")) == 1213


def test_read_rows_retries_a_plain_server():
    refusals = [lock_wait()]

    def answer(sql):
        if refusals:
            raise refusals.pop()
        return [(1, 100)]
    server = FakeServer("s0", answer)
    assert read_rows(server, "SELECT id, balance FROM t") == [(1, 100)]
    assert len(server.statements) == 2


# ---------------------------------------------------------------- verdicts

def _refusing_server(name: str = "s0") -> FakeServer:
    def answer(sql):
        raise lock_wait(sql, name)
    return FakeServer(name, answer)


def test_a_final_read_refused_until_the_bound_makes_the_verdict_unknown():
    bank = Bank([_refusing_server()], accounts=2, total=200)
    bank.judging_bound = 0.5
    bank.history.add("b0", "s0", "read", {"0": 100, "1": 100}, OK, 0.0)
    verdict = judge(bank)  # no exception: a verdict
    assert verdict.status == UNKNOWN_VERDICT
    assert verdict.summary.startswith("final state unknown: read on s0: unknown after")
    assert "1205 lock wait timeout" in verdict.summary


def test_an_unknown_final_read_never_hides_what_the_history_proves():
    bank = Bank([_refusing_server()], accounts=2, total=200)
    bank.judging_bound = 0.3
    bank.history.add("b0", "s0", "read", {"0": 100, "1": 50}, OK, 0.0)  # total 150
    verdict = judge(bank)
    assert verdict.status == INVALID and "final state unknown: read on s0" in verdict.summary


def test_a_cluster_that_does_not_settle_gives_unknown_verdicts_not_a_crash():
    def settle():
        raise ReadUnknownError("causal read on s1", "refused (1205 lock wait timeout)", 4, 90.0)
    append = Append([FakeServer("s0", lambda sql: [])], clients=1)
    append.setup = lambda: None
    append.step = lambda client: None
    calls = []

    def settle_after_run():
        calls.append(1)
        if len(calls) == 3:  # before, after setup: fine; after the run: refused
            settle()
    result = run_workloads([append], 0.05, settle=settle_after_run)
    verdict = result.verdicts[0]
    assert verdict.status == UNKNOWN_VERDICT
    assert "the servers did not settle: causal read on s1: unknown after 4 attempts" in \
        verdict.summary


def test_checksums_refused_until_the_bound_are_unknown():
    verdict = check_tables_equal(_refusing_server("s0"), [_refusing_server("s1")], ["bank"],
                                 bound=0.3)
    assert verdict.status == UNKNOWN_VERDICT
    assert "cannot checksum the tables: checksum read on s0: unknown after" in verdict.summary


def test_checksums_retried_then_equal():
    refusals = {"s0": [lock_wait()], "s1": [QueryError(1047, "WSREP has not yet prepared "
                                                            "node for application use")]}

    def answer_for(name):
        def answer(sql):
            if refusals[name]:
                raise refusals[name].pop()
            if sql.startswith("SELECT TABLE_SCHEMA"):
                return [("bank", "accounts")]
            return [("bank.accounts", 1234)]
        return answer
    verdict = check_tables_equal(FakeServer("s0", answer_for("s0")),
                                 [FakeServer("s1", answer_for("s1"))], ["bank"])
    assert verdict.status == VALID and verdict.summary.startswith("1 tables in bank equal")
