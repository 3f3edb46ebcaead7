"""MariaDB QA's UniqueID of a crash (from mariadbd's crash report and from gdb's
backtrace), and ``known_bugs.strings`` read as published: its lines, its bug ids,
its malformed lines, and the exact and similar matches -- never a bug named when
lines of different bugs tie.

Covers: lib/hunt/uniqueid.py, lib/hunt/kbstrings.py, lib/hunt/bugmatch.py,
lib/hunt/crashreport.py (the UniqueID's readers), lib/hunt/knownbugs.py (strings
files and uid: entries), lib/hunt/signature.py (a signature carries its UniqueID)
"""
import os

import pytest

from tests.conftest import ROOT
from lib.hunt.bugmatch import AMBIGUOUS, EXACT, SIMILAR, StringsIndex, common_in_order, identify_crash
from lib.hunt.crashreport import crash_headline, crash_unique_id, logged_crash_signature
from lib.hunt.errors import KnownBugsError
from lib.hunt.kbstrings import FIXED, OPEN, is_strings_file, load_strings, parse_line
from lib.hunt.knownbugs import KNOWN, NEW, KnownBugs
from lib.hunt.signature import crash_signature
from lib.hunt.uniqueid import (UniqueId, better_of, kept_frames, split_unique_id,
                               unique_id_from_text)

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "hunt")


def _text(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as fh:
        return fh.read()


# ------------------------------------------------------------------ UniqueID
def test_unique_id_of_a_signal_from_the_crash_report():
    uid = crash_unique_id(_text("crash_signal11.log"))
    assert uid.text == ("SIGSEGV|kw_planted|Item_func_udf_int::val_int|"
                        "Type_handler::Item_send_longlong|Protocol::send_result_set_row")
    assert uid.source == "crash report"
    # the stack goes on past four frames (for the similarity rule), cut at do_command
    assert uid.stack[4:6] == ("select_send::send_data", "JOIN::exec_inner")
    assert "do_command" not in uid.stack


def test_unique_id_of_an_assertion_leaves_out_abort_and_assert():
    uid = crash_unique_id(_text("crash_assertion.log"))
    assert uid.text == ("table->file->inited == handler::INDEX|SIGABRT|join_read_key2|"
                        "join_read_key|sub_select|do_select")


def test_unique_id_of_an_innodb_assertion_keeps_its_assertion_frame():
    uid = crash_unique_id(_text("crash_innodb.log"))
    assert uid.assertion == "!cursor->index()->is_committed()"
    assert uid.frames[:2] == ("ut_dbg_assertion_failed", "btr_cur_t::search_leaf_page")


def test_unique_id_from_gdb_and_the_better_of_the_two():
    gdb = _text("gdb_handler.txt")
    uid = crash_unique_id("", gdb)
    assert uid.signal == "SIGSEGV" and uid.frames[0] == "kw_planted"
    assert uid.source == "gdb backtrace of the core"
    report = crash_unique_id(_text("crash_signal11.log"))
    short = UniqueId("SIGSEGV", ("kw_planted",), "", ("kw_planted",), "crash report")
    assert better_of(short, uid).stack == uid.stack          # gdb names more frames
    assert better_of(report, uid) is report                  # the report is whole
    assert better_of(None, uid) is uid and better_of(report, None) is report


def test_kept_frames_rules():
    names = ["my_print_stacktrace", "handle_fatal_signal", "__restore_rt",
             "__pthread_kill_implementation", "raise", "abort", "__assert_fail_base",
             "?", "__memcpy_avx_unaligned", "f1", "f2", "f3", "f4", "do_command", "x"]
    assert kept_frames(names, ("__restore_rt",)) == ("f1", "f2", "f3", "f4")
    # do_command before the fifth kept frame stays
    assert kept_frames(["f1", "do_command", "x"], ()) == ("f1", "do_command", "x")


def test_no_unique_id_without_a_frame_or_an_assertion():
    assert crash_unique_id("nothing here\n") is None
    assert UniqueId("", (), "x != 0").text == "ASSERT|x != 0"


def test_split_keeps_an_assertion_with_bars():
    assert split_unique_id("a || b|SIGABRT|f1|f2") == ("a || b", "SIGABRT", ("f1", "f2"))
    assert split_unique_id("MARIADB_ERROR_CODE|MariaDB error code: 1") == ("", "", ())
    assert unique_id_from_text("SIGSEGV|f1|f2").frames == ("f1", "f2")


def test_signature_carries_the_unique_id_beside_it():
    sig = logged_crash_signature(_text("crash_signal11.log"))
    assert sig.unique_id.text.startswith("SIGSEGV|kw_planted|")
    plain = crash_signature(sig_number := 11, "", "", ("kw_planted",))
    with_uid = crash_signature(sig_number, "", "", ("kw_planted",), unique_id=sig.unique_id)
    assert plain == with_uid and plain.id == with_uid.id      # not part of id or equality
    assert with_uid.to_json()["unique_id"] == sig.unique_id.text
    assert "UniqueID: SIGSEGV|kw_planted|" in crash_headline(_text("crash_signal11.log"))


# ------------------------------------------------------------------ known_bugs.strings
# Lines written for these tests in the published file's format (not copied from it).
STRINGS = """\
## a header line
##### heading ####
SIGSEGV|kw_planted|Item_func_udf_int::val_int|Type_handler::Item_send_longlong|Protocol::send_result_set_row   ## KW-1
SIGSEGV|alpha_frame|beta_frame|gamma_frame|delta_frame                                 ## KW-2>KW-3
x == y|SIGABRT|kw_assert_site|kw_caller|kw_outer|kw_top                                ## KW-4 (i.e. KW-5)
#SIGSEGV|retired_frame|beta_frame|old_caller|older                                     ## Fixed ## KW-6
#SIGSEGV|taken_out|a|b|c                                                                ## KW-7 preliminary
SIGFPE|tie_frame|shared_caller|shared_outer|top1                                       ## KW-8
SIGFPE|tie_frame|shared_caller|shared_outer|top2                                       ## KW-9
MARIADB_ERROR_CODE|MariaDB error code: 1234
"""


def _entries(tmp_path, text=STRINGS):
    path = tmp_path / "known_bugs.strings"
    path.write_text(text)
    return str(path), load_strings(str(path), text.splitlines())


def test_strings_lines_ids_and_statuses(tmp_path):
    path, entries = _entries(tmp_path)
    assert [e.bug_ids for e in entries] == [("KW-1",), ("KW-2", "KW-3"), ("KW-4", "KW-5"),
                                            ("KW-6",), ("KW-8",), ("KW-9",), ()]
    assert [e.status for e in entries].count(FIXED) == 1 and entries[0].status == OPEN
    assert entries[2].assertion == "x == y" and entries[2].signal == "SIGABRT"
    assert entries[6].crash is False                       # a typed UniqueID
    assert is_strings_file(path, STRINGS.splitlines())
    assert not is_strings_file("k.txt", ["MDEV-1 open sig:0123456789ab"])
    assert is_strings_file("k.txt", ["# c", "SIGSEGV|a|b  ## MDEV-1"])


@pytest.mark.parametrize("line,words", [
    ("<<<<<<< HEAD", "merge-conflict marker"),
    ("=======", "merge-conflict marker"),
    ("| |  ## MDEV-1", "no UniqueID before it"),
    ("SIGSEGV|a|b  ##   ", "nothing after it"),
    ("SIGSEGV|a\x00|b ## MDEV-1", "NUL byte"),
])
def test_malformed_strings_lines(line, words):
    with pytest.raises(KnownBugsError, match=words) as err:
        parse_line(line, "kb.strings", 7)
    assert "kb.strings:7" in str(err.value)


def test_exact_match_is_mariadb_qas(tmp_path):
    _, entries = _entries(tmp_path)
    index = StringsIndex(entries)
    uid = crash_unique_id(_text("crash_signal11.log"))
    match = index.match(uid)
    assert match.quality == EXACT and match.bug_ids == ("KW-1",) and match.attributed
    shorter = UniqueId("SIGSEGV", ("KW_PLANTED", "item_func_udf_int::val_int"))
    assert index.exact(shorter) is None                        # the line must be part of ours


def test_similar_match_frames_in_order(tmp_path):
    _, entries = _entries(tmp_path)
    index = StringsIndex(entries)
    # a release build: alpha_frame inlined away, a static caller '??' left out
    uid = UniqueId("SIGSEGV", ("beta_frame", "gamma_frame", "delta_frame", "y"), "",
                   ("beta_frame", "gamma_frame", "delta_frame", "y", "z"))
    match = index.match(uid)
    assert match.quality == SIMILAR and match.bug_ids == ("KW-2", "KW-3")
    assert match.detail.startswith("similar: 3/4 frames in order")
    # another signal: not similar
    assert index.match(UniqueId("SIGBUS", uid.frames, "", uid.stack)) is None


def test_the_crash_site_must_be_one_of_the_lines_frames(tmp_path):
    _, entries = _entries(tmp_path)
    index = StringsIndex(entries)
    # the line's frames start below our top frame: another crash site
    deep = ("our_own_site", "beta_frame", "gamma_frame", "delta_frame")
    assert index.match(UniqueId("SIGSEGV", deep, "", deep)) is None
    # a frame of ours the line does not have ends what they share (gamma is then alone)
    gap = ("beta_frame", "not_in_the_line", "gamma_frame", "delta_frame")
    assert index.match(UniqueId("SIGSEGV", gap, "", gap)) is None
def test_an_assertion_must_be_the_same(tmp_path):
    _, entries = _entries(tmp_path)
    index = StringsIndex(entries)
    stack = ("kw_assert_site", "kw_caller", "kw_outer")
    assert index.match(UniqueId("SIGABRT", stack, "x==y", stack)).bug_ids == ("KW-4", "KW-5")
    assert index.match(UniqueId("SIGABRT", stack, "", stack)) is None


def test_a_tie_between_bugs_names_none(tmp_path):
    _, entries = _entries(tmp_path)
    stack = ("tie_frame", "shared_caller", "shared_outer")
    match = StringsIndex(entries).match(UniqueId("SIGFPE", stack, "", stack))
    assert match.quality == AMBIGUOUS and not match.attributed and match.bug_id == ""
    assert set(match.bug_ids) == {"KW-8", "KW-9"}


def test_generic_frames_alone_are_no_match(tmp_path):
    lines = [f"SIGSEGV|f{i}|mysql_execute_command|mysql_parse|dispatch_command ## KW-{i}"
             for i in range(20)]
    text = "\n".join(lines) + "\n"
    _, entries = _entries(tmp_path, text)
    stack = ("unlisted", "mysql_execute_command", "mysql_parse", "dispatch_command")
    assert StringsIndex(entries).match(UniqueId("SIGSEGV", stack, "", stack)) is None


def test_common_in_order():
    assert common_in_order(("b", "c", "z"), ("x", "b", "y", "c")) == 2
    assert common_in_order(("a", "b"), ("b", "a")) == 1
    assert common_in_order(("a",), ("b",)) == 0


def test_open_lines_before_fixed_ones_and_bugs_listed_alike(tmp_path):
    text = ("SIGSEGV|site_a|caller_a|outer_a|top_a ## KW-1\n"
            "#SIGSEGV|site_a|caller_a|outer_a|top_b ## Fixed ## KW-2\n"
            "SIGSEGV|site_c|caller_c|outer_c|top_c ## KW-3\n"
            "SIGSEGV|site_c|caller_c|other|more ## KW-4\n"
            "SIGSEGV|x_site|x_caller|x_outer|x_top ## KW-4\n"
            "SIGSEGV|x_site|x_caller|x_outer|x_top ## KW-3\n")
    _, entries = _entries(tmp_path, text)
    index = StringsIndex(entries)
    stack = ("site_a", "caller_a", "outer_a", "elsewhere")
    assert index.match(UniqueId("SIGSEGV", stack, "", stack)).bug_ids == ("KW-1",)
    # an open bug's similar line outranks a Fixed bug's exact one
    stack = ("site_a", "caller_a", "outer_a", "top_b")
    uid = UniqueId("SIGSEGV", stack, "", stack)
    assert index.exact(uid).bug_ids == ("KW-2",)
    assert index.match(uid).bug_ids == ("KW-1",) and index.match(uid).quality == SIMILAR
    # KW-3 ranks best, but KW-4 is similar too and the list names them alike
    stack = ("site_c", "caller_c", "outer_c", "elsewhere")
    match = index.match(UniqueId("SIGSEGV", stack, "", stack))
    assert match.quality == AMBIGUOUS and "listed alike for KW-4" in match.detail


def test_an_assertion_alone_when_it_names_one_bug(tmp_path):
    text = ("solo_cond|SIGABRT|ut_dbg_assertion_failed|inner_a|inner_b|inner_c ## KW-1\n"
            "shared_cond|SIGABRT|ut_dbg_assertion_failed|p|q|r ## KW-2\n"
            "shared_cond|SIGABRT|ut_dbg_assertion_failed|s|t|u ## KW-3\n")
    _, entries = _entries(tmp_path, text)
    index = StringsIndex(entries)
    stack = ("handler::ha_rnd_next", "mysql_ha_read")   # InnoDB's own frames are '??'
    match = index.match(UniqueId("SIGABRT", stack, "solo_cond", stack))
    assert match.bug_ids == ("KW-1",) and match.detail == "similar: assertion (+signal)"
    assert index.match(UniqueId("SIGABRT", stack, "shared_cond", stack)) is None


def test_with_the_same_assertion_one_frame_in_common_is_similar(tmp_path):
    # MDEV-24808 on 10.11.19: the InnoDB frames above handler::ha_delete_row are '??'; an
    # assertion listed for two bugs, the crash site one bug's line only
    text = ("cond_x|SIGABRT|ut_dbg_assertion_failed|row_upd|ha_inno::delete_row|"
            "handler::ha_delete_row ## KW-1\n"
            "#cond_x|SIGABRT|ut_dbg_assertion_failed|row_upd|ha_inno::update_row|"
            "handler::ha_update_row ## Fixed ## KW-2\n")
    _, entries = _entries(tmp_path, text)
    index = StringsIndex(entries)
    stack = ("handler::ha_delete_row", "handler::ha_update_row", "write_record")
    match = index.match(UniqueId("SIGABRT", stack, "cond_x", stack))
    assert match.bug_ids == ("KW-1",) and match.detail.startswith("similar: 1/4 frames")
    # without the assertion one frame is not enough
    text2 = "SIGABRT|row_upd|ha_inno::delete_row|handler::ha_delete_row|x ## KW-1\n"
    _, entries2 = _entries(tmp_path, text2)
    assert StringsIndex(entries2).match(UniqueId("SIGABRT", stack, "", stack)) is None


def test_identify_crash(tmp_path):
    _, entries = _entries(tmp_path)
    found = identify_crash(_text("crash_signal11.log"), "", StringsIndex(entries))
    assert found.match.bug_id == "KW-1" and found.to_json()["unique_id"]["signal"] == "SIGSEGV"


# ------------------------------------------------------------------ known-bugs files
def test_known_bugs_reads_a_strings_file_and_tags_by_unique_id(tmp_path):
    path, _ = _entries(tmp_path)
    bugs = KnownBugs.load([path])
    sig = logged_crash_signature(_text("crash_signal11.log"))
    tagged = bugs.tag(sig, "10.11.19")
    assert tagged.tag == KNOWN and tagged.bug.bug_id == "KW-1"
    assert tagged.bug.quality == "exact UniqueID" and tagged.bug.line == 3
    assert tagged.to_json()["match"]["quality"] == EXACT
    assert bugs.count == 7
    # a tie between bugs: new, and what it resembles is kept
    stack = ("tie_frame", "shared_caller", "shared_outer")
    tie = crash_signature(8, "", "", stack, unique_id=UniqueId("SIGFPE", stack, "", stack))
    tagged = bugs.tag(tie, "10.11.19")
    assert tagged.tag == NEW and tagged.match.quality == AMBIGUOUS


def test_a_fixed_line_is_known_with_status_fixed(tmp_path):
    path, _ = _entries(tmp_path)
    stack = ("retired_frame", "beta_frame", "old_caller", "older")
    sig = crash_signature(11, "", "", stack, unique_id=UniqueId("SIGSEGV", stack, "", stack))
    tagged = KnownBugs.load([path]).tag(sig, "10.11.19")
    assert tagged.tag == KNOWN and tagged.bug.bug_id == "KW-6"
    assert tagged.bug.to_json()["status"] == "fixed"


def test_uid_entries_of_kewpies_format(tmp_path):
    path = tmp_path / "known_bugs.txt"
    path.write_text("KW-1 open 'uid:sigsegv|KW_PLANTED|item_func_udf_int::val_int' note\n")
    sig = logged_crash_signature(_text("crash_signal11.log"))
    assert KnownBugs.load([str(path)]).tag(sig, "10.11.19").bug.bug_id == "KW-1"
    path.write_text("KW-1 open uid:\n")
    with pytest.raises(KnownBugsError, match="uid:UNIQUEID"):
        KnownBugs.load([str(path)])


# ------------------------------------------------------------------ symbols
def test_build_id_and_debug_file(tmp_path):
    from lib.hunt.symbols import build_id, debug_file, report_complete
    ident = build_id("/usr/sbin/mariadbd")
    assert len(ident) == 40 and int(ident, 16)
    assert build_id(os.path.join(FIXTURES, "gdb_handler.txt")) == ""
    assert debug_file("/usr/sbin/mariadbd", [str(tmp_path)]) == ""
    target = tmp_path / ".build-id" / ident[:2] / (ident[2:] + ".debug")
    target.parent.mkdir(parents=True)
    target.write_bytes(b"")
    assert debug_file("/usr/sbin/mariadbd", [str(tmp_path)]) == str(target)
    assert report_complete(("f", "g", "start_thread", "clone3"))
    assert not report_complete(("f", "g")) and not report_complete(())
