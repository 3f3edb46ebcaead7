"""The results a replay bot holds back while a late crash could still be theirs: held for
the window after their end, released when it has passed (or all at once when the
server goes), one replaced by the crash found to be its, each handed over once.

Covers: lib/replay/late.py
"""
from __future__ import annotations

from lib.replay.execute import NONE, ReplayResult
from lib.replay.late import LATE_WINDOW, HeldResults


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _result(name: str) -> ReplayResult:
    return ReplayResult(name, name, f"/c/{name}.sql", "10.11.19", "/usr", NONE)


def test_held_results_are_final_once_their_window_has_passed():
    clock = _Clock()
    late = HeldResults(clock=clock)
    a, b = _result("MDEV-1"), _result("MDEV-2")
    late.hold("/usr", None, a)  # type: ignore[arg-type]
    clock.now += LATE_WINDOW / 2
    late.hold("/usr", None, b)  # type: ignore[arg-type]
    assert [h.result for h in late.candidates("/usr")] == [b, a]   # newest first
    late.release("/usr", settled_only=True)
    assert late.take() == []                         # a's window has not passed
    clock.now += LATE_WINDOW / 2
    assert late.remaining("/usr") == LATE_WINDOW / 2
    late.release("/usr", settled_only=True)
    assert late.take() == [a] and late.take() == []  # handed over once
    late.release("/usr")                             # the server went: all final
    assert late.take() == [b] and late.remaining("/usr") == 0.0


def test_a_held_result_replaced_by_its_late_crash():
    late = HeldResults(clock=_Clock())
    a, crash = _result("MDEV-1"), _result("MDEV-1")
    crash.outcome = "crash"
    late.hold("/usr", None, a)  # type: ignore[arg-type]
    late.done(_result("MDEV-0"))
    late.replace("/usr", a, crash)
    late.release("/usr")
    assert [r.outcome for r in late.take()] == [NONE, "crash"]
