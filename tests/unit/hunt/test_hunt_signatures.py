"""Crash reports read from mariadbd's error log, and the signatures of every kind of
finding: stable across addresses, offsets, paths, literals and seeds.

Covers: lib/hunt/crashreport.py, lib/hunt/demangle.py, lib/hunt/signature.py,
lib/checks/backtrace.py
"""
import os
import re

import pytest

from lib.hunt.crashreport import bug_frames, frame_function, gdb_frames, parse_crash_report
from lib.hunt.demangle import demangle, function_name
from lib.hunt.signature import (Signature, crash_signature, divergence_signature,
                                errorlog_signature, fingerprint, hang_signature, title,
                                wrong_result_signature)
from tests.conftest import ROOT

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "hunt")


def _log(name):
    with open(os.path.join(FIXTURES, name)) as fh:
        return fh.read()


def test_signal_11_report_with_udf_frame():
    report = parse_crash_report(_log("crash_signal11.log"))
    assert report.signal == 11 and not report.assertion
    assert report.query == "SELECT kw_planted(5)" and report.connection_id == 4
    assert report.bug_frames()[:5] == ("kw_planted", "Item_func_udf_int::val_int",
                                       "Type_handler::Item_send_longlong",
                                       "Protocol::send_result_set_row", "select_send::send_data")
    assert report.text.startswith("261125 18:44:25 [ERROR] /usr/sbin/mariadbd got signal 11")
    assert "Kernel version" in report.text.splitlines()[-1]


def test_assertion_report():
    report = parse_crash_report(_log("crash_assertion.log"))
    assert report.signal == 6
    assert report.assertion == ("table->file->inited == handler::INDEX in join_read_key2 "
                                "(sql_select.cc)")
    assert report.bug_frames() == ("join_read_key2", "join_read_key", "sub_select", "do_select")
    assert report.text.startswith("mariadbd: /home/buildbot")


def test_innodb_assertion_report():
    report = parse_crash_report(_log("crash_innodb.log"))
    assert report.assertion == "!cursor->index()->is_committed() (btr0cur.cc)"
    assert report.bug_frames() == ("btr_cur_t::search_leaf_page", "row_ins_clust")
    assert report.query == "INSERT INTO t1 VALUES (1, 'a')"


def test_no_report_in_a_clean_log():
    assert parse_crash_report("2025-01-01 0 [Note] ready for connections.\n") is None


@pytest.mark.parametrize("line,func", [
    ("/usr/sbin/mariadbd(_ZN4JOIN4execEv+0x30)[0x564ce08f3280]", "JOIN::exec"),
    ("/usr/sbin/mariadbd(+0x829ab1)[0x564ce086dab1]", "?"),
    ("x/planted.c:11(kw_planted)[0x7f4b319e31cc]", "kw_planted"),
    ("sql/sql_select.cc:20880(sub_select(JOIN*, st_join_table*, bool))[0x55d0c4a19322]",
     "sub_select"),
    ("Thread pointer: 0x774af0000c68", None),
])
def test_frame_lines(line, func):
    assert frame_function(line) == func


def test_demangling():
    assert demangle("_ZN17Item_func_udf_int7val_intEv") == "Item_func_udf_int::val_int()"
    assert function_name("_ZN4JOIN10exec_innerEv.cold") == "JOIN::exec_inner"
    assert function_name("handle_one_connection") == "handle_one_connection"
    assert demangle("not_mangled") == "not_mangled"


def _shifted(text):
    """The same crash in another process: other addresses, offsets, paths, line numbers."""
    text = re.sub(r"0x[0-9a-f]{6,}", lambda m: hex(int(m.group(0), 16) + 0x1234), text)
    text = re.sub(r"\+0x[0-9a-f]+\)", "+0x99)", text)
    return text.replace("31a-scratch/planted.c:11", "elsewhere/tmp/planted.c:12")


def test_crash_signature_is_stable_and_stripped():
    one = parse_crash_report(_log("crash_signal11.log"))
    two = parse_crash_report(_shifted(_log("crash_signal11.log")))
    sig_one = crash_signature(one.signal, one.assertion, one.fatal, one.bug_frames())
    sig_two = crash_signature(two.signal, two.assertion, two.fatal, two.bug_frames())
    assert sig_one == sig_two and sig_one.id == sig_two.id and len(sig_one.id) == 12
    assert sig_one.text == ("crash | signal 11 | frames: kw_planted < Item_func_udf_int::val_int "
                            "< Type_handler::Item_send_longlong < Protocol::send_result_set_row "
                            "< select_send::send_data")
    assert not re.search(r"0x|:\d+|/", sig_one.text)
    assert title(sig_one) == "signal 11 in kw_planted < Item_func_udf_int::val_int"


def test_crash_without_report():
    sig = crash_signature(None, "", "", (), no_report="killed by signal 9")
    assert sig.text == "crash | no crash report | killed by signal 9"


def test_fingerprint_normalises_literals():
    assert fingerprint("SELECT * FROM t1 WHERE a = 5 AND b = 'x' /* c */") == \
        "select * from t1 where a = ? and b = ?"
    assert fingerprint("INSERT INTO t (a) VALUES (1),(2), (3)") == "insert into t (a) values (?+)"
    assert fingerprint("select `c1` from t2 where pk in (1, -2, 3.5e2)") == \
        "select c1 from t2 where pk in (?+)"


def test_hang_signature_ignores_ids_and_times():
    rows = [{"Id": 7, "Time": 61, "State": "User sleep", "Info": "SELECT SLEEP(600)"},
            {"Id": 8, "Time": 63, "State": "Waiting for table metadata lock",
             "Info": "SELECT COUNT(*) FROM kw_hang"}]
    other = [dict(r, Id=r["Id"] + 10, Time=99) for r in reversed(rows)]
    assert hang_signature(rows) == hang_signature(other)
    assert hang_signature(rows).text == ("hang | stuck: User sleep: select sleep(?+) ; Waiting "
                                         "for table metadata lock: select count(*) from kw_hang")


def test_errorlog_signature_normalises_the_line():
    a = errorlog_signature("2025-11-25 18:44:23 12 [ERROR] InnoDB: Table `test`.`t1` is "
                           "corrupted. Page 42 in /var/x/ibdata1")
    b = errorlog_signature("251126  9:01:02 [ERROR] InnoDB: Table `test`.`t9` is corrupted. "
                           "Page 7 in /other/ibdata1")
    assert a == b and a.parts == ("[ERROR] InnoDB: Table ?.? is corrupted. Page N in ibdataN",)


def test_errorlog_signature_keeps_the_error_number_that_tells_bugs_apart():
    # sessions 1 to 6 signed all three 3dfa3a2b0daa: an index corrupted (126), out of
    # memory (128), a wrong index (124) -- three bugs
    lines = [f"2026-11-28  4:58:10 6 [ERROR] Got error {n} when reading table './test/t{n % 5}'"
             for n in (126, 128, 124)]
    sigs = [errorlog_signature(line) for line in lines]
    assert [s.parts for s in sigs] == [(f"[ERROR] Got error {n} when reading table ?",)
                                       for n in (126, 128, 124)]
    assert len({s.id for s in sigs}) == 3
    assert {s.former_id for s in sigs} == {"3dfa3a2b0daa"}
    assert {s.former for s in sigs} == {"errorlog | [ERROR] Got error N when reading table ?"}
    # equality and the id are the text's; the former form rides along, in finding.json too
    assert sigs[0] == Signature("errorlog", sigs[0].parts)
    assert sigs[0].to_json()["former"] == {"id": "3dfa3a2b0daa", "text": sigs[0].former}
    # a storage engine's own report keeps its handler error, its message masked
    aria = errorlog_signature("2026-11-28  4:41:25 6 [ERROR] mariadbd: Got error '126 \"Index "
                              "is corrupted\"' for './test/t3.MAI'")
    assert aria.parts == ("[ERROR] mariadbd: Got error '126 ?' for ?",)
    assert aria.former_id == "d47427de513c"
    for line, part in [
            ("[ERROR] InnoDB: Operating system error number 2 in a file operation.",
             "[ERROR] InnoDB: Operating system error number 2 in a file operation."),
            ("[ERROR] mariadbd: Error writing file '/tmp/x' (errno: 28 \"No space left\")",
             "[ERROR] mariadbd: Error writing file ? (errno: 28 ?)"),
            ("[ERROR] Slave SQL: Could not execute Write_rows_v1 event on table test.t1; "
             "Duplicate entry '1' for key 'PRIMARY', Error_code: 1062; handler error "
             "HA_ERR_FOUND_DUPP_KEY; the event's master log binlog.000001, end_log_pos 1234",
             "[ERROR] Slave SQL: Could not execute Write_rows_vN event on table test.tN; "
             "Duplicate entry ? for key ?, Error_code: 1062; handler error "
             "HA_ERR_FOUND_DUPP_KEY; the event's master log binlog.N, end_log_pos N"),
            ("[ERROR] InnoDB: preallocating 4096 bytes for file ./test/t1.ibd failed with "
             "error 28.", "[ERROR] InnoDB: preallocating N bytes for file tN.ibd failed with "
                          "error 28.")]:
        assert errorlog_signature("2026-11-28 10:00:00 5 " + line).parts == (part,), line


def test_errorlog_signature_masks_every_other_number_as_before():
    # ids the findings and the known-bugs file name (KW46-KILLED-FRM, KW46-REPLACE-LONG-UNIQUE)
    for line, sig_id in [
            ("2026-11-28  6:31:52 9 [ERROR] mariadbd: Incorrect information in file: "
             "'./test/t4.frm'", "da32697056d5"),
            ("2026-11-28  4:56:59 9 [ERROR] mariadbd: Can't find record in 't1'",
             "a2efece919f9"),
            ("2026-11-28  5:16:53 7 [ERROR] mariadbd: This transaction was rolled back and "
             "cannot be committed. Only supported operation is to roll it back, so all "
             "pending changes will be discarded. Please restart another transaction.",
             "bdeed5453f7e")]:
        sig = errorlog_signature(line)
        assert (sig.id, sig.former, sig.former_id) == (sig_id, "", ""), line
        assert "former" not in sig.to_json()
    # numbers that are no error's: ids, pages, line numbers, hex, words with digits
    for line, part in [
            ("[ERROR] Got an error from thread_id=9, ./storage/myisam/mi_delete.c:121",
             "[ERROR] Got an error from thread_id=N, mi_delete.c:N"),
            ("[ERROR] MariaDB thread id 9, OS thread handle 131414734026432, query id 751 "
             "localhost root Updating", "[ERROR] MariaDB thread id N, OS thread handle N, "
                                        "query id N localhost root Updating"),
            ("[ERROR] InnoDB: page 0x1f3a of t1#P#p2 in ibdata1, 10x5f",
             "[ERROR] InnoDB: page N of tN#P#pN in ibdataN, NN"),
            ("[ERROR] Could not read packet: fd: 7 vio_errno: 1158 errors 5",
             "[ERROR] Could not read packet: fd: N vio_errno: N errors N")]:
        assert errorlog_signature("2026-11-28 10:00:00 5 " + line).parts == (part,), line


def test_other_kinds():
    assert divergence_signature("replication", "tables differ: test.t1").text == \
        "divergence | replication | tables differ: test.t1"
    assert wrong_result_signature("norec", "SELECT COUNT(*) FROM t WHERE p").kind == "wrong-result"
    assert Signature("x", ("a",)).to_json() == {"id": Signature("x", ("a",)).id, "text": "x | a",
                                                "kind": "x", "parts": ["a"]}


@pytest.mark.parametrize("name", ["gdb_handler.txt", "gdb_no_handler.txt"])
def test_gdb_frames_sign_like_the_error_log(name):
    """A report cut short (no stack) is signed from gdb's backtrace of the core: the same
    frames, so the same signature."""
    logged = parse_crash_report(_log("crash_signal11.log"))
    from_gdb = bug_frames(gdb_frames(_log(name)))
    assert from_gdb[:5] == logged.bug_frames()[:5]
    assert crash_signature(11, "", "", from_gdb) == crash_signature(11, "", "", logged.bug_frames())


def test_crashing_thread_skips_the_lone_current_frame():
    from lib.checks.backtrace import crashing_thread
    lines = crashing_thread(_log("gdb_no_handler.txt"))
    assert lines[0].startswith("#0 ") and lines[1].startswith("#1 ") and len(lines) == 12


def test_top_frames_start_at_the_handler_end():
    """A failed test's gdb excerpt begins at the last handler frame, so the frames that
    say where the server died are not cut off by the handler's own."""
    from lib.checks.backtrace import crashing_thread, from_abort
    lines = from_abort(crashing_thread(_log("gdb_handler.txt")))
    assert lines[0].startswith("#2  <signal handler called>")
    assert "kw_planted" in lines[1]


def test_top_frames_without_a_handler_frame_are_all_kept():
    from lib.checks.backtrace import from_abort
    lines = ["#0  0x1 in f ()", "#1  0x2 in g ()"]
    assert from_abort(lines) == lines


def test_crash_headline_names_the_signature_a_finding_gets():
    from lib.hunt.crashreport import crash_headline
    text = _log("crash_innodb.log")
    report = parse_crash_report(text)
    sig = crash_signature(report.signal, report.assertion, report.fatal, report.bug_frames())
    assert crash_headline(text).splitlines()[0] == f"crash signature {sig.id}: {sig.text}"
    assert crash_headline(text).splitlines()[1] == (
        "UniqueID: !cursor->index()->is_committed()|SIGABRT|ut_dbg_assertion_failed|"
        "btr_cur_t::search_leaf_page|row_ins_clust")
    assert "assertion: !cursor->index()->is_committed() (btr0cur.cc)" in crash_headline(text)
    assert crash_headline("2025-01-01 0 [Note] ready for connections.\n") == ""
