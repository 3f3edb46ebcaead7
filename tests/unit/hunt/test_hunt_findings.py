"""Findings without servers: the statement trace, finding folders (finding.json, the
trace sorted by seq, evidence files), the error-log, hang and wrong-result findings,
the trials' seeds and reproduce lines, the summary table, summary.json and JUnit.

Covers: lib/hunt/finding.py, lib/hunt/summary.py, lib/hunt/logcheck.py, lib/hunt/hang.py,
lib/hunt/wrong.py, lib/hunt/trial.py, lib/randgen/trace.py
"""
import json
import os
import threading
from dataclasses import dataclass

import xmlschema

from lib.hunt.finding import FINDING_FILE, FORMAT, Finding, add_backtrace, write_finding
from lib.hunt.hang import deadlock_finding
from lib.hunt.knownbugs import KNOWN, NEW, KnownBugs, Tagged
from lib.hunt.logcheck import error_log_findings, suppressions
from lib.hunt.signature import crash_signature
from lib.hunt.summary import HuntSummary, junit
from lib.hunt.topology import parse_topology
from lib.hunt.trial import HuntSettings, Load, TrialResult
from lib.hunt.wrong import finding_of, load_difference_findings
from lib.randgen.result import RandgenResult
from lib.randgen.trace import StatementTrace, read_trace
from lib.servers.options import parse_options
from tests.conftest import ROOT

SCHEMA = os.path.join(ROOT, "tests", "schemas", "jenkins-junit.xsd")
SIG = crash_signature(11, "", "", ("kw_planted", "Item_func_udf_int::val_int"))


def test_trace_keeps_send_order_across_threads(tmp_path):
    trace = StatementTrace(str(tmp_path / "t.jsonl"), "s0")
    first, sent = trace.begin()
    second, sent2 = trace.begin()
    trace.done(second, sent2, 2, 12, "SELECT 2", rows=1, affected=1)      # ends first
    trace.done(first, sent, 1, 11, "UPDATE t SET a = 1", error=1213, message="Deadlock")

    def more(tid):
        for _ in range(50):
            seq, at = trace.begin()
            trace.done(seq, at, tid, 20 + tid, "SELECT 1", rows=1, affected=1)
    threads = [threading.Thread(target=more, args=(t,)) for t in (3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    trace.close()
    records = read_trace(str(tmp_path / "t.jsonl"))
    assert [r["seq"] for r in records] == list(range(1, 103))
    assert records[0] == {**records[0], "conn": 11, "thread": 1, "result": "error", "error": 1213,
                          "message": "Deadlock", "server": "s0"}
    assert records[1]["rows"] == 1 and records[1]["result"] == "ok"
    trace.done(200, 0.0, 1, 1, "late")  # after close: dropped, no error


def _finding():
    return Finding("crash", "crash", SIG, "s0 crashed: signal 11", "s0",
                   {"signal": 11, "query": "SELECT kw_planted(3)"},
                   {"crash-report-s0.txt": "got signal 11\n"})


def test_finding_folder(tmp_path):
    trace = StatementTrace(str(tmp_path / "trace.jsonl"))
    for sql in ("INSERT INTO t VALUES (1)", "SELECT kw_planted(3)"):
        seq, sent = trace.begin()
        trace.done(seq, sent, 1, 5, sql, rows=None, affected=1)
    trace.close()
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld]\n")
    finding = _finding()
    finding.copies["my-s0.cnf"] = str(cnf)
    finding.copies["grammar/missing.yy"] = str(tmp_path / "missing.yy")
    written = write_finding(finding, str(tmp_path / "findings"), 1, Tagged(NEW),
                            {"trial": {"number": 7, "seed": 13}, "reproduce": ["./kewpie.py"]},
                            str(tmp_path / "trace.jsonl"))
    assert os.path.basename(written.path) == f"t0007-1-crash-{SIG.id}"
    data = json.load(open(os.path.join(written.path, FINDING_FILE)))
    assert data["format"] == FORMAT and data["tag"] == "new" and data["bug"] is None
    assert data["signature"]["id"] == SIG.id and data["trial"]["seed"] == 13
    assert data["files"]["trace_statements"] == 2 and "not copied" in data["files"]["grammar/missing.yy"]
    lines = open(os.path.join(written.path, "trace.jsonl")).read().splitlines()
    assert [json.loads(l)["sql"] for l in lines] == ["INSERT INTO t VALUES (1)", "SELECT kw_planted(3)"]
    assert open(os.path.join(written.path, "crash-report-s0.txt")).read() == "got signal 11\n"
    assert (written.trial, written.seed, written.tag) == (7, 13, NEW)
    open(os.path.join(written.path, "backtrace-s0.txt"), "w").write("#0 ...\n")
    add_backtrace(written.path, "backtrace-s0.txt", "#0 a\n#1 b")
    data = json.load(open(os.path.join(written.path, FINDING_FILE)))
    assert data["files"]["backtrace"] == "backtrace-s0.txt"
    assert data["details"]["gdb_top_frames"] == ["#0 a", "#1 b"]


def test_error_log_findings_group_and_suppress():
    text = ("2025-11-25 10:00:00 0 [Note] InnoDB: started\n"
            "2025-11-25 10:00:01 5 [ERROR] InnoDB: Table `test`.`t1` is corrupted\n"
            "2025-11-25 10:00:02 6 [ERROR] InnoDB: Table `test`.`t2` is corrupted\n"
            "2025-11-25 10:00:03 7 [Warning] InnoDB: Database page corruption on disk\n"
            "2025-11-25 10:00:04 8 [ERROR] mariadbd: Deadlock found when trying to get lock; "
            "try restarting transaction\n"
            "2025-11-25 10:00:05 9 [Warning] Aborted connection 9 to db: 'test'\n"
            "2025-11-25 10:00:06 9 [ERROR] suite says this is fine\n")
    found = error_log_findings("s1", text, suppressions(["suite says"]))
    assert len(found) == 2
    corrupt = next(f for f in found if f.details["count"] == 2)
    assert corrupt.details["class"] == "corruption" and corrupt.server == "s1"
    assert all(f.kind == "errorlog" for f in found)


def test_deadlock_finding():
    result = RandgenResult(status="failure", reports=["Deadlock: 2 statement(s) ...\nSHOW ..."],
                           stalled=[{"Id": 4, "State": "User sleep", "Info": "SELECT SLEEP(600)"},
                                    {"Id": 5, "State": "Waiting for table metadata lock",
                                     "Info": "SELECT COUNT(*) FROM kw_hang"}])
    finding = deadlock_finding(result, "s0")
    assert finding.kind == "hang" and "2 statement(s) stuck" in finding.summary
    assert finding.texts["hang-s0.txt"].startswith("Deadlock: 2")
    assert deadlock_finding(RandgenResult(), "s0") is None


@dataclass(frozen=True)
class _Wrong:
    oracle: str = "norec"
    shape: str = "SELECT COUNT(*) FROM <t:int> WHERE <p>"
    queries: tuple = ("SELECT COUNT(*) FROM t1 WHERE a > 3", "SELECT SUM((a > 3) IS TRUE) FROM t1")
    results: tuple = ("4", "5")
    detail: str = "COUNT 4 but SUM 5"


def test_wrong_result_findings():
    finding = finding_of(_Wrong(), "s0")
    assert finding.signature.text == "wrong-result | norec | SELECT COUNT(*) FROM <t:int> WHERE <p>"
    assert finding.details["queries"][1].startswith("SELECT SUM") and finding.oracle == "norec"
    diffs = [{"validator": "ResultsetComparator", "kind": "content", "query": "SELECT a FROM t WHERE b = 1"},
             {"validator": "ResultsetComparator", "kind": "content", "query": "SELECT a FROM t WHERE b = 2"}]
    found = load_difference_findings(diffs, "s0")
    assert len(found) == 1 and found[0].oracle == "differential"


def test_trials_seeds_loads_and_reproduce(tmp_path):
    settings = HuntSettings(loads=(Load("/g/a.yy"), Load("/g/b.yy", "/g/b.zz")),
                            topology=parse_topology("single"), findings_dir=str(tmp_path),
                            randgen_home=str(tmp_path), base_seed=100,
                            random_options=tuple(parse_options(["--join-cache-level=4"])),
                            command=("--topology=single",))
    one, two = settings.trial(1), settings.trial(2, 12.5)
    assert (one.seed, one.load.grammar, two.seed, two.load.gendata) == (100, "/g/a.yy", 101, "/g/b.zz")
    assert two.duration == 12.5 and one.options == settings.trial(1).options
    argv = settings.reproduce(two)
    assert argv[:3] == ["./kewpie.py", "--mode=hunt", "--topology=single"]
    assert "--randgen-seed=101" in argv and "--gendata=/g/b.zz" in argv and "--trials=1" in argv
    assert "--mysqld=--join-cache-level=4" in argv


def _written(tmp_path, trial, tag, bug=None):
    settings_root = str(tmp_path / "f")
    return write_finding(_finding(), settings_root, 1, Tagged(tag, bug),
                         {"trial": {"number": trial, "seed": trial}})


def test_summary_groups_and_exit_rule(tmp_path):
    summary = HuntSummary()
    assert not summary.failed(False) and summary.table()[-1] == "(no findings)"
    for n in (1, 2, 3):
        summary.add(TrialResult(n, n, "/g/a.yy", "bot0", statements=100,
                                findings=[_written(tmp_path, n, NEW)]))
    summary.add(TrialResult(4, 4, "/g/a.yy", "bot1", statements=50))
    groups = summary.groups()
    assert len(groups) == 1 and groups[0].count == 3 and groups[0].first.trial == 1
    assert summary.statements == 350 and summary.failed(True)
    table = summary.table()
    assert SIG.id in table[2] and " 3 " in table[2]
    data = summary.to_json({"x": 1})
    assert data["signatures"][0]["trials"] == [1, 2, 3] and len(data["trials"]) == 4
    report = junit(summary, False, str(tmp_path / "hunt.xml"))
    xmlschema.XMLSchema(SCHEMA).validate(report)
    assert 'type="new"' in open(report).read()


def test_known_findings_pass_only_with_allow_known(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text(f"KW-1 open sig:{SIG.id} planted\n")
    bug = KnownBugs.load([str(path)]).tag(SIG, "10.11.19").bug
    summary = HuntSummary()
    summary.add(TrialResult(1, 1, "/g/a.yy", "bot0", findings=[_written(tmp_path, 1, KNOWN, bug)]))
    assert summary.failed(False) and not summary.failed(True)
    report = junit(summary, True, str(tmp_path / "known.xml"))
    xmlschema.XMLSchema(SCHEMA).validate(report)
    assert "<skipped" in open(report).read() and "KW-1" in open(report).read()
