"""Unit tests for lib/platform/safedirs.py: make with mkdir, check on reuse, remove without following links.

Covers: lib/platform/safedirs.py
"""
import os
import stat

import pytest

from lib.platform import safedirs
from lib.errors import PortLeaseError, UsageError

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")


@pytest.fixture
def canary(tmp_path):
    """A directory with one file that no test may touch; returns (dir, file)."""
    d = tmp_path / "canary"
    d.mkdir()
    f = d / "precious"
    f.write_text("keep me")
    return d, f


def _mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_new_dir_gets_exactly_its_mode_whatever_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        path = safedirs.make_dir(str(tmp_path / "t"), safedirs.TRAVERSE)
    finally:
        os.umask(old)
    assert _mode(path) == 0o711 and os.lstat(path).st_uid == os.geteuid()
    assert _mode(safedirs.make_dir(str(tmp_path / "p"))) == 0o700


def test_our_existing_dir_is_reused_with_the_wanted_mode(tmp_path):
    path = tmp_path / "d"
    path.mkdir(mode=0o755)
    safedirs.make_dir(str(path), safedirs.TRAVERSE)
    assert _mode(path) == 0o711


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_group_or_world_writable_dir_is_refused_not_fixed(tmp_path, mode):
    path = tmp_path / "open"
    path.mkdir()
    os.chmod(path, mode)
    with pytest.raises(UsageError) as err:
        safedirs.make_dir(str(path), safedirs.TRAVERSE)
    text = str(err.value)
    assert str(path) in text and f"mode {mode:04o}" in text and "writable" in text
    assert "rm -rf" in text and "\n" not in text
    assert _mode(path) == mode  # never "fixed": others may have planted things inside


def test_symlink_is_refused_and_its_target_untouched(tmp_path, canary):
    d, f = canary
    link = tmp_path / "link"
    link.symlink_to(d)
    before = _mode(d)
    with pytest.raises(UsageError, match="symbolic link to .*canary"):
        safedirs.make_dir(str(link), safedirs.TRAVERSE)
    assert _mode(d) == before and f.read_text() == "keep me"


def test_a_file_is_refused(tmp_path):
    path = tmp_path / "f"
    path.write_text("")
    with pytest.raises(UsageError, match="not a directory"):
        safedirs.make_dir(str(path))


@needs_root
def test_someone_elses_dir_is_refused_naming_owner_and_mode(tmp_path):
    path = tmp_path / "theirs"
    path.mkdir(mode=0o755)
    os.chown(path, NOBODY, NOBODY)
    with pytest.raises(UsageError) as err:
        safedirs.make_dir(str(path), remedy="do this")
    assert "uid 65534 (nobody)" in str(err.value) and "mode 0755" in str(err.value)
    assert str(err.value).endswith("; do this")


@needs_root
def test_an_allowed_owner_passes_and_keeps_its_mode(tmp_path):
    path = tmp_path / "server"
    path.mkdir(mode=0o755)
    os.chown(path, NOBODY, NOBODY)
    safedirs.make_dir(str(path), safedirs.TRAVERSE, owners=[NOBODY])
    assert _mode(path) == 0o755 and os.lstat(path).st_uid == NOBODY


def test_lock_dir_error_is_a_usage_and_a_port_lease_error(tmp_path):
    path = tmp_path / "locks"
    path.mkdir()
    os.chmod(path, 0o777)
    with pytest.raises(safedirs.UnsafeLockDirError) as err:
        safedirs.make_dir(str(path), error=safedirs.UnsafeLockDirError)
    assert isinstance(err.value, UsageError) and isinstance(err.value, PortLeaseError)


def test_empty_dir_removes_links_not_their_targets(tmp_path, canary):
    d, f = canary
    box = tmp_path / "box"
    (box / "sub" / "deep").mkdir(parents=True)
    (box / "sub" / "deep" / "x").write_text("x")
    (box / "file").write_text("y")
    (box / "to_dir").symlink_to(d)
    (box / "sub" / "to_file").symlink_to(f)
    assert safedirs.empty_dir(str(box)) is True
    assert os.listdir(box) == [] and f.read_text() == "keep me" and os.listdir(d) == ["precious"]


def test_empty_dir_never_empties_through_a_link(tmp_path, canary):
    d, f = canary
    link = tmp_path / "bot0"
    link.symlink_to(d)
    assert safedirs.empty_dir(str(link)) is False
    assert f.read_text() == "keep me" and link.is_symlink()
    assert safedirs.empty_dir(str(tmp_path / "missing")) is False


def test_remove_tree_removes_a_link_itself_never_its_target(tmp_path, canary):
    d, f = canary
    link = tmp_path / "cache"
    link.symlink_to(d)
    safedirs.remove_tree(str(link))
    assert not os.path.lexists(link) and f.read_text() == "keep me"
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "out").symlink_to(d)
    safedirs.remove_tree(str(tree))
    assert not tree.exists() and f.read_text() == "keep me"
    safedirs.remove_tree(str(tmp_path / "missing"))  # nothing to do


def test_small_files_are_read_and_written_never_through_links(tmp_path, canary):
    d, f = canary
    link = tmp_path / "workdir"
    link.symlink_to(f)
    assert safedirs.read_small_file(str(link)) is None
    with pytest.raises(OSError):
        safedirs.write_private_file(str(link), "evil")
    assert f.read_text() == "keep me"
    path = tmp_path / "real"
    safedirs.write_private_file(str(path), "hello\n")
    assert safedirs.read_small_file(str(path)) == "hello\n" and _mode(path) == 0o600
