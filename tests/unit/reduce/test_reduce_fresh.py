"""Pure logic of a reduction whose case must fail on fresh servers: the reducer keeps the
smallest case that failed on a try with fresh servers, saves and resumes it, and its
second round (every try on fresh servers) starts from it; the record of a case that did
not reproduce on a fresh server says so in its state and report.

The "servers" here are a model in a few lines: a try's candidate crashes when it holds
the culprit and the rows, and ARM ran in it -- or in an earlier try on the same servers,
which a try that did not crash leaves for the next one (unless every try is fresh).

Covers: lib/reduce/reducer.py, lib/reduce/attempts.py, lib/reduce/check.py
"""
from lib.hunt.signature import Signature
from lib.reduce import attempts
from lib.reduce.attempts import Attempt
from lib.reduce.case import ReduceInput, Statement
from lib.reduce.check import Outcome
from lib.reduce.reducer import Reducer, load_smallest

ARM, ROWS, CULPRIT = 4, 6, 9


def _case():
    stmts = tuple(Statement(i, 1, f"SELECT {i}") for i in range(1, 10))
    return ReduceInput("/f", "crash", "crash", Signature("crash", ("signal 11", "frames: f")),
                       "signal 11 in f", "single", ((),), stmts,
                       {"details": {"in_flight": [{"seq": CULPRIT, "conn": 1}]}})


class Servers:
    """The model of the module docstring: fails(candidate, options) and last()."""

    def __init__(self):
        self.armed = False        # state the last try left on the servers
        self.reused = False       # the next try runs on the servers of the last one
        self.fresh_only = False
        self.outcome = None

    def fails(self, cand, opts):
        seqs = {s.seq for s in cand}
        fresh = not self.reused
        if fresh:
            self.armed = False
        crashed = {ROWS, CULPRIT} <= seqs and (ARM in seqs or self.armed)
        self.armed = self.armed or ARM in seqs
        self.reused = not crashed and not self.fresh_only
        if crashed:
            self.outcome = Outcome(statements=tuple(cand), fresh=fresh,
                                   options=tuple(tuple(o) for o in opts))
        return crashed

    def last(self):
        return self.outcome


def test_a_reused_server_lets_the_state_go_and_the_second_round_keeps_it(tmp_path):
    servers = Servers()
    reducer = Reducer(_case(), servers.fails, str(tmp_path), lambda: 0, last=servers.last,
                      skip=("related", "options"))
    assert reducer.check(list(reducer.statements))    # the start: the first try is fresh
    first = reducer.run()
    # the first round dropped ARM: its last reproducing try ran on armed servers
    assert ARM not in [s.seq for s in first.statements]
    assert not servers.last().fresh
    assert reducer.fresh is not None and ARM in [s.seq for s in reducer.fresh[0]]
    smallest_fresh = len(reducer.fresh[0])

    servers.fresh_only, servers.reused = True, False
    reducer.again_fresh()
    assert reducer.fresh_only and reducer.done == [] and \
        len(reducer.statements) == smallest_fresh
    second = reducer.run()
    assert [s.seq for s in second.statements] == [ARM, ROWS, CULPRIT]
    assert all(p.fresh for p in second.passes) and not any(p.fresh for p in first.passes)
    assert servers.last().fresh


def test_the_fresh_case_is_saved_and_resumed(tmp_path):
    servers = Servers()
    case = _case()
    reducer = Reducer(case, servers.fails, str(tmp_path), lambda: 0, last=servers.last,
                      skip=("related", "options"))
    assert reducer.check(list(reducer.statements))
    reducer.run()
    reducer.again_fresh()
    saved = load_smallest(str(tmp_path), case)
    assert saved["fresh_only"] and [s["seq"] for s in saved["fresh"]["statements"]] == \
        [s.seq for s in reducer.fresh[0]]
    again = Reducer(case, servers.fails, str(tmp_path), lambda: 0)
    again.resume(saved)
    assert again.fresh_only and again.fresh == reducer.fresh


def test_without_a_fresh_case_the_second_round_starts_from_the_whole_trace(tmp_path):
    case = _case()
    reducer = Reducer(case, lambda cand, opts: True, str(tmp_path), lambda: 0)
    reducer.statements = list(case.statements[-2:])
    reducer.again_fresh()
    assert reducer.statements == list(case.statements)
    assert reducer.options == case.server_options


def test_a_candidate_is_fresh_only_when_its_own_try_was():
    outcome = Outcome(statements=(Statement(1, 1, "SELECT 1"),), options=((),), fresh=True)
    assert outcome.tried([Statement(1, 1, "SELECT 1")], [[]])
    assert not outcome.tried([Statement(2, 1, "SELECT 2")], [[]])


def test_the_record_of_a_case_no_fresh_server_reproduces():
    tries = [Attempt("pass", "serial", 5, 0.4, "nothing", 5)] * 3
    data = attempts.record("/f", "6bf08944bc00", "signal 11 in optimize_keyuse", 39600, 3,
                           tries, attempts.NOT_FRESH, "on fresh servers the case did not "
                           "fail in 3 tries.")
    assert data["state"] == "not reproducible on a fresh server"
    text = attempts.report(data)
    assert "NOT REPRODUCIBLE ON A FRESH SERVER: on fresh servers the case did not fail" in text
    assert "pass (serial replay, 5 statements): 3 tries, 3 nothing" in text
    plain = attempts.report(attempts.record("/f", "x", "t", 10, 2, tries))
    assert "NOT REPRODUCIBLE FROM ITS TRACE: none of the start candidates" in plain
