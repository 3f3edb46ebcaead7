"""Pure logic of an errorlog finding's reduction: the traced statements that logged the
line, the lines a try's log excerpt signs (the hunt's suppressions, a crash report left
to the crash oracle), the Perl pattern and the case's check around its statements, and
the confirmation's reading of a tool's output.

Covers: lib/reduce/errorlog.py, lib/reduce/case.py, lib/reduce/mtrcase.py, lib/reduce/confirm.py
"""
import json
import os
import re

from lib.checks.errorlog import line_time
from lib.hunt.signature import errorlog_signature
from lib.reduce.case import read_input
from lib.reduce.confirm import failed_as_found
from lib.reduce.errorlog import (DIE_PREFIX, case_lines, finding_signature, line_pattern,
                                 logged_signatures, logging_statements)
from lib.reduce.mtrcase import case_text

HERE = os.path.dirname(os.path.abspath(__file__))
CRASH_LOG = os.path.join(os.path.dirname(os.path.dirname(HERE)), "fixtures", "hunt",
                         "crash_signal11.log")
ROLLBACK = ("This transaction was rolled back and cannot be committed. Only supported "
            "operation is to roll it back, so all pending changes will be discarded. Please "
            "restart another transaction.")
ROLLBACK_LINE = f"2026-11-28  5:16:53 7 [ERROR] mariadbd: {ROLLBACK}"
RECORD_LINE = "2026-11-28  4:56:59 9 [ERROR] mariadbd: Can't find record in 't1'"
READING_LINE = "2026-11-28  4:58:10 6 [ERROR] Got error 128 when reading table './test/t3'"
ARIA_LINE = ("2026-11-28  4:41:25 6 [ERROR] mariadbd: Got error '126 \"Index is corrupted\"' "
             "for './test/t3.MAI'")


def _record(seq, conn, t, sql="SELECT 1", error=0, message=""):
    record = {"seq": seq, "conn": conn, "t": t, "ms": 2.0, "sql": sql, "server": "s0",
              "result": "error" if error else "ok"}
    if error:
        record.update(error=error, message=message)
    return record


def test_the_statement_whose_error_is_the_logged_message_logged_it():
    records = [_record(1, 5, 100.0), _record(2, 9, 100.5, "REPLACE INTO t1 VALUES (1)", 1032,
                                             "Can't find record in 't1'"),
               _record(3, 9, 100.6, "SELECT 2", 1146, "Table 'test.x' doesn't exist")]
    assert logging_statements(records, [RECORD_LINE]) == ((2,), True)
    records[1]["message"] = ROLLBACK
    assert logging_statements(records, [ROLLBACK_LINE]) == ((2,), True)


def test_without_such_an_error_the_lines_thread_in_its_second():
    # no statement got an error for "Got error 128 when reading table": the line's
    # thread (6) and second (its local time) name the candidates
    when = line_time(READING_LINE)
    records = [_record(1, 6, when - 30), _record(2, 6, when + 0.2), _record(3, 7, when + 0.3),
               _record(4, 6, when + 0.9), _record(5, 6, when + 10)]
    assert logging_statements(records, [READING_LINE]) == ((2, 4), False)
    assert logging_statements(records, ["no time stamp [ERROR] x"]) == ((), False)


def test_a_tries_excerpt_signs_the_oracles_lines_only():
    excerpt = "\n".join([
        "2026-11-28 18:50:00 4 [Note] something",
        "2026-11-28 18:50:00 4 [Warning] Aborted connection 4 to db: 'test'",
        "2026-11-28 18:50:00 4 [ERROR] mariadbd: Deadlock found when trying to get lock; "
        "try restarting transaction",           # the hunt's suppression
        ROLLBACK_LINE.replace(" 7 ", " 12 "), ""])
    assert [s.id for s in logged_signatures(excerpt)] == [errorlog_signature(ROLLBACK_LINE).id]
    assert logged_signatures("") == []
    # a crash report's [ERROR] line is the crash oracle's
    crash = open(CRASH_LOG).read()
    assert "[ERROR] /usr/sbin/mariadbd got signal 11" in crash
    assert logged_signatures(READING_LINE + "\n" + crash) == [
        errorlog_signature(READING_LINE)]


def test_the_pattern_matches_the_line_as_its_signature_does():
    for line, same, other in [
            (RECORD_LINE, "2027-01-01 10:00:00 3 [ERROR] mariadbd: Can't find record in 't22'",
             "2026-11-28  4:56:59 9 [ERROR] mariadbd: Can't find record"),
            (READING_LINE, "2026-01-01  1:02:03 44 [ERROR] Got error 128 when reading table "
                           "'./test/t2'",
             "2026-01-01  1:02:03 44 [ERROR] Got error 128 when writing table './test/t2'"),
            # the error number is kept: 126 is another bug
            (READING_LINE, READING_LINE.replace("t3", "t12"), READING_LINE.replace("128", "126")),
            (ARIA_LINE, ARIA_LINE.replace("t3", "t1").replace(" 6 ", " 17 "),
             ARIA_LINE.replace("126 \"Index is corrupted", "145 \"Table was marked as crashed")),
            (ROLLBACK_LINE, ROLLBACK_LINE.replace(" 7 ", " 1234 "),
             ROLLBACK_LINE.replace("[ERROR]", "[Warning]"))]:
        pattern = re.compile(line_pattern(line))
        assert pattern.search(line) and pattern.search(same), (line, pattern.pattern)
        assert errorlog_signature(same).id == errorlog_signature(line).id
        assert not pattern.search(other), (other, pattern.pattern)
        assert errorlog_signature(other).id != errorlog_signature(line).id
    # a corruption line the oracle flags at another level keeps its level
    crashed = "2026-11-28 10:00:00 5 [Warning] Table './test/t1' is marked as crashed"
    assert logged_signatures(crashed) == [errorlog_signature(crashed)]
    pattern = re.compile(line_pattern(crashed))
    assert pattern.search(crashed.replace("t1", "t9")) and \
        not pattern.search(crashed.replace("[Warning]", "[ERROR]"))
    # written for Perl's m/.../: no unescaped slash or sigil
    assert not re.search(r"(?<!\\)[/@]", line_pattern(READING_LINE))


def test_the_cases_check_notes_the_size_then_dies_with_the_line():
    before, after = case_lines(RECORD_LINE, "|||")
    assert before[0].startswith("let KW_ERRORLOG= `SELECT IF(@@log_error LIKE '/%'")
    assert before[0].endswith("`|||") and before[1] == "--perl" and before[-1] == "EOF"
    text = "\n".join(after)
    assert after.count("--perl") == 1 and "EOF" in after
    assert f"--die {DIE_PREFIX}$found" in text and "seek($l, $pos, 0)" in text
    assert after[-2] == "--source $MYSQL_TMP_DIR/kw_errorlog.inc"
    assert "/" + line_pattern(RECORD_LINE) + "/" in text


def _folder(tmp_path, name, lines, records):
    folder = tmp_path / name
    folder.mkdir()
    sig = errorlog_signature(lines[0])
    (folder / "finding.json").write_text(json.dumps({
        "format": "kewpie-hunt-finding/1", "kind": "errorlog", "oracle": "errorlog",
        "signature": {"kind": sig.kind, "parts": list(sig.parts)}, "title": "logged",
        "server": "s0", "topology": {"kind": "single", "servers": [{"name": "s0"}]},
        "details": {"class": "error", "lines": lines, "count": len(lines)}}))
    (folder / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(folder)


def test_an_errorlog_finding_is_read_with_the_statement_that_logged_it(tmp_path):
    records = [_record(1, 5, 100.0, "CREATE TABLE t1 (a INT)"),
               _record(2, 9, 100.1, "INSERT INTO t1 VALUES (1)"),
               _record(3, 9, 100.2, "REPLACE INTO t1 VALUES (1)", 1032,
                       "Can't find record in 't1'"),
               _record(4, 5, 100.3, "SELECT 1")]
    case = read_input(_folder(tmp_path, "t0008-1-errorlog-a", [RECORD_LINE], records))
    assert (case.kind, case.oracle) == ("errorlog", "errorlog")
    assert [s.seq for s in case.failing] == [3] == [s.seq for s in case.culprits]
    text = case_text(case, case.statements[:3], {3: 1032})
    assert text.index("let KW_ERRORLOG=") < text.index("CREATE TABLE t1") < \
        text.index("--error 0,1032") < text.index("--die errorlog: ") < \
        text.index("DROP DATABASE test")
    # known by its thread and second only: truncated there, nothing pinned
    when = line_time(READING_LINE)
    records = [_record(1, 6, when - 5), _record(2, 6, when + 0.5), _record(3, 6, when + 30)]
    case = read_input(_folder(tmp_path, "t0009-1-errorlog-b", [READING_LINE], records))
    assert [s.seq for s in case.failing] == [2] and case.culprits == ()


def _old_folder(tmp_path, name, lines, records, former=""):
    """A finding folder as sessions 1 to 6 wrote it: every number of its line masked."""
    folder = _folder(tmp_path, name, lines, records)
    path = os.path.join(folder, "finding.json")
    data = json.load(open(path))
    former = former or errorlog_signature(lines[0]).former
    data["signature"] = {"id": "3dfa3a2b0daa", "text": former, "kind": "errorlog",
                         "parts": [former.split(" | ", 1)[1]]}
    data["title"] = former.split(" | ", 1)[1]
    json.dump(data, open(path, "w"))
    return folder


def test_a_finding_signed_with_every_number_masked_is_reduced_as_its_line_signs_today(
        tmp_path):
    when = line_time(READING_LINE)
    records = [_record(1, 6, when - 5), _record(2, 6, when + 0.5)]
    e126 = READING_LINE.replace("128", "126")
    case = read_input(_old_folder(tmp_path, "t0025-3-errorlog-3dfa3a2b0daa", [e126, READING_LINE],
                                  records))
    assert case.signature == errorlog_signature(e126) != errorlog_signature(READING_LINE)
    assert case.signature.former_id == "3dfa3a2b0daa"
    assert case.title == "[ERROR] Got error 126 when reading table ?"
    # a try that logs the 128 line does not reproduce it; the 126 line does
    assert case.signature.id not in [s.id for s in logged_signatures(READING_LINE)]
    assert [s.id for s in logged_signatures(e126.replace("t3", "t1"))] == [case.signature.id]
    # the case's --die is the 126 line's only, and so is its confirmation
    assert "126" in line_pattern(e126) and "128" not in line_pattern(e126)
    out = MTR_FAIL.replace("mariadbd: Can't find record in 't1'", e126.split("[ERROR] ")[1])
    assert failed_as_found(out, "kw_reduce", "reduced", "errorlog", case.signature)
    assert not failed_as_found(out.replace("126", "128"), "kw_reduce", "reduced", "errorlog",
                               case.signature)
    # a finding signed today, or whose lines are not its signature's, keeps its own
    new = read_input(_folder(tmp_path, "t0026-1-errorlog-x", [e126], records))
    assert new.signature == case.signature and new.title == "logged"
    other = read_input(_old_folder(tmp_path, "t0027-1-errorlog-y", [RECORD_LINE], records,
                                   case.signature.former))
    assert other.signature.id == "3dfa3a2b0daa"
    assert finding_signature(other.signature, []) == other.signature


MTR_FAIL = """kw_reduce.reduced                        [ fail ]
        Test ended at 2026-11-28 19:00:00

CURRENT_TEST: kw_reduce.reduced
mysqltest: At line 31: errorlog: 2026-11-28 19:00:00 5 [ERROR] mariadbd: Can't find record in 't1'
"""


def test_the_confirmation_signs_the_cases_die_line_again():
    sig = errorlog_signature(RECORD_LINE)
    assert failed_as_found(MTR_FAIL, "kw_reduce", "reduced", "errorlog", sig)
    # another line, no [ fail ] row, no signature: not the bug's way
    assert not failed_as_found(MTR_FAIL, "kw_reduce", "reduced", "errorlog",
                               errorlog_signature(READING_LINE))
    assert not failed_as_found(MTR_FAIL.replace("[ fail ]", "[ pass ]"), "kw_reduce",
                               "reduced", "errorlog", sig)
    assert not failed_as_found(MTR_FAIL, "kw_reduce", "reduced", "errorlog", None)
    # mysql-test's own warnings check fails the case too, without the --die: not counted
    warned = ("kw_reduce.reduced                        [ fail ]  Found warnings/errors in "
              "server log file!\n" + RECORD_LINE + "\n")
    assert not failed_as_found(warned, "kw_reduce", "reduced", "errorlog", sig)
