"""Outputs written without following links (issue 43 item 2): a folder kewpie makes is
made fresh or is one it made before (its marker), files are made exclusively and renamed
into place through directory descriptors, and a link planted before or during the
write never redirects it.

Covers: lib/platform/safewrite.py
"""
from __future__ import annotations

import os
import stat

import pytest

from lib.platform.safewrite import (MARKER, OutputDir, UnsafeOutputError, check_output,
                                    write_file)
from lib.platform.trustedpath import Trust

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")


@pytest.fixture
def victim(tmp_path):
    """A folder with content that a planted link points at."""
    path = tmp_path / "victim"
    path.mkdir()
    (path / "precious").write_text("keep\n")
    return path


def untouched(victim) -> bool:
    return sorted(os.listdir(victim)) == ["precious"] and \
        (victim / "precious").read_text() == "keep\n"


def test_a_folder_is_made_fresh_with_its_parents_and_marked(tmp_path):
    with OutputDir.create(str(tmp_path / "a" / "out"), "--reduce-out") as out:
        assert out.write_text("report.txt", "r\n") == str(tmp_path / "a" / "out" / "report.txt")
        out.write_text("mtr/kw/t/x.test", "t\n")
        with out.open_file("trace.jsonl") as fh:
            fh.write("{}\n")
    assert (tmp_path / "a" / "out" / MARKER).is_file()
    assert (tmp_path / "a" / "out" / "mtr" / "kw" / "t" / "x.test").read_text() == "t\n"
    for path in (tmp_path / "a", tmp_path / "a" / "out", tmp_path / "a" / "out" / "mtr"):
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o755
    assert stat.S_IMODE(os.lstat(tmp_path / "a" / "out" / "report.txt").st_mode) == 0o644


def test_a_folder_is_reused_only_when_kewpie_made_it_or_it_is_empty(tmp_path):
    path = str(tmp_path / "out")
    OutputDir.create(path, "--reduce-out").close()
    (tmp_path / "out" / "smallest.json").write_text("{}")
    OutputDir.create(path, "--reduce-out", reuse=True).close()  # its own, marked
    with pytest.raises(UnsafeOutputError, match="holds an earlier output"):
        OutputDir.create(path, "history html")  # not for an output that must be new
    (tmp_path / "empty").mkdir()
    OutputDir.create(str(tmp_path / "empty"), "history html").close()
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "file").write_text("x")
    with pytest.raises(UnsafeOutputError, match="kewpie did not make .*not empty"):
        OutputDir.create(str(tmp_path / "theirs"), "--sweep-out", reuse=True)
    with pytest.raises(UnsafeOutputError, match="kewpie did not make"):
        check_output(str(tmp_path / "theirs"), "--sweep-out")
    check_output(path, "--reduce-out")


def test_a_link_as_the_folder_is_refused_and_not_followed(tmp_path, victim):
    os.symlink(str(victim), tmp_path / "reduce")
    with pytest.raises(UnsafeOutputError, match=f"symbolic link to {victim}.*never writes "
                                                r"through a link"):
        OutputDir.create(str(tmp_path / "reduce"), "the finding's reduce folder", reuse=True)
    with pytest.raises(UnsafeOutputError, match="symbolic link"):
        check_output(str(tmp_path / "reduce"), "--reduce-out")
    assert untouched(victim)
    if os.geteuid() == 0:  # a link on the way that another user owns: the trust rule
        os.lchown(tmp_path / "reduce", NOBODY, NOBODY)
        with pytest.raises(UnsafeOutputError, match="is a symbolic link owned by neither"):
            OutputDir.create(str(tmp_path / "reduce" / "sub"), "--reduce-out")
        assert untouched(victim)


def test_links_inside_an_output_folder_are_replaced_never_written_through(tmp_path, victim):
    out = OutputDir.create(str(tmp_path / "out"), "--reduce-out")
    os.symlink(str(victim / "precious"), tmp_path / "out" / "report.txt")
    os.symlink(str(victim / "precious"), tmp_path / "out" / "trace.jsonl")
    os.symlink(str(victim), tmp_path / "out" / "mtr")
    out.write_text("report.txt", "new\n")
    with out.open_file("trace.jsonl") as fh:
        fh.write("new\n")
    with pytest.raises(UnsafeOutputError, match="symbolic link"):
        out.write_text("mtr/x.test", "t\n")
    assert not os.path.islink(tmp_path / "out" / "report.txt")
    assert (tmp_path / "out" / "report.txt").read_text() == "new\n"
    assert out.read_text("mtr/x.test") is None
    out.close()
    assert untouched(victim)


def test_the_folder_is_held_a_link_swapped_in_later_does_not_redirect(tmp_path, victim):
    out = OutputDir.create(str(tmp_path / "out"), "--reduce-out")
    os.rename(tmp_path / "out", tmp_path / "moved")  # its path now leads elsewhere
    os.symlink(str(victim), tmp_path / "out")
    out.write_text("reduce.json", "{}")
    with open(out.held("held.txt"), "w") as fh:  # a library writing to a path, held too
        fh.write("x")
    out.close()
    assert (tmp_path / "moved" / "reduce.json").read_text() == "{}"
    assert (tmp_path / "moved" / "held.txt").read_text() == "x"
    assert untouched(victim)


def test_a_file_output_replaces_only_a_file_of_ours(tmp_path, victim):
    path = tmp_path / "report.xml"
    write_file(str(path), b"<a/>", "--junit-xml")
    write_file(str(path), "<b/>", "--junit-xml")
    assert path.read_text() == "<b/>"
    os.unlink(path)
    os.symlink(str(victim / "precious"), path)
    with pytest.raises(UnsafeOutputError, match="refusing to write --junit-xml .*symbolic link"):
        write_file(str(path), b"<c/>", "--junit-xml")
    with pytest.raises(UnsafeOutputError, match="symbolic link"):
        check_output(str(path), "--junit-xml", folder=False)
    write_file(str(tmp_path / "new" / "deeper" / "r.xml"), b"<d/>", "--junit-xml")
    assert untouched(victim)


def test_a_copy_keeps_a_link_as_a_link(tmp_path, victim):
    os.symlink(str(victim / "precious"), tmp_path / "log")
    (tmp_path / "plain").write_text("text")
    os.chmod(tmp_path / "plain", 0o640)
    with OutputDir.create(str(tmp_path / "out"), "evidence") as out:
        out.copy_file(str(tmp_path / "log"), "s0/log")
        out.copy_file(str(tmp_path / "plain"), "s0/plain")
        (tmp_path / "tree").mkdir()
        (tmp_path / "tree" / "f").write_text("f")
        assert out.copy_tree(str(tmp_path / "tree"), "s0/tree") == ""
        with pytest.raises(UnsafeOutputError, match="exists"):
            out.copy_tree(str(tmp_path / "tree"), "s0/tree")
    assert os.readlink(tmp_path / "out" / "s0" / "log") == str(victim / "precious")
    assert stat.S_IMODE(os.lstat(tmp_path / "out" / "s0" / "plain").st_mode) == 0o640
    assert (tmp_path / "out" / "s0" / "tree" / "f").read_text() == "f"


def test_a_sticky_folder_like_tmp_may_hold_outputs(tmp_path):
    public = tmp_path / "public"
    public.mkdir()
    os.chmod(public, 0o1777)
    write_file(str(public / "r.xml"), b"x", "--junit-xml")
    OutputDir.create(str(public / "out"), "--sweep-out").close()
    os.chmod(public, 0o777)  # not sticky: anyone could swap what we make there
    with pytest.raises(UnsafeOutputError, match=r"\(its folder\) is writable by group or others"):
        write_file(str(public / "r2.xml"), b"x", "--junit-xml")


@needs_root
def test_a_folder_of_another_user_is_refused_unless_trusted(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(UnsafeOutputError, match=r"\(its folder\) is owned by neither .*"
                                                r"--trust"):
        OutputDir.create(str(theirs / "out"), "--reduce-out")
    (theirs / "x.xml").write_text("theirs")
    os.chown(theirs / "x.xml", NOBODY, NOBODY)
    trust = Trust.of([str(theirs)])
    with pytest.raises(UnsafeOutputError, match="someone else's file"):
        write_file(str(theirs / "x.xml"), b"ours", "--junit-xml", trust)
    with OutputDir.create(str(theirs / "out"), "--reduce-out", trust) as out:
        out.write_text("r.txt", "ours")
    assert os.stat(theirs / "out").st_uid == os.geteuid()
    os.chown(theirs / "out", NOBODY, NOBODY)  # kewpie's folder taken over: not reused
    with pytest.raises(UnsafeOutputError, match="did not make, owned by someone else"):
        OutputDir.create(str(theirs / "out"), "--reduce-out", trust, reuse=True)
