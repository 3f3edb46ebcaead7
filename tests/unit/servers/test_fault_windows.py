"""The warnings check on fault-injection runs: a fault records its window on every server
it touches (target or peer), and the lines of its class are excused only inside that
window (plus a short settle) on that server; the same line outside it fails the test.

Covers: lib/servers/faultwindows.py, lib/checks/errorlog.py (fault classes),
lib/consistency/faults.py (windows opened and closed by the schedule),
lib/run/postchecks.py (warnings_problem, windows_seen_by)
"""
from __future__ import annotations

import re
import time
from types import SimpleNamespace

from lib.checks import errorlog
from lib.consistency.faults import Fault, Schedule, Step
from lib.run.postchecks import warnings_problem, windows_seen_by
from lib.servers.faultwindows import PEER, TARGET, FaultWindow, FaultWindows

T0 = float(int(time.time()) - 3600)  # a whole second, an hour ago
LAST_APPLIED = "[Warning] WSREP: Last Applied Action message in non-primary configuration from member 2"
UNAUTHENTICATED = ("[Warning] Aborted connection 31 to db: 'unconnected' user: 'unauthenticated' "
                   "host: '127.0.0.1' (This connection closed normally without authentication)")
RECOVERY = "[Warning] Recovery from master pos 4 and file mysql-bin.000001."


def at(seconds: float, text: str) -> str:
    """An error-log line written T0 + seconds (MariaDB's format, local time)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(T0 + seconds)) + f" 0 {text}"


def window(kind: str = "kill", role: str = PEER, start: float = 10, end: float | None = 20,
           server: str = "s0") -> FaultWindow:
    return FaultWindow(server, kind, role, T0 + start, None if end is None else T0 + end,
                       f"{kind} s1")


NO_SUPPRESSIONS: list[re.Pattern[str]] = []


def failing(lines: list[str], windows: list[FaultWindow], now: float = T0 + 100) -> list[str]:
    return errorlog.unsuppressed("\n".join(lines) + "\n", NO_SUPPRESSIONS, windows, now)


# ---------------------------------------------------------------- the rule

def test_a_line_inside_its_faults_window_is_excused_and_the_same_line_outside_fails():
    kill = [window("kill", PEER, start=10, end=20)]
    inside = at(15, LAST_APPLIED)
    assert failing([inside], kill) == []
    before = at(5, LAST_APPLIED)
    long_after = at(20 + errorlog.FAULT_SETTLE + 10, LAST_APPLIED)
    assert failing([before, inside, long_after], kill) == [before, long_after]
    assert failing([inside], []) == [inside]  # no fault at all: it fails


def test_the_window_reaches_the_settle_after_the_heal_and_starts_at_the_injections_second():
    kill = [window("kill", PEER, start=10.7, end=20)]
    assert failing([at(10, LAST_APPLIED)], kill) == []  # logged in the second the fault began
    assert failing([at(20 + errorlog.FAULT_SETTLE, LAST_APPLIED)], kill) == []
    late = at(20 + errorlog.FAULT_SETTLE + 1, LAST_APPLIED)
    assert failing([late], kill) == [late]


def test_an_unhealed_fault_covers_until_the_check():
    open_kill = [window("pause", TARGET, start=10, end=None)]
    line = at(50, UNAUTHENTICATED)
    assert failing([line], open_kill, now=T0 + 60) == []
    assert failing([line], open_kill, now=T0 + 40) == [line]


def test_a_class_excuses_only_its_kinds_and_roles():
    # a replica's relay-log recovery: a killed or restarted target, nothing else
    line = at(15, RECOVERY)
    assert failing([line], [window("kill", TARGET)]) == []
    assert failing([line], [window("restart", TARGET)]) == []
    assert failing([line], [window("kill", PEER)]) == [line]          # a peer was not restarted
    assert failing([line], [window("partition", TARGET)]) == [line]   # a cut is no restart
    assert failing([line], [window("tamper", TARGET)]) == [line]      # not a fault that breaks


def test_a_failed_join_that_wait_cluster_restarts_is_a_down_faults_line():
    """The IST a node restarted to heal a fault was cut short: Galera's three lines
    (wait_cluster restarts that node once) are excused for kills and restarts only."""
    lines = [at(15, "[ERROR] WSREP: Receiving IST failed, node restart required: IST receiver "
                    "reported failure: 'IST didn't contain all write sets, expected last: 25768 "
                    "last received: 25617' (71)"),
             at(15, "[ERROR] WSREP: ./gcs/src/gcs.cpp:s_join():988: Sending JOIN failed: -103 "
                    "(Connection was closed)."),
             at(15, "[Warning] WSREP: Failed to JOIN the cluster after SST "
                    "gcs_join(e92c7c8a-e9f6-11f1-aa71-d6de7d57c85c:25617) failed")]
    assert failing(lines, [window("kill", TARGET)]) == []
    assert failing(lines, [window("restart", PEER)]) == []
    assert failing(lines, [window("pause", TARGET)]) == lines
    assert failing(lines, []) == lines


def test_other_lines_in_a_window_still_fail():
    crash = at(15, "[ERROR] mariadbd got signal 11 ;")
    corrupt = at(16, "[ERROR] InnoDB: Database page corruption on disk or a failed read")
    assert failing([crash, corrupt, at(17, LAST_APPLIED)], [window("kill", PEER)]) == [crash, corrupt]


def test_lines_without_a_timestamp_are_never_excused():
    line = LAST_APPLIED  # no time: it cannot be placed in a window
    assert failing([line], [window("kill", PEER)]) == [line]
    assert errorlog.line_time(at(0, "x")) == T0 and errorlog.line_time("garbage") is None


def test_every_class_names_known_kinds_and_says_why():
    assert errorlog.FAULT_CLASSES
    for fault_class in errorlog.FAULT_CLASSES:
        assert fault_class.reason and fault_class.kinds <= errorlog.EVERY_FAULT
        assert fault_class.roles <= {TARGET, PEER} and re.compile(fault_class.regex)


# ---------------------------------------------------------------- recording

class FakeServer:
    """What a fault and the warnings check use of a server."""

    def __init__(self, name: str, log: str = "", group: str = "") -> None:
        self.name = name
        self.group = group
        self.fault_windows = FaultWindows()
        self.path = f"/x/{name}/error.log"
        self.paths = SimpleNamespace(error_log=self.path)
        self.text = log
        self.errlog = self   # its error log: text in memory

    def size(self) -> int:
        return len(self.text.encode())

    def since(self, mark: int) -> str:
        return self.text.encode()[mark:].decode()

    def shares_group(self, other) -> bool:
        return bool(self.group) and other is not self and other.group == self.group


class Breaks(Fault):
    name = "kill"

    def __init__(self, nodes, group, seen):
        super().__init__(nodes, group)
        self.seen = seen

    def inject(self):
        self.active = True
        self.seen.append(("inject", [len(s.fault_windows.all()) for s in self.group]))
        return "killed"

    def heal(self):
        self.active = False
        self.seen.append(("heal", [w.end for s in self.group for w in s.fault_windows.all()]))
        return "restarted"


def test_the_schedule_opens_a_window_per_server_and_closes_it_after_the_heal():
    s0, s1, s2 = FakeServer("s0"), FakeServer("s1"), FakeServer("s2")
    seen: list = []
    before = time.time()
    schedule = Schedule([Step(Breaks([s1], [s0, s1, s2], seen), after=0.01, hold=0.01)])
    schedule.start([])
    while schedule.running():  # the schedule's thread injects and heals
        time.sleep(0.005)
    schedule.finish()
    assert seen[0] == ("inject", [1, 1, 1])          # open before the injection
    assert seen[1] == ("heal", [None, None, None])   # still open while healing
    windows = {s.name: s.fault_windows.all()[0] for s in (s0, s1, s2)}
    assert {n: w.role for n, w in windows.items()} == {"s0": PEER, "s1": TARGET, "s2": PEER}
    for w in windows.values():
        assert w.kind == "kill" and before <= w.start <= w.end <= time.time()
        assert w.fault == "kill s1"


def test_warnings_problem_uses_each_servers_windows_then_forgets_them():
    now = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    line = f"{stamp} 0 {LAST_APPLIED}"
    peer, bystander = FakeServer("s0", line + "\n"), FakeServer("s9", line + "\n")
    peer.fault_windows.open("s0", "isolate", PEER, "isolate s1", at=now - 5)
    marks = errorlog.LogMarks()
    problem = warnings_problem(marks, [peer, bystander], [])
    assert "s9 (/x/s9/error.log):" in problem and "s0 (" not in problem  # s9 had no fault
    assert peer.fault_windows.all() == []
    peer.text += line + "\n"  # the same line, checked again with no window: it fails
    assert "s0 (/x/s0/error.log):" in warnings_problem(marks, [peer], [])


def test_a_stopped_members_own_window_is_a_peers_window_on_the_rest_of_its_group():
    """A Galera node a test stops opens a window on itself only (GaleraServer.stop); its
    group's other members read it as a peer's, a server outside the group does not."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    line = f"{stamp} 0 {LAST_APPLIED}"
    s0, s1, s2 = (FakeServer(f"s{i}", line + "\n", group="g") for i in range(3))
    other = FakeServer("s3", line + "\n")
    s1.fault_windows.open("s1", "restart", TARGET, "stop s1", at=now - 5)
    seen = windows_seen_by(s0, [s0, s1, s2, other])
    assert [(w.server, w.role, w.fault) for w in seen] == [("s0", PEER, "stop s1")]
    assert s1.fault_windows.all()[0].role == TARGET  # a copy: the target's window is kept
    assert windows_seen_by(other, [s0, s1, s2, other]) == []
    problem = warnings_problem(errorlog.LogMarks(), [s0, s1, s2, other], [])
    assert problem.count("error.log):") == 1 and "s3 (/x/s3/error.log):" in problem
    # a peer's window excuses only what a peer may log: not a target-only class
    assert failing([at(15, RECOVERY)], [window("restart", PEER)]) == [at(15, RECOVERY)]


def test_hours_before_ten_have_a_timestamp_too():
    """MariaDB pads the hour with a space before 10:00 ('2026-11-26  0:25:35'): such a
    line still has its time, so a fault window can excuse it after midnight."""
    import datetime
    padded = errorlog.line_time("2026-11-26  0:25:35 0 [Warning] WSREP: x")
    assert padded == datetime.datetime(2026, 11, 26, 0, 25, 35).timestamp()
    assert errorlog.line_time("2026-11-26 13:25:35 0 [Warning] x") == \
        datetime.datetime(2026, 11, 26, 13, 25, 35).timestamp()
    assert errorlog.line_time("no time [Warning] x") is None
