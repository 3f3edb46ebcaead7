"""Consistency checks without servers: outcomes, histories, checkers, verdicts, fault
schedules, pt-table-checksum parsing, the workload runner, and the process launcher.

Covers: lib/consistency/oplog.py, lib/consistency/verdict.py, lib/consistency/append.py,
lib/consistency/bank.py, lib/consistency/registers.py, lib/consistency/faults.py,
lib/consistency/ptchecksum.py, lib/consistency/run.py, lib/consistency/workload.py,
lib/platform/launcher.py
"""
import os
import random
import shutil
import signal
import socket
import threading
import time
from types import SimpleNamespace

import pymysql
import pytest

from lib.consistency.append import check_append
from lib.consistency.bank import check_bank
from lib.consistency.faults import Fault, FaultError, Schedule, Step
from lib.consistency.oplog import FAIL, OK, UNKNOWN, Counts, History, Op, classify_error
from lib.consistency.ptchecksum import (check_pt_table_checksum, flags, parse_report,
                                        pt_table_checksum_command, tool_error, write_dsn_table)
from lib.consistency.registers import check_stale_reads
from lib.consistency.run import RunResult, WorkloadError, run_workloads
from lib.consistency.verdict import INVALID, UNKNOWN_VERDICT, VALID, Verdict, combine
from lib.consistency.workload import Client, Rejected, Workload
from lib.platform.launcher import Launcher
from lib.platform.process import ProcessExecutor


def op(index, f, value, outcome=OK, start=0.0, end=0.0, process="c0", node="n1", error=""):
    return Op(index, process, node, f, value, outcome, start, end, error)


def wait_until(predicate, timeout=2.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


# ---------------------------------------------------------------- outcomes

@pytest.mark.parametrize("exc,committing,expected", [
    (pymysql.err.OperationalError(1213, "Deadlock found"), True, FAIL),
    (pymysql.err.OperationalError(1213, "Deadlock found"), False, FAIL),
    (pymysql.err.OperationalError(2013, "Lost connection"), True, UNKNOWN),
    (pymysql.err.OperationalError(2013, "Lost connection"), False, FAIL),
    (pymysql.err.OperationalError(2006, "MySQL server has gone away"), True, UNKNOWN),
    (pymysql.err.OperationalError(2003, "Can't connect"), True, FAIL),
    (pymysql.err.OperationalError(2003, "Can't connect"), False, FAIL),
    (pymysql.err.OperationalError(1180, "Got error during COMMIT"), True, UNKNOWN),
    (pymysql.err.OperationalError(1180, "Got error during COMMIT"), False, FAIL),
    (socket.timeout("timed out"), True, UNKNOWN),
    (socket.timeout("timed out"), False, FAIL),
])
def test_classify_error(exc, committing, expected):
    assert classify_error(exc, committing) == expected


# ---------------------------------------------------------------- history

def test_op_describe_names_everything():
    o = Op(12, "c3", "node1", "insert", 3000007, UNKNOWN, 1.204, 1.209, "2013 Lost connection")
    assert o.describe() == ("#12 c3 insert 3000007 on node1 [+1.204s..+1.209s] unknown "
                            "(2013 Lost connection)")
    assert op(3, "read", {"b": 1, "a": 2}).describe() == \
        '#3 c0 read {"a": 2, "b": 1} on n1 [+0.000s..+0.000s] ok'
    assert op(0, "read", "x" * 500).describe().count("x") == 160


def test_history_add_note_counts_and_filters():
    h = History()
    a = h.add("c0", "n1", "insert", 1, OK, 0.0)
    h.add("c1", "n2", "insert", 2, FAIL, 0.0, 0.1, error="1213 Deadlock")
    h.add("c1", "n2", "read", None, UNKNOWN, 0.0, 0.2)
    note = h.note("kill", "killed n2", node="n2")
    assert [o.index for o in h.ops] == [0, 1, 2, 3]
    assert a.end >= a.start and h.ops[1].error == "1213 Deadlock"
    assert (note.process, note.outcome, note.node) == ("nemesis", "info", "n2")
    assert h.events() == [note]
    assert [o.value for o in h.client_ops()] == [1, 2, None]
    assert [o.value for o in h.client_ops("insert")] == [1, 2]
    assert [o.value for o in h.client_ops(outcome=FAIL)] == [2]
    assert h.counts() == Counts(1, 1, 1)
    assert h.counts("insert") == Counts(1, 1, 0)
    assert str(h.counts()) == "1 ok, 1 fail, 1 unknown"


def test_history_save_load_roundtrip(tmp_path):
    h = History()
    h.add("c0", "n1", "read", {"0": 50, "1": 50}, OK, 0.5, 0.75)
    h.add("c0", "n1", "insert", 10000001, UNKNOWN, 1.0, 1.25, error="2013 Lost connection")
    h.note("pause", "paused n1", "n1", start=0.9)
    path = str(tmp_path / "h.jsonl")
    h.save(path)
    assert len(open(path).read().splitlines()) == 3
    again = History.load(path)
    assert again.ops == h.ops
    assert again.counts() == h.counts() and len(again.events()) == 1
    assert History.of(h.ops).ops == h.ops


# ---------------------------------------------------------------- bank

FINAL_OK = {"n1": {"0": 50, "1": 50}, "n2": {"0": 50, "1": 50}}


def test_bank_valid():
    reads = [op(0, "read", {"0": 50, "1": 50}), op(3, "read", {"0": 40, "1": 60}, node="n2")]
    v = check_bank(reads, 2, 100, FINAL_OK, Counts(2, 0, 0))
    assert v.status == VALID and v.valid and not v.evidence
    assert v.counts == Counts(2, 0, 0)


def test_bank_wrong_total_names_the_read():
    reads = [op(0, "read", {"0": 50, "1": 50}), op(7, "read", {"0": 50, "1": 40}, process="b2")]
    v = check_bank(reads, 2, 100, FINAL_OK)
    assert v.invalid and "1 of 2 reads" in v.summary
    assert len(v.evidence) == 1
    assert "total 90 instead of 100" in v.evidence[0] and "#7 b2 read" in v.evidence[0]


def test_bank_missing_account_and_negative_balance():
    v = check_bank([op(1, "read", {"0": 100}), op(2, "read", {"0": 110, "1": -10})], 2, 100,
                   FINAL_OK)
    assert v.invalid
    assert "1 accounts instead of 2" in v.evidence[0] and "#1" in v.evidence[0]
    assert "negative balance on account(s) 1" in v.evidence[1] and "#2" in v.evidence[1]


def test_bank_nodes_disagree_names_account_and_nodes():
    final = {"n2": {"0": 50, "1": 50}, "n1": {"0": 60, "1": 40}}
    v = check_bank([op(0, "read", {"0": 50, "1": 50})], 2, 100, final)
    assert v.invalid and v.summary == "the final balances are wrong"
    assert v.evidence == ["account 0: balance 60 on n1 but 50 on n2",
                          "account 1: balance 40 on n1 but 50 on n2"]


def test_bank_final_state_problems_come_first():
    final = {"n1": {"0": 50, "1": 40}}
    v = check_bank([op(4, "read", {"0": 10, "1": 10})], 2, 100, final)
    assert v.invalid
    assert v.evidence[0].startswith("final balances on n1: total 90 instead of 100")
    assert "#4" in v.evidence[1]


def test_bank_without_reads_is_unknown():
    v = check_bank([], 2, 100, FINAL_OK, Counts(0, 3, 1))
    assert v.status == UNKNOWN_VERDICT and not v.valid and not v.invalid
    # ...unless the final state is already wrong
    assert check_bank([], 2, 100, {"n1": {"0": 1, "1": 1}}).invalid


# ---------------------------------------------------------------- append

INSERTS = [op(0, "insert", 1), op(1, "insert", 2, node="n2"),
           op(2, "insert", 3, FAIL, error="1213 Deadlock"),
           op(3, "insert", 4, UNKNOWN, error="2013 Lost connection")]


@pytest.mark.parametrize("keys,applied", [({1, 2}, 0), ({1, 2, 4}, 1)])
def test_append_valid_whether_unknown_applied_or_not(keys, applied):
    v = check_append(INSERTS, {"n1": set(keys), "n2": set(keys)}, Counts(2, 1, 1))
    assert v.status == VALID and not v.evidence
    assert v.summary == (f"2 acknowledged inserts, 1 failed, 1 unknown ({applied} of them "
                         f"applied) on 2 node(s)")
    assert "(ops: 2 ok, 1 fail, 1 unknown)" in v.report()


def test_append_lost_insert():
    v = check_append(INSERTS, {"n1": {1, 2}, "n2": {1}})
    assert v.invalid and v.summary.startswith("1 lost, 0 phantom, 1 diverged; ")
    lost = [e for e in v.evidence if e.startswith("lost on n2")]
    assert len(lost) == 1 and "id=2" in lost[0] and "#1 c0 insert 2 on n2" in lost[0]
    assert "diverged: id=2 is only on n1 (n1 vs n2)" in v.evidence


def test_append_phantom_failed_insert_and_stray_rows():
    v = check_append(INSERTS, {"n1": {1, 2, 3, 99}})
    assert v.invalid and v.summary.startswith("0 lost, 2 phantom, 0 diverged")
    assert any(e.startswith("phantom on n1: failed insert id=3") and "1213 Deadlock" in e
               for e in v.evidence)
    assert "stray on n1: id=99 was never inserted by the workload" in v.evidence


def test_append_nodes_diverge_on_unknown_insert():
    v = check_append(INSERTS, {"n1": {1, 2, 4}, "n2": {1, 2}})
    assert v.invalid and v.evidence == ["diverged: id=4 is only on n1 (n1 vs n2)"]


def test_append_unknown_without_final_state_or_acknowledged_inserts():
    v = check_append(INSERTS, {})
    assert v.status == UNKNOWN_VERDICT and "no server could be read" in v.summary
    v = check_append([op(0, "insert", 1, FAIL)], {"n1": set()})
    assert v.status == UNKNOWN_VERDICT and "no insert was acknowledged" in v.summary


# ---------------------------------------------------------------- read-your-writes

def w(i, v, start, end, outcome=OK, k=0):
    return op(i, "write", {"k": k, "v": v}, outcome, start, end, node="n1")


def r(i, v, start, end, k=0):
    return op(i, "read", {"k": k, "v": v}, OK, start, end, node="n2")


def test_stale_read_after_acknowledged_write():
    v1, v2, read = w(0, 1, 0.0, 0.1), w(1, 2, 0.2, 0.3), r(2, 1, 0.4, 0.45)
    v = check_stale_reads([v1, v2, read], "wsrep", Counts(3, 0, 0))
    assert v.invalid and v.summary == "1 stale and 0 impossible of 1 reads (sync: wsrep)"
    [line] = v.evidence
    assert "stale read" in line and "register 0 = 1 but 2 was acknowledged 100 ms" in line
    assert read.describe() in line and v2.describe() in line


def test_concurrent_write_is_not_stale():
    # the write of 2 ended after the read began: reading 1 is fine
    v = check_stale_reads([w(0, 1, 0.0, 0.1), w(1, 2, 0.2, 0.5), r(2, 1, 0.4, 0.45)])
    assert v.status == VALID and not v.evidence


def test_unknown_writes_are_possible_but_not_required():
    ops = [w(0, 1, 0.0, 0.1), w(1, 2, 0.2, 0.3, UNKNOWN), r(2, 1, 0.4, 0.5), r(3, 2, 0.6, 0.7)]
    assert check_stale_reads(ops).valid


def test_impossible_values():
    ops = [w(0, 1, 0.0, 0.1), w(1, 2, 0.2, 0.3, FAIL), r(2, 2, 0.4, 0.5), r(3, None, 0.4, 0.5),
           r(4, 9, 0.4, 0.5, k=1)]
    v = check_stale_reads(ops)
    assert v.invalid and v.summary.startswith("0 stale and 3 impossible of 3 reads")
    assert all(e.startswith("impossible read: register") for e in v.evidence)
    assert "register 1 = 9, never written" in v.evidence[2]


def test_stale_reads_without_reads_is_unknown():
    assert check_stale_reads([w(0, 1, 0.0, 0.1)]).status == UNKNOWN_VERDICT


# ---------------------------------------------------------------- verdicts

def test_verdict_report_counts_and_truncation():
    v = Verdict("bank", INVALID, "it broke", [f"e{i}" for i in range(20)], Counts(3, 1, 2),
                history_file="/h/run-bank.jsonl")
    lines = v.report().splitlines()
    assert lines[0] == "bank: INVALID (ops: 3 ok, 1 fail, 2 unknown): it broke"
    assert lines[1:16] == [f"  e{i}" for i in range(15)]
    assert lines[16:] == ["  ... 5 more", "  history: /h/run-bank.jsonl"]
    assert str(v) == v.report()
    assert Verdict("x", VALID, "fine").report() == "x: VALID: fine"
    assert "more" not in Verdict("x", INVALID, "s", ["a"] * 15).report()


def test_combine_invalid_beats_unknown_beats_valid():
    good = Verdict("a", VALID, "fine", counts=Counts(5, 0, 0))
    meh = Verdict("b", UNKNOWN_VERDICT, "no reads", ["b1"])
    bad = Verdict("c", INVALID, "lost", ["c1", "c2"])
    both = combine("all", [good, meh, bad])
    assert both.status == INVALID and both.checker == "all"
    assert both.summary == "b: no reads; c: lost"
    assert both.evidence == ["b1", "c1", "c2"] and both.counts == Counts(5, 0, 0)
    assert combine("x", [good, meh]).status == UNKNOWN_VERDICT
    assert combine("x", [meh, good]).status == UNKNOWN_VERDICT
    ok = combine("x", [good, good])
    assert ok.valid and ok.summary == "a: fine; a: fine"
    result = RunResult([good, bad])
    assert result.verdict.invalid and result.verdict.checker == "a+c"
    assert result.report() == good.report() + "\n" + bad.report()


# ---------------------------------------------------------------- fault schedules

class FakeFault(Fault):
    """Records inject and heal calls; can fail either."""

    name = "fake"

    def __init__(self, label, calls, inject_error=None, heal_errors=0):
        super().__init__([SimpleNamespace(name=label)])
        self.label, self.calls = label, calls
        self.inject_error, self.heal_errors = inject_error, heal_errors

    def inject(self):
        self.calls.append(("inject", self.label))
        if self.inject_error:
            raise self.inject_error
        self.active = True
        return f"broke {self.label}"

    def heal(self):
        self.calls.append(("heal", self.label))
        if self.heal_errors:
            self.heal_errors -= 1
            raise FaultError(f"{self.label} still sick\nsecond line")
        self.active = False
        return f"healed {self.label}"


def test_schedule_runs_steps_in_order_and_notes_them():
    calls = []
    a, b = FakeFault("a", calls), FakeFault("b", calls)
    histories = [History(), History()]
    schedule = Schedule([Step(a, 0.01, 0.01), Step(b, 0.01, 0.01)])
    schedule.start(histories)
    assert wait_until(lambda: not schedule.running())
    schedule.finish()
    assert calls == [("inject", "a"), ("heal", "a"), ("inject", "b"), ("heal", "b")]
    assert schedule.errors == [] and not a.active and not b.active
    for history in histories:
        events = history.events()
        assert [(e.f, e.value, e.node) for e in events] == [
            ("fake-start", "fake a", "a"), ("fake", "broke a", "a"), ("heal-fake", "healed a", "a"),
            ("fake-start", "fake b", "b"), ("fake", "broke b", "b"), ("heal-fake", "healed b", "b")]
        assert history.client_ops() == []


def test_schedule_finish_heals_a_fault_held_when_stopped():
    calls = []
    a, b = FakeFault("a", calls), FakeFault("b", calls)
    schedule = Schedule([Step(a, 0.01, 60.0), Step(b, 0.01, 0.01)])
    history = History()
    started = time.monotonic()
    schedule.start([history])
    assert wait_until(lambda: a.active)
    schedule.finish(timeout=5)
    assert time.monotonic() - started < 2
    assert calls == [("inject", "a"), ("heal", "a")] and not a.active
    assert not schedule.running()
    assert [e.f for e in history.events()] == ["fake-start", "fake", "heal-fake"]


def test_schedule_finish_heals_what_is_still_active():
    calls = []
    a = FakeFault("a", calls)
    a.active = True
    Schedule([Step(a)]).finish()
    assert calls == [("heal", "a")] and not a.active


def test_schedule_collects_inject_errors_and_stops():
    calls = []
    a, b = FakeFault("a", calls, inject_error=FaultError("boom")), FakeFault("b", calls)
    schedule = Schedule([Step(a, 0.01, 0.01), Step(b, 0.01, 0.01)])
    history = History()
    schedule.start([history])
    assert wait_until(lambda: not schedule.running())
    schedule.finish()
    assert calls == [("inject", "a")]
    assert schedule.errors == ["injecting fake a: FaultError: boom"]
    assert [(e.f, e.value) for e in history.events()] == [("fake-start", "fake a"),
                                                          ("fake-error", "boom")]


def test_schedule_heal_error_is_collected_and_retried_by_finish():
    calls = []
    a, b = FakeFault("a", calls, heal_errors=1), FakeFault("b", calls)
    schedule = Schedule([Step(a, 0.01, 0.01), Step(b, 0.01, 0.01)])
    history = History()
    schedule.start([history])
    assert wait_until(lambda: not schedule.running())
    assert a.active
    schedule.finish()
    assert calls == [("inject", "a"), ("heal", "a"), ("heal", "a")] and not a.active
    assert schedule.errors == ["healing fake a: FaultError: a still sick"]
    assert [e.f for e in history.events()] == ["fake-start", "fake", "heal-fake-error",
                                               "heal-fake"]


def test_schedule_cycle_and_span():
    a, b = FakeFault("a", []), FakeFault("b", [])
    schedule = Schedule.cycle([a, b], every=0.5, hold=0.25, rounds=2)
    assert [s.fault for s in schedule.steps] == [a, b, a, b]
    assert schedule.span == 3.0 and not schedule.running()


# ---------------------------------------------------------------- pt-table-checksum

REPORT = """\
Checking if all tables can be checksummed ...
Starting checksum ...
            TS ERRORS  DIFFS     ROWS  DIFF_ROWS  CHUNKS SKIPPED    TIME TABLE
11-22T17:26:48      0      1     7085          1       1       0   0.030 append.rows
11-22T17:26:48      0      0        8          0       1       0   0.010 bank.accounts
"""


class FakeServer:
    """host/port/name, and execute() that records its statements."""

    def __init__(self, name="s0", port=3307):
        self.name, self.host, self.port = name, "127.0.0.1", port
        self.executed = []

    def execute(self, sql, args=None):
        self.executed.append((sql, args))
        return []


def test_parse_report():
    rows = parse_report(REPORT)
    assert len(rows) == 2
    assert rows[0] == {"TS": "11-22T17:26:48", "ERRORS": "0", "DIFFS": "1", "ROWS": "7085",
                       "DIFF_ROWS": "1", "CHUNKS": "1", "SKIPPED": "0", "TIME": "0.030",
                       "TABLE": "append.rows"}
    assert rows[1]["TABLE"] == "bank.accounts" and rows[1]["DIFFS"] == "0"
    assert parse_report("") == [] and parse_report("no header\n1 2 3\n") == []


def test_flags():
    assert flags(16 | 32) == ["TABLE_DIFF", "SKIP_CHUNK"]
    assert flags(0) == []
    assert flags(1 | 128) == ["ERROR", "REPLICATION_STOPPED"]


def test_tool_error():
    text = ("Checking if all tables can be checksummed ...\nStarting checksum ...\n\n"
            "Cannot connect to MySQL:   DBI connect failed\nline two\nline three\nline four\n")
    assert tool_error(text) == "Cannot connect to MySQL: DBI connect failed line two line three"
    assert tool_error("") == "no output"
    assert len(tool_error("x" * 1000)) == 400


def test_pt_table_checksum_command():
    argv = pt_table_checksum_command("/usr/bin/pt-table-checksum", FakeServer(), ["append", "bank"])
    assert argv[0] == "/usr/bin/pt-table-checksum"
    assert argv[1] == "h=127.0.0.1,P=3307,u=root"
    assert "--databases=append,bank" in argv
    assert "--no-check-binlog-format" in argv
    assert "--recursion-method=dsn=h=127.0.0.1,P=3307,u=root,D=percona,t=kewpie_dsns" in argv
    assert "--replicate=percona.checksums" in argv


def test_write_dsn_table_lists_exactly_the_replicas():
    primary = FakeServer()
    write_dsn_table(primary, [FakeServer("s1", 3308), FakeServer("s2", 3309)])
    inserts = [args for sql, args in primary.executed if sql.startswith("INSERT")]
    assert inserts == [(1, "h=127.0.0.1,P=3308,u=root"), (2, "h=127.0.0.1,P=3309,u=root")]
    assert any(sql.startswith("DELETE FROM `percona`.`kewpie_dsns`") for sql, _ in primary.executed)


def _fake_tool(tmp_path, stdout, code):
    (tmp_path / "report.txt").write_text(stdout)
    tool = tmp_path / "pt-table-checksum"
    tool.write_text(f"#!/bin/sh\ncat '{tmp_path / 'report.txt'}'\necho 'Cannot connect' >&2\n"
                    f"exit {code}\n")
    tool.chmod(0o755)
    return str(tool)


def test_check_pt_table_checksum_verdicts_from_exit_status(tmp_path):
    primary, replica = FakeServer(), FakeServer("s1", 3308)
    no_diffs = REPORT.replace("      1     7085", "      0     7085")
    v = check_pt_table_checksum(primary, [replica], ["append"], _fake_tool(tmp_path, no_diffs, 0))
    assert v.valid and v.summary.startswith("2 tables checksummed on s0 and 1 replica(s)")
    assert v.evidence[0].startswith("command: ") and "--no-check-binlog-format" in v.evidence[0]
    v = check_pt_table_checksum(primary, [replica], ["append"], _fake_tool(tmp_path, no_diffs, 32))
    assert v.status == UNKNOWN_VERDICT and "skipped: SKIP_CHUNK" in v.summary
    v = check_pt_table_checksum(primary, [replica], ["append"], _fake_tool(tmp_path, "", 1))
    assert v.status == UNKNOWN_VERDICT and v.summary == "exit 1 (ERROR): Cannot connect"
    v = check_pt_table_checksum(primary, [], ["append"], "/nonexistent/pt-table-checksum")
    assert v.status == UNKNOWN_VERDICT and v.summary == "s0 has no replicas"


# ---------------------------------------------------------------- workload clients

class FakeCursor:
    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, args=None):
        self.conn.executed.append(sql)


class FakeConn:
    def __init__(self):
        self.executed, self.rollbacks, self.closed = [], 0, False

    def cursor(self):
        return FakeCursor(self)

    def rollback(self):
        self.rollbacks += 1

    def close(self):
        self.closed = True


class FakeNode:
    """A node whose connect() hands out fake connections (or refuses)."""

    def __init__(self, name, refuse=False):
        self.name, self.refuse, self.conns = name, refuse, []

    def connect(self, **kwargs):
        if self.refuse:
            raise pymysql.err.OperationalError(2003, "Can't connect to MySQL server")
        self.conns.append(FakeConn())
        return self.conns[-1]


def _raise(exc, committing=False):
    def action(cur, call):
        call.committing = committing
        raise exc
    return action


def test_client_invoke_records_outcomes():
    node, history = FakeNode("n1"), History()
    client = Client("c0", node, history, ["SET SESSION x = 1"], random.Random(1))
    first = client.invoke("read", None, lambda cur, call: {"0": 100})
    assert (first.outcome, first.value, first.node, first.process) == (OK, {"0": 100}, "n1", "c0")
    assert client.invoke("insert", 5, lambda cur, call: None).value == 5
    assert len(node.conns) == 1 and node.conns[0].executed == ["SET SESSION x = 1"]

    rejected = client.invoke("transfer", {"amount": 9}, _raise(Rejected("too poor")))
    assert (rejected.outcome, rejected.error) == (FAIL, "too poor")
    deadlock = client.invoke("transfer", 1, _raise(pymysql.err.OperationalError(1213, "Deadlock"),
                                                   committing=True))
    assert (deadlock.outcome, deadlock.error) == (FAIL, "1213 Deadlock")
    assert node.conns[0].rollbacks == 2 and not node.conns[0].closed

    lost = client.invoke("insert", 6, _raise(pymysql.err.OperationalError(2013, "Lost connection"),
                                             committing=True))
    assert (lost.outcome, lost.error) == (UNKNOWN, "2013 Lost connection")
    assert node.conns[0].closed
    client.invoke("insert", 7, lambda cur, call: None)
    assert len(node.conns) == 2

    down = FakeNode("n2", refuse=True)
    refused = client.invoke("read", None, lambda cur, call: {}, node=down)
    assert (refused.outcome, refused.node) == (FAIL, "n2")
    assert refused.error.startswith("2003 Can't connect")
    assert history.counts() == Counts(3, 3, 1)


# ---------------------------------------------------------------- run_workloads

class Ticks(Workload):
    """Clients record a 'tick' now and then; no server is touched."""

    name = "ticks"

    def __init__(self, nodes, crash=False):
        super().__init__(nodes, clients=2)
        self.crash = crash
        self.setups = 0

    def setup(self):
        self.setups += 1

    def step(self, client):
        if self.crash:
            raise RuntimeError("bug in the workload")
        start = self.history.now()
        time.sleep(0.002)
        self.history.add(client.name, client.node.name, "tick", None, OK, start)

    def final_state(self):
        return {"n1": len(self.history.client_ops())}

    def check(self, final):
        status = VALID if final["n1"] > 0 else UNKNOWN_VERDICT
        return Verdict(self.name, status, f"{final['n1']} ticks", counts=self.history.counts())


NODES = [SimpleNamespace(name="n1"), SimpleNamespace(name="n2")]


def test_run_workloads_with_a_schedule(tmp_path):
    calls, settles = [], []
    workload = Ticks(NODES)
    schedule = Schedule([Step(FakeFault("n2", calls), 0.01, 0.01)])
    result = run_workloads([workload], 0.1, schedule, settle=lambda: settles.append(1),
                           history_dir=str(tmp_path / "h"), label="t")
    assert result.verdict.valid and workload.setups == 1 and len(settles) == 3  # before, after setup, at the end
    assert calls == [("inject", "n2"), ("heal", "n2")] and result.fault_errors == []
    path = str(tmp_path / "h" / "t-ticks.jsonl")
    assert result.verdicts[0].history_file == path
    saved = History.load(path)
    assert {(o.process, o.node) for o in saved.client_ops()} == {("t0", "n1"), ("t1", "n2")}
    assert [e.f for e in saved.events()] == ["fake-start", "fake", "heal-fake"]


def test_run_workloads_reports_crashes_and_fault_errors():
    with pytest.raises(WorkloadError, match="2 client thread\\(s\\) crashed: .*bug in the"):
        run_workloads([Ticks(NODES, crash=True)], 0.05)
    broken = FakeFault("n1", [], inject_error=FaultError("cannot kill"))
    with pytest.raises(WorkloadError, match="fault schedule failed: injecting fake n1"):
        run_workloads([Ticks(NODES)], 0.05, Schedule([Step(broken, 0.01, 0.01)]))


class HangingHeal(FakeFault):
    """A fault whose heal never returns until released (a thread stuck on a lock)."""

    def __init__(self, label, calls, release):
        super().__init__(label, calls)
        self.release = release

    def heal(self):
        self.calls.append(("heal", self.label))
        self.release.wait(30)
        return "healed late"


class QuickFinish(Schedule):
    """A schedule that gives a stuck thread a second, not HEAL_TIMEOUT + 30."""

    def finish(self, timeout=1.0):
        super().finish(timeout)


def test_run_workloads_gives_up_on_a_schedule_that_never_ends(monkeypatch):
    import lib.consistency.run as run_module
    monkeypatch.setattr(run_module, "HEAL_TIMEOUT", 0.3)
    release = threading.Event()
    schedule = QuickFinish([Step(HangingHeal("n1", [], release), 0.01, 0.01)])
    start = time.monotonic()
    try:
        with pytest.raises(WorkloadError, match="did not finish within 1s"):
            run_workloads([Ticks(NODES)], 0.05, schedule)
        assert time.monotonic() - start < 10      # not for ever, not the 30 s of the heal
    finally:
        release.set()
        schedule.finish(10)   # its thread logs the late heal now, not after pytest's logs close
        assert not schedule.running()


def test_workload_needs_nodes():
    with pytest.raises(ValueError, match="no servers"):
        Ticks([])


# ---------------------------------------------------------------- launcher and processes

def test_launcher_runs_inline_on_main_thread_else_on_one_thread():
    launcher = Launcher(name="test-launcher")
    assert launcher.call(threading.current_thread) is threading.main_thread()
    seen, errors = [], []

    def worker():
        seen.append(launcher.call(threading.current_thread))
        try:
            launcher.call(lambda: 1 / 0)
        except ZeroDivisionError as exc:
            errors.append(exc)

    for _ in range(3):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert len(seen) == 3 and len({id(t) for t in seen}) == 1
    assert seen[0].name == "test-launcher" and seen[0].is_alive()
    assert len(errors) == 3


def _start_from_short_lived_thread(executor):
    t = threading.Thread(target=executor.start)
    t.start()
    t.join()
    assert not t.is_alive() and executor.pid is not None


def test_child_outlives_the_thread_that_asked_for_it(tmp_path):
    sleep = shutil.which("sleep")
    executor = ProcessExecutor([sleep, "5"], dict(os.environ), str(tmp_path / "sleep.log"),
                               die_with_parent=True, launcher=Launcher(name="test-launcher"))
    try:
        _start_from_short_lived_thread(executor)
        time.sleep(0.5)
        assert executor.running()
    finally:
        executor.kill()
    assert not executor.running() and executor.returncode() == -signal.SIGKILL


def test_without_a_launcher_the_child_dies_with_its_thread(tmp_path):
    # the premise of the launcher: the parent-death signal follows the forking thread
    sleep = shutil.which("sleep")
    executor = ProcessExecutor([sleep, "5"], dict(os.environ), str(tmp_path / "sleep.log"),
                               die_with_parent=True)
    try:
        _start_from_short_lived_thread(executor)
        assert wait_until(lambda: not executor.running(), timeout=3)
        assert executor.returncode() == -signal.SIGKILL
    finally:
        executor.kill()


# ---------------------------------------------------------------- regressions found in review

def test_os_errors_are_not_mysql_codes():
    reset = ConnectionResetError(104, "Connection reset by peer")
    assert classify_error(reset, committing=True) == UNKNOWN
    assert classify_error(reset, committing=False) == FAIL
    from lib.consistency.oplog import describe_error
    from lib.servers.sql import error_code
    assert error_code(reset) == 0
    assert not describe_error(BrokenPipeError(32, "Broken pipe")).startswith("32 ")


def test_heal_error_without_a_message_is_recorded():
    calls = []
    fault = FakeFault("a", calls)
    fault.heal = lambda: (_ for _ in ()).throw(FaultError())  # raises, empty message
    schedule = Schedule([Step(fault, 0.01, 0.01)])
    schedule.start([History()])
    while schedule.running():
        time.sleep(0.01)
    schedule.finish()
    assert schedule.errors and schedule.errors[0].startswith("healing fake a: FaultError")


class PartialKill(Fault):
    """Kills the first node, then fails on the second: the first must still be healed."""

    name = "kill"

    def __init__(self, nodes, calls):
        super().__init__(nodes)
        self.calls = calls

    def inject(self):
        self.active = True
        self.calls.append(("kill", self.nodes[0].name))
        raise FaultError(f"cannot kill {self.nodes[1].name}")

    def heal(self):
        self.calls.append(("heal", self.nodes[0].name))
        self.active = False
        return "healed"


def test_partially_injected_fault_is_healed_by_finish():
    calls = []
    nodes = [SimpleNamespace(name="n1"), SimpleNamespace(name="n2")]
    schedule = Schedule([Step(PartialKill(nodes, calls), 0.01, 0.01)])
    schedule.start([History()])
    while schedule.running():
        time.sleep(0.01)
    schedule.finish()
    assert calls == [("kill", "n1"), ("heal", "n1")]
    assert "cannot kill n2" in schedule.errors[0]


def test_real_faults_mark_themselves_active_before_acting():
    from lib.consistency.faults import Kill, Pause

    class Broken:
        name = "s9"

        def kill(self):
            raise OSError("no such process")

        pause = kill

    for cls in (Kill, Pause):
        fault = cls([Broken()])
        with pytest.raises(OSError):
            fault.inject()
        assert fault.active, cls.__name__


def test_combine_of_nothing_is_unknown_and_counts_add_up():
    assert combine("none", []).status == UNKNOWN_VERDICT
    a = Verdict("bank", VALID, "ok", counts=Counts(3, 1, 0))
    b = Verdict("append", VALID, "ok", counts=Counts(10, 0, 2))
    c = Verdict("checksums", VALID, "equal")
    total = combine("all", [a, b, c]).counts
    assert (total.ok, total.fail, total.unknown) == (13, 1, 2)


def test_bank_without_final_state_is_unknown():
    read = Op(0, "b0", "s0", "read", {str(i): 100 for i in range(8)}, OK, 0.1, 0.2)
    assert check_bank([read], 8, 800, {}).status == UNKNOWN_VERDICT


def test_pt_table_checksum_timeout_is_unknown(tmp_path):
    tool = tmp_path / "slow-tool"
    tool.write_text("#!/bin/sh\nsleep 5\n")
    tool.chmod(0o755)
    verdict = check_pt_table_checksum(FakeServer(), [FakeServer("s1", 3308)], ["db"],
                                      tool=str(tool), timeout=0.3)
    assert verdict.status == UNKNOWN_VERDICT and "did not finish" in verdict.summary


def test_fault_schedule_failure_explains_itself():
    calls = []
    sick = FakeFault("n2", calls, heal_errors=5)
    workload = Ticks(NODES)
    with pytest.raises(WorkloadError) as info:
        run_workloads([workload], 0.05, Schedule([Step(sick, 0.01, 0.01)]))
    text = str(info.value)
    assert "fault schedule failed: healing fake n2: FaultError: n2 still sick" in text
    assert "--- fault schedule ---" in text and "fake: broke n2" in text
    assert "heal-fake-error: n2 still sick" in text
    assert "--- heal-fake-error evidence ---\nsecond line" in text


def test_gtid_sync_sql_per_flavor():
    from lib.consistency.registers import gtid_after_write_sql, gtid_wait_sql
    mariadb = SimpleNamespace(tree=SimpleNamespace(version=SimpleNamespace(flavor="mariadb")))
    mysql = SimpleNamespace(tree=SimpleNamespace(version=SimpleNamespace(flavor="mysql")))
    assert "last_gtid" in gtid_after_write_sql(mariadb) and "MASTER_GTID_WAIT" in gtid_wait_sql(mariadb)
    assert "gtid_executed" in gtid_after_write_sql(mysql)
    assert "WAIT_FOR_EXECUTED_GTID_SET" in gtid_wait_sql(mysql)
