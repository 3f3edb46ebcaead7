"""The known-bugs file: entries, their errors (file:line), and the new / known /
known-fixed tags by the server's version.

Covers: lib/hunt/knownbugs.py, lib/hunt/errors.py, lib/hunt/signature.py
"""
import os

import pytest

from lib.hunt.errors import KnownBugsError
from lib.hunt.knownbugs import KNOWN, KNOWN_FIXED, NEW, KnownBugs, version_tuple
from lib.hunt.signature import crash_signature, errorlog_signature

SIG = crash_signature(11, "", "", ("kw_planted", "Item_func_udf_int::val_int"))


def _file(tmp_path, text):
    path = tmp_path / "known_bugs.txt"
    path.write_text(text)
    return str(path)


def test_tags(tmp_path):
    path = _file(tmp_path, f"# bugs\n\nKW-1 open sig:{SIG.id} the planted crash\n")
    bugs = KnownBugs.load([path])
    tagged = bugs.tag(SIG, "10.11.19")
    assert tagged.tag == KNOWN and tagged.bug.bug_id == "KW-1" and tagged.bug.line == 3
    assert tagged.bug.note == "the planted crash"
    assert KnownBugs().tag(SIG, "10.11.19").tag == NEW


def test_fixed_in_an_older_version_is_a_regression(tmp_path):
    bugs = KnownBugs.load([_file(tmp_path, f"KW-1 fixed:10.11.5 sig:{SIG.id}\n")])
    assert bugs.tag(SIG, "10.11.19-MariaDB-0+deb12u1").tag == KNOWN_FIXED
    assert bugs.tag(SIG, "10.11.5").tag == KNOWN_FIXED
    assert bugs.tag(SIG, "10.11.4").tag == KNOWN  # the fix is not in this server yet
    assert bugs.tag(SIG, "").tag == KNOWN


def test_regex_entries_and_first_match_wins(tmp_path):
    text = ("MDEV-1 open re:'signal 11 \\| frames: kw_planted' first\n"
            f"MDEV-2 fixed:10.6 sig:{SIG.id} second\n")
    tagged = KnownBugs.load([_file(tmp_path, text)]).tag(SIG, "10.11.19")
    assert (tagged.tag, tagged.bug.bug_id) == (KNOWN, "MDEV-1")
    assert tagged.bug.to_json()["status"] == "open"


def test_entries_written_for_a_former_errorlog_signature_still_name_it(tmp_path):
    # 3dfa3a2b0daa: "Got error N when reading table ?" as signed before the error number
    # was kept; today's 126 and 128 findings are two signatures, both named by it
    e126, e128 = (errorlog_signature(f"2026-11-28 10:00:00 5 [ERROR] Got error {n} when "
                                     f"reading table './test/t1'") for n in (126, 128))
    old = KnownBugs.load([_file(tmp_path, "KW-9 open sig:3dfa3a2b0daa every number masked\n")])
    assert [old.tag(s, "10.11.19").tag for s in (e126, e128)] == [KNOWN, KNOWN]
    text = ("KW-2 open re:'Got error 128 when' out of memory\n"
            "KW-3 open re:'^errorlog \\| \\[ERROR\\] Got error N when reading' the former text\n"
            f"KW-4 open sig:{e126.id} the index\n")
    known = KnownBugs.load([_file(tmp_path, text)])
    # 126: KW-3 by its former text, before KW-4 by its id (the first match wins)
    assert [known.tag(s, "10.11.19").bug.bug_id for s in (e128, e126)] == ["KW-2", "KW-3"]
    assert KnownBugs.load([_file(tmp_path, text.split("\n", 2)[2])]).tag(
        e126, "10.11.19").bug.bug_id == "KW-4"
    assert KnownBugs.load([_file(tmp_path, text.split("\n", 2)[2])]).tag(
        e128, "10.11.19").tag == NEW


def test_the_shipped_file_knows_error_128_when_reading_a_table_and_not_126():
    from lib.home import data_path
    known = KnownBugs.load([data_path("randgen", "conf", "kewpie", "known_bugs-mariadb-10.11.txt")])
    line = "2026-11-28  4:58:10 6 [ERROR] Got error {} when reading table './test/t3'"
    tagged = known.tag(errorlog_signature(line.format(128)), "10.11.19")
    assert (tagged.tag, tagged.bug.bug_id) == (KNOWN, "KW46-SNAPSHOT-128")
    assert [known.tag(errorlog_signature(line.format(n)), "10.11.19").tag
            for n in (126, 124)] == [NEW, NEW]


@pytest.mark.parametrize("line,words", [
    ("KW-1 open", "BUG-ID STATUS MATCH"),
    ("KW-1 closed sig:0123456789ab", "neither 'open' nor 'fixed:VERSION'"),
    ("KW-1 fixed:soon sig:0123456789ab", "version number"),
    ("KW-1 open sig:xyz", "12 lower-case hex digits"),
    ("KW-1 open re:'(unclosed'", "not a regular expression"),
    ("KW-1 open frames:kw_planted", "neither 'sig:ID', 're:REGEX' nor 'uid:UNIQUEID'"),
    ("KW-1 open re:'unbalanced", "cannot split"),
])
def test_malformed_entries_name_file_and_line(tmp_path, line, words):
    path = _file(tmp_path, "# header\n" + line + "\n")
    with pytest.raises(KnownBugsError) as err:
        KnownBugs.load([path])
    assert f"{path}:2: " in str(err.value) and words in str(err.value)


def test_unreadable_file(tmp_path):
    missing = os.path.join(str(tmp_path), "nope.txt")
    with pytest.raises(KnownBugsError, match="cannot read it"):
        KnownBugs.load([missing])


def test_versions():
    assert version_tuple("10.11.19-MariaDB-0+deb12u1") == (10, 11, 19)
    assert version_tuple("8.0.36-28") == (8, 0, 36)
    assert version_tuple("") == ()


@pytest.mark.parametrize("frames,sig_id,bug_id", [
    (("__memcpy_avx_unaligned", "mysql_alter_table", "Sql_cmd_alter_table::execute",
      "mysql_execute_command", "mysql_parse"), "811c70ab4968", "KW46-VERS-FT-VCOL-ALTER"),
    (("DsMrr_impl::dsmrr_next", "JOIN_TAB_SCAN_MRR::next", "JOIN_CACHE::join_matching_records",
      "JOIN_CACHE::join_records", "JOIN_CACHE::join_records"), "b5d674e90143", "KW46-JOIN-CACHE-MRR"),
    (("rpl_slave_state::iterate", "rpl_binlog_state::load", "purge_relay_logs", "change_master",
      "mysql_execute_command"), "c6f9582ed104", "KW46-GTID-SLAVE-POS-LOAD"),
    (("Item_func_json_keys::val_str", "Item::save_str_in_field", "Item::save_in_field", "fill_record",
      "select_union_direct::send_data"), "39ce2442e310", "MDEV-39049"),
])
def test_the_shipped_file_knows_session_9s_crashes_by_their_frames(frames, sig_id, bug_id):
    from lib.home import data_path
    known = KnownBugs.load([data_path("randgen", "conf", "kewpie", "known_bugs-mariadb-10.11.txt")])
    sig = crash_signature(11, "", "", frames)
    assert sig.id == sig_id   # the very signatures session 9's hunt met
    tagged = known.tag(sig, "10.11.19")
    assert (tagged.tag, tagged.bug.bug_id) == (KNOWN, bug_id)
