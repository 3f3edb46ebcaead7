"""Unit tests of the workdir's trust (issue 27): lib/platform/trustedpath.py (the
ownership/mode decision and the walk), the marker (lib/platform/workdir.py), files
opened without following links (safedirs.open_regular, StateFile) and the tag check
that decides whether a pid read from a file may be stopped.

Covers: lib/platform/trustedpath.py, lib/platform/workdir.py, lib/platform/safedirs.py,
lib/servers/state.py, lib/platform/process.py
"""
import json
import os
import stat
import subprocess

import pytest

from lib.errors import UsageError
from lib.platform import safedirs
from lib.platform import workdir as wd
from lib.platform.process import TAG_WORKDIR, tag_mismatch, tag_problem
from lib.platform.trustedpath import Finding, entry_problem, find_untrusted
from lib.servers.state import StateFile

NOBODY = 65534
ME = os.geteuid()
OWNERS = frozenset({ME, 0})
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")


def fake_stat(kind: int, mode: int, uid: int) -> os.stat_result:
    """An lstat result of an entry of that type, permission bits and owner."""
    return os.stat_result((kind | mode, 1, 1, 1, uid, uid, 0, 0, 0, 0))


# ---------------------------------------------------------------- entry_problem (pure)

@pytest.mark.parametrize("kind, mode, uid, last, problem", [
    (stat.S_IFDIR, 0o755, 0, True, ""),                 # root's, private: trusted
    (stat.S_IFDIR, 0o700, ME, True, ""),                # ours
    (stat.S_IFDIR, 0o755, 0, False, ""),
    (stat.S_IFDIR, 0o775, 0, True, "writable by group or others"),   # root's, group-writable
    (stat.S_IFDIR, 0o775, 0, False, "writable by group or others"),
    (stat.S_IFDIR, 0o757, 0, False, "writable by group or others"),
    (stat.S_IFDIR, 0o1777, 0, False, ""),               # /tmp on the way: sticky
    (stat.S_IFDIR, 0o1777, 0, True, "writable by group or others"),  # /tmp as the workdir
    (stat.S_IFDIR, 0o755, NOBODY, True, "owned by neither you nor root"),
    (stat.S_IFDIR, 0o755, NOBODY, False, "owned by neither you nor root"),
    (stat.S_IFDIR, 0o1777, NOBODY, False, "owned by neither you nor root"),
    (stat.S_IFLNK, 0o777, 0, False, ""),                # root's link: followed
    (stat.S_IFLNK, 0o777, NOBODY, False, "symbolic link owned by neither you nor root"),
    (stat.S_IFREG, 0o644, 0, True, "not a directory"),
    (stat.S_IFREG, 0o644, 0, False, "not a directory"),
])
def test_entry_problem(kind, mode, uid, last, problem):
    found = entry_problem(fake_stat(kind, mode, uid), OWNERS, last)
    if problem:
        assert problem in found
    else:
        assert found == ""


# ---------------------------------------------------------------- find_untrusted (walk)

def test_a_private_tree_is_trusted(tmp_path):
    path = tmp_path / "a" / "b"
    path.mkdir(parents=True)
    assert find_untrusted(str(path)) == (None, True)
    assert find_untrusted(str(path / "new" / "deeper")) == (None, False)  # made later
    assert find_untrusted("/") == (None, True)


@needs_root
def test_a_directory_of_another_user_is_found(tmp_path):
    path = tmp_path / "wd"
    path.mkdir(mode=0o755)
    os.chown(path, NOBODY, NOBODY)
    found, exists = find_untrusted(str(path))
    assert exists and found == Finding(str(path), "is owned by neither you nor root", NOBODY,
                                       0o755, True)
    found, _ = find_untrusted(str(path / "wd"))  # under it: on the way
    assert found.path == str(path) and not found.last
    found, _ = find_untrusted(str(path / "missing" / "wd"))
    assert found.path == str(path)


def test_group_writable_on_the_way_is_found_sticky_is_not(tmp_path):
    middle = tmp_path / "m"
    (middle / "wd").mkdir(parents=True)
    os.chmod(middle, 0o775)
    found, _ = find_untrusted(str(middle / "wd"))
    assert found.path == str(middle) and "writable" in found.problem and not found.last
    os.chmod(middle, 0o1777)
    assert find_untrusted(str(middle / "wd")) == (None, True)
    found, _ = find_untrusted(str(middle))  # the workdir itself may not be sticky-writable
    assert found.last and found.mode == 0o1777


@needs_root
def test_links_on_the_way_count_only_when_ours(tmp_path):
    target = tmp_path / "real"
    (target / "wd").mkdir(parents=True)
    ours = tmp_path / "ours"
    os.symlink(str(target), ours)
    assert find_untrusted(str(ours / "wd")) == (None, True)
    relative = tmp_path / "rel"
    os.symlink("real/../real", relative)
    assert find_untrusted(str(relative / "wd")) == (None, True)
    theirs = tmp_path / "theirs"
    os.symlink(str(target), theirs)
    os.lchown(theirs, NOBODY, NOBODY)
    found, _ = find_untrusted(str(theirs / "wd"))
    assert found.path == str(theirs) and "symbolic link" in found.problem and not found.last
    last_link = tmp_path / "to-wd"
    os.symlink(str(target / "wd"), last_link)  # the workdir given as a link of ours
    assert find_untrusted(str(last_link)) == (None, True)


@needs_root
def test_a_link_to_a_directory_of_another_user_is_found_where_it_leads(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, NOBODY, NOBODY)
    link = tmp_path / "wd"
    os.symlink(str(theirs), link)
    found, _ = find_untrusted(str(link))
    assert found.path == str(theirs) and found.last
    assert "(where it leads)" in wd.refusal(str(link), found)


def test_a_file_and_a_link_loop_are_found(tmp_path):
    (tmp_path / "file").write_text("x")
    found, _ = find_untrusted(str(tmp_path / "file"))
    assert "not a directory" in found.problem
    found, _ = find_untrusted(str(tmp_path / "file" / "wd"))
    assert "not a directory" in found.problem and found.path == str(tmp_path / "file")
    os.symlink("loop", tmp_path / "loop")
    found, _ = find_untrusted(str(tmp_path / "loop"))
    assert "too many symbolic links" in found.problem


# ---------------------------------------------------------------- the refusal line

@pytest.mark.parametrize("finding, words", [
    (Finding("/p/wd", "is owned by neither you nor root", NOBODY, 0o755, True),
     ["refusing to use workdir /p/wd: it is owned by neither", "uid 65534", "mode 0755",
      "choose another --workdir"]),
    (Finding("/p/wd", "is writable by group or others", 0, 0o775, True),
     ["mode 0775", "chmod go-w /p/wd"]),
    (Finding("/p", "is owned by neither you nor root", NOBODY, 0o755, False),
     ["/p (on its way)", "mode 0755", "reached only through directories and links"]),
    (Finding("/p/l", "is a symbolic link owned by neither you nor root", NOBODY, 0o777, False),
     ["/p/l (on its way) is a symbolic link", "mode 0777"]),
])
def test_refusal_names_owner_mode_and_fix(finding, words):
    line = wd.refusal("/p/wd", finding)
    assert "\n" not in line
    for word in words:
        assert word in line, line


# ---------------------------------------------------------------- the marker

@pytest.mark.parametrize("kind, uid, problem", [
    (stat.S_IFREG, 0, ""),
    (stat.S_IFREG, ME, ""),
    (stat.S_IFLNK, 0, "symbolic link"),
    (stat.S_IFDIR, 0, "not a regular file"),
    (stat.S_IFIFO, 0, "not a regular file"),
    (stat.S_IFREG, NOBODY, "owned by neither"),
])
def test_marker_problem(kind, uid, problem):
    found = wd.marker_problem(fake_stat(kind, 0o644, uid), OWNERS)
    assert (problem in found) if problem else found == ""


def test_marker_records_names():
    assert wd.parse_marker(wd.marker_text(["bot0", "cluster.json"])) == {"bot0", "cluster.json"}
    assert wd.parse_marker("") is None  # an older kewpie's empty marker records nothing
    assert wd.parse_marker("{not json") is None
    assert wd.parse_marker(json.dumps({"kind": "other", "made": ["bot0"]})) is None
    text = json.dumps({"kind": wd.MARKER_KIND, "made": ["bot0", "../etc", "a/b", 7, ""]})
    assert wd.parse_marker(text) == {"bot0"}


@pytest.fixture
def shm(tmp_path, monkeypatch):
    root = tmp_path / "shm"
    root.mkdir()
    os.chmod(root, 0o1777)
    monkeypatch.delenv(wd.SHM_ROOT_ENV, raising=False)
    monkeypatch.setattr(wd, "SHM_ROOT", str(root))
    return root


def test_create_writes_a_marker_and_bots_are_recorded(tmp_path, shm):
    w = wd.Workdir(str(tmp_path / "a" / "wd"))
    w.create()
    assert w.made() == frozenset()
    for path in (tmp_path / "a", tmp_path / "a" / "wd"):
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o755
    w.lock()
    try:
        w.prepare_bot("bot0")
        w.prepare_bot("bot0b")
        assert w.made() == {"bot0", "bot0b"}
    finally:
        w.unlock()


def test_an_older_empty_marker_is_still_kewpies(tmp_path, shm):
    path = tmp_path / "wd"
    path.mkdir()
    (path / wd.MARKER).write_text("")
    (path / "kewpie.log").write_text("old")
    w = wd.Workdir(str(path))
    w.create()
    assert w.made() is None
    w.record_made(add=("bot0",))
    assert w.made() == {"bot0"}


@needs_root
@pytest.mark.parametrize("plant", ["link", "nobody", "dir"])
def test_a_marker_that_is_not_kewpies_is_refused(tmp_path, plant):
    path = tmp_path / "wd"
    path.mkdir()
    marker = path / wd.MARKER
    target = tmp_path / "target"
    target.write_text("keep")
    if plant == "link":
        os.symlink(str(target), marker)
    elif plant == "dir":
        marker.mkdir()
    else:
        marker.write_text("")
        os.chown(marker, NOBODY, NOBODY)
    with pytest.raises(UsageError, match="kewpie did not make this folder"):
        wd.Workdir(str(path), use_shm=False).create()
    assert target.read_text() == "keep"


def test_wipe_bots_removes_only_what_kewpie_recorded(tmp_path, shm):
    w = wd.Workdir(str(tmp_path / "wd"))
    w.create()
    w.lock()
    try:
        w.prepare_bot("bot0")
        nosuch = tmp_path / "wd" / "bot7"  # made by someone else: kewpie has no record of it
        nosuch.mkdir()
        (nosuch / "data.txt").write_text("keep")
        (tmp_path / "wd" / "notes.txt").write_text("keep")
        (tmp_path / "wd" / "cluster.json").write_text('{"run": {"workdir": "/elsewhere"}}')
        w.wipe_bots()
        left = sorted(os.listdir(w.path))
        assert "bot0" not in left
        assert {"bot7", "notes.txt", "cluster.json"} <= set(left)
        assert (nosuch / "data.txt").read_text() == "keep"
        assert w.made() == frozenset()
        own = tmp_path / "wd" / "cluster.json"
        own.write_text(json.dumps({"run": {"workdir": w.path}}))  # describes this workdir
        w.wipe_bots()
        assert not own.exists()
    finally:
        w.unlock()


# ---------------------------------------------------------------- files never through links

def test_open_regular_creates_exclusively_and_never_follows_a_link(tmp_path):
    path = str(tmp_path / "f")
    fd = safedirs.open_regular(path, os.O_RDWR)
    os.write(fd, b"1")
    os.close(fd)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    fd = safedirs.open_regular(path, os.O_RDWR)  # an existing regular file: opened
    assert os.read(fd, 5) == b"1"
    os.close(fd)
    target = tmp_path / "target"
    target.write_text("keep")
    os.symlink(str(target), tmp_path / "link")
    with pytest.raises(safedirs.UnsafeFileError, match="symbolic link"):
        safedirs.open_regular(str(tmp_path / "link"), os.O_RDWR)
    os.symlink(str(tmp_path / "nowhere"), tmp_path / "dangling")
    with pytest.raises(safedirs.UnsafeFileError, match="symbolic link"):
        safedirs.open_regular(str(tmp_path / "dangling"), os.O_RDWR)
    assert not (tmp_path / "nowhere").exists() and target.read_text() == "keep"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(safedirs.UnsafeFileError, match="not a regular file"):
        safedirs.open_regular(str(tmp_path / "fifo"), os.O_RDWR)


def test_the_workdir_lock_is_never_opened_through_a_link(tmp_path):
    w = wd.Workdir(str(tmp_path / "wd"), use_shm=False)
    w.create()
    target = tmp_path / "target"
    target.write_text("keep")
    os.symlink(str(target), tmp_path / "wd" / "kewpie.lock")
    with pytest.raises(UsageError, match="symbolic link"):
        w.lock()
    assert target.read_text() == "keep"


def test_state_file_is_read_without_following_a_link(tmp_path):
    target = tmp_path / "target.json"
    target.write_text(json.dumps({"run": {"workdir": str(tmp_path)}, "servers": [{"pid": 1}]}))
    os.symlink(str(target), tmp_path / "servers.json")
    state = StateFile(str(tmp_path / "servers.json"))
    assert state.read() == {} and not state.written_for(str(tmp_path))
    os.unlink(tmp_path / "servers.json")
    state.write({"workdir": str(tmp_path)}, [])
    assert state.written_for(str(tmp_path)) and not state.written_for("/elsewhere")


# ---------------------------------------------------------------- a pid is acted on only when tagged

def test_tag_problem():
    assert tag_problem({TAG_WORKDIR: "/wd"}, TAG_WORKDIR, "/wd") == ""
    assert "no KEWPIE_WORKDIR" in tag_problem({}, TAG_WORKDIR, "/wd")
    assert "/other" in tag_problem({TAG_WORKDIR: "/other"}, TAG_WORKDIR, "/wd")
    assert "cannot be read" in tag_problem(None, TAG_WORKDIR, "/wd")


def test_tag_mismatch_of_real_processes(tmp_path):
    env = dict(os.environ, **{TAG_WORKDIR: str(tmp_path)})
    tagged = subprocess.Popen(["sleep", "60"], env=env)
    plain = subprocess.Popen(["sleep", "60"], env={k: v for k, v in os.environ.items()
                                                   if k != TAG_WORKDIR})
    try:
        assert tag_mismatch(tagged.pid, TAG_WORKDIR, str(tmp_path)) == ""
        assert "no KEWPIE_WORKDIR" in tag_mismatch(plain.pid, TAG_WORKDIR, str(tmp_path))
        assert tag_mismatch(tagged.pid, TAG_WORKDIR, "/elsewhere") != ""
    finally:
        for proc in (tagged, plain):
            proc.kill()
            proc.wait()
    assert tag_mismatch(plain.pid, TAG_WORKDIR, str(tmp_path)) == "it has exited"
