"""Unit tests for lib/platform/workdir.py: the /dev/shm tree (safe, shared cache, reclaim) and the links to it.

Covers: lib/platform/workdir.py
"""
import fcntl
import os
import stat
import time

import pytest

from lib.platform import workdir as wd
from lib.errors import UsageError

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")


@pytest.fixture
def shm(tmp_path, monkeypatch):
    """A private stand-in for /dev/shm (world-writable and sticky, like the real one)."""
    root = tmp_path / "shm"
    root.mkdir()
    os.chmod(root, 0o1777)
    monkeypatch.delenv(wd.SHM_ROOT_ENV, raising=False)
    monkeypatch.setattr(wd, "SHM_ROOT", str(root))
    return root


@pytest.fixture
def make_wd(tmp_path, shm):
    """Factory of created workdirs (name -> Workdir); all unlocked afterwards."""
    made = []

    def make(name="wd", **kwargs):
        path = tmp_path / name
        w = wd.Workdir(str(path), **kwargs)
        w.create()
        made.append(w)
        return w
    yield make
    for w in made:
        w.unlock()


@pytest.fixture
def canary(tmp_path):
    d = tmp_path / "canary"
    d.mkdir()
    (d / "precious").write_text("keep me")
    return d


def _intact(canary):
    return os.listdir(canary) == ["precious"] and (canary / "precious").read_text() == "keep me"


def _mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_layout_and_modes(make_wd, shm):
    w = make_wd()
    w.lock()
    assert w.shm_root == os.path.join(str(shm), f"kewpie-{os.getuid()}")
    assert w.shm_path == os.path.join(w.shm_root, w.tree_name) and w.tree_name.startswith("wd-")
    bot = w.prepare_bot("bot0")
    cache = w.prepare_cache()
    assert os.readlink(bot) == os.path.join(w.shm_path, "bot0")
    assert os.readlink(os.path.join(w.path, "cache")) == w.shm_cache
    assert cache == os.path.join(w.shm_cache, "bootstrap")
    for path in (w.shm_root, w.shm_path, w.shm_cache, cache, os.path.join(w.shm_path, "bot0")):
        st = os.lstat(path)
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and _mode(path) == 0o711
    with open(os.path.join(w.shm_path, "workdir")) as fh:
        assert fh.read().strip() == w.path
    fd = os.open(os.path.join(w.shm_path, "lock"), os.O_RDWR)
    with pytest.raises(BlockingIOError):  # held while the run uses the tree
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    w.unlock()
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)


def test_cache_is_shared_by_workdirs_bots_are_not(make_wd):
    a, b = make_wd("a"), make_wd("b")
    assert os.path.realpath(a.prepare_cache()) == os.path.realpath(b.prepare_cache())
    assert os.path.realpath(a.prepare_bot("bot0")) != os.path.realpath(b.prepare_bot("bot0"))


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o775])
def test_writable_shm_root_is_refused(make_wd, mode):
    w = make_wd()
    os.mkdir(w.shm_root)
    os.chmod(w.shm_root, mode)
    with pytest.raises(UsageError, match=f"refusing to use {w.shm_root}: .*mode {mode:04o}.*--no-shm"):
        w.lock()


@needs_root
def test_shm_root_of_another_user_is_refused_and_never_written(make_wd, canary):
    w = make_wd()
    os.mkdir(w.shm_root, 0o755)
    os.makedirs(w.shm_path)
    os.symlink(str(canary), os.path.join(w.shm_path, "bot0"))
    os.symlink(str(canary), os.path.join(w.shm_root, "cache"))
    for dirpath, dirs, files in os.walk(w.shm_root):
        for name in dirs + files + [""]:
            os.lchown(os.path.join(dirpath, name), NOBODY, NOBODY)
    with pytest.raises(UsageError, match="uid 65534"):
        w.lock()
    with pytest.raises(UsageError):
        w.prepare_bot("bot0")
    with pytest.raises(UsageError):
        w.prepare_cache()
    assert _intact(canary) and not os.path.lexists(os.path.join(w.path, "bot0"))


def test_shm_root_that_is_a_symlink_is_refused(make_wd, canary):
    w = make_wd()
    os.chmod(canary, 0o711)
    os.symlink(str(canary), w.shm_root)
    with pytest.raises(UsageError, match="symbolic link"):
        w.lock()
    assert _intact(canary)


@pytest.mark.parametrize("name", ["bot0", "cache", "bot3"])
def test_workdir_link_pointing_elsewhere_is_refused(make_wd, canary, name):
    w = make_wd()
    os.symlink(str(canary), os.path.join(w.path, name))
    with pytest.raises(UsageError, match=f"refusing to follow {w.path}/{name}: .*canary"):
        w.lock()
    w.unlock()
    with pytest.raises(UsageError):
        w.prepare_cache() if name == "cache" else w.prepare_bot(name)
    assert _intact(canary)


@needs_root
def test_workdir_link_of_another_user_is_refused_even_to_the_right_place(make_wd):
    w = make_wd()
    w.prepare_bot("bot0")
    os.lchown(os.path.join(w.path, "bot0"), NOBODY, NOBODY)
    with pytest.raises(UsageError, match="uid 65534"):
        w.prepare_bot("bot0")


def test_link_of_the_older_layout_is_replaced(make_wd, shm):
    w = make_wd()
    old = os.path.join(str(shm), f"kewpie-{os.getuid()}-{w.tree_name[3:]}")
    os.makedirs(os.path.join(old, "bot0"))
    os.symlink(os.path.join(old, "bot0"), os.path.join(w.path, "bot0"))
    w.lock()
    assert not os.path.exists(old)  # our own old tree, freed
    assert os.readlink(w.prepare_bot("bot0")) == os.path.join(w.shm_path, "bot0")


def test_cache_link_made_by_another_bot_meanwhile_is_accepted(make_wd, monkeypatch):
    w = make_wd()
    link = os.path.join(w.path, "cache")
    real_symlink = os.symlink

    def racing_symlink(src, dst):
        """The other bot creates the same link just before this bot does."""
        real_symlink(src, dst)
        raise FileExistsError(17, "File exists", dst)

    monkeypatch.setattr(wd.os, "symlink", racing_symlink)
    assert w._link_or_dir("cache", wipe=False) == link
    monkeypatch.undo()
    assert os.readlink(link) == w.shm_cache


def test_empty_dir_does_not_follow_a_bot_replaced_by_a_link(make_wd, canary, tmp_path):
    w = make_wd()
    bot = os.path.realpath(w.prepare_bot("bot0"))
    os.rmdir(bot)
    os.symlink(str(canary), bot)
    w.empty_dir(bot)
    w.empty_dir(None)
    assert _intact(canary)


def test_prepare_bot_wipes_the_previous_run_and_never_a_link_target(make_wd, canary):
    w = make_wd()
    bot = os.path.realpath(w.prepare_bot("bot0"))
    os.symlink(str(canary), os.path.join(bot, "var_s0"))
    open(os.path.join(bot, "old"), "w").close()
    assert os.listdir(w.prepare_bot("bot0")) == []
    assert _intact(canary)


def test_no_shm_replaces_links_by_directories_and_keeps_the_shared_cache(make_wd, tmp_path):
    w = make_wd()
    w.prepare_bot("bot0")
    w.prepare_cache()
    w.unlock()
    plain = wd.Workdir(w.path, use_shm=False)
    assert plain.prepare_bot("bot0") == os.path.join(w.path, "bot0")
    assert plain.prepare_cache() == os.path.join(w.path, "cache", "bootstrap")
    for name in ("bot0", "cache"):
        assert os.path.isdir(os.path.join(w.path, name))
        assert not os.path.islink(os.path.join(w.path, name))
    assert os.path.isdir(w.shm_cache)  # other workdirs' cache stays
    assert not os.path.exists(os.path.join(w.shm_path, "bot0"))
    w2 = wd.Workdir(w.path)  # and back to /dev/shm: the directories go, the links come
    try:
        w2.lock()
        assert os.path.islink(w2.prepare_bot("bot0"))
    finally:
        w2.unlock()


def test_disk_bot_dir_is_fresh_and_only_with_shm(make_wd, tmp_path):
    w = make_wd()
    disk = w.prepare_disk_bot("bot0")
    assert disk == os.path.join(w.path, "disk", "bot0") and os.path.isdir(disk)
    open(os.path.join(disk, "old"), "w").close()
    assert os.listdir(w.prepare_disk_bot("bot0")) == []
    assert wd.Workdir(w.path, use_shm=False).prepare_disk_bot("bot0") is None
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o711)
    under = w.prepare_disk_bot("bot1", str(locks / "disk"))
    assert under == os.path.join(str(locks), "disk", w.tree_name, "bot1")
    assert _mode(locks / "disk") == 0o711 and _mode(under) == 0o711


def test_disk_bot_under_a_writable_lock_dir_disk_is_refused(make_wd, tmp_path):
    w = make_wd()
    disk = tmp_path / "locks" / "disk"
    disk.mkdir(parents=True)
    os.chmod(disk, 0o777)
    with pytest.raises(UsageError, match="--lock-dir"):
        w.prepare_disk_bot("bot0", str(disk))


# ------------------------------------------------------------------ reclaim

def test_reclaim_removes_trees_of_deleted_workdirs_only(make_wd, tmp_path):
    import shutil
    keep, gone, me = make_wd("keep"), make_wd("gone"), make_wd("me")
    for w in (keep, gone):
        w.lock()
        w.prepare_bot("bot0")
        w.prepare_cache()
        w.unlock()
    shutil.rmtree(gone.path)
    me.lock()  # reclaims
    assert not os.path.exists(gone.shm_path)
    assert os.path.isdir(keep.shm_path) and os.path.isdir(me.shm_path)
    assert os.path.isdir(me.shm_cache)  # shared cache is never reclaimed


def test_reclaim_spares_a_tree_in_use(make_wd):
    import shutil
    busy, me = make_wd("busy"), make_wd("me")
    busy.lock()
    shutil.rmtree(busy.path)  # deleted while its run still holds the tree
    me.lock()
    assert os.path.isdir(busy.shm_path)
    busy.unlock()
    assert me.reclaim() == [busy.shm_path]


def test_reclaim_spares_a_tree_whose_workdir_file_is_not_written_yet(make_wd, shm):
    me = make_wd("me")
    me.lock()
    young = os.path.join(me.shm_root, "wd-0123456789")
    os.mkdir(young, 0o711)
    assert me.reclaim() == []
    old = time.time() - wd.RECLAIM_GRACE - 5
    os.utime(young, (old, old))
    assert me.reclaim() == [young]


@needs_root
def test_reclaim_never_touches_a_tree_that_is_not_ours(make_wd, canary):
    me = make_wd("me")
    me.lock()
    foreign = os.path.join(me.shm_root, "wd-abcdefabcd")
    os.mkdir(foreign, 0o777)
    os.symlink(str(canary), os.path.join(foreign, "bot0"))
    os.chown(foreign, NOBODY, NOBODY)
    old = time.time() - 3600
    os.utime(foreign, (old, old))
    assert me.reclaim() == []
    assert os.path.isdir(foreign) and _intact(canary)


def test_remove_shm_keeps_the_shared_cache_and_trees_in_use(make_wd):
    w = make_wd()
    w.lock()
    w.prepare_bot("bot0")
    w.prepare_cache()
    wd.Workdir(w.path).remove_shm()  # another process's view: the tree is in use
    assert os.path.isdir(w.shm_path)
    w.unlock()
    wd.Workdir(w.path).remove_shm()
    assert not os.path.exists(w.shm_path) and os.path.isdir(w.shm_cache)


def test_wipe_bots_removes_links_and_bots_never_targets(make_wd, canary):
    w = make_wd()
    w.lock()
    w.prepare_bot("bot0")
    bot1 = os.path.realpath(w.prepare_bot("bot1"))
    os.symlink(str(canary), os.path.join(bot1, "evil"))
    w.wipe_bots()
    assert [n for n in os.listdir(w.path) if n.startswith("bot")] == []
    assert sorted(os.listdir(w.shm_path)) == ["lock", "workdir"]
    assert _intact(canary)


def test_shm_root_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(wd.SHM_ROOT_ENV, str(tmp_path))
    w = wd.Workdir(str(tmp_path / "wd"))
    assert w.shm_root == os.path.join(str(tmp_path), f"kewpie-{os.getuid()}")


def test_no_shm_runs_reclaim_too_and_ignore_an_unsafe_tree(make_wd, tmp_path):
    import shutil
    gone = make_wd("gone")
    gone.lock()
    gone.unlock()
    shutil.rmtree(gone.path)
    plain = make_wd("plain", use_shm=False)
    plain.lock()
    assert not os.path.exists(gone.shm_path)
    plain.unlock()
    os.chmod(plain.shm_root, 0o777)
    plain.lock()  # --no-shm never uses the unsafe tree, so it is no reason to stop
    assert plain.reclaim(strict=False) == []
    with pytest.raises(UsageError):
        plain.reclaim()


def test_kept_spares_live_in_the_tree_and_go_with_cleanup(make_wd):
    w = make_wd()
    w.lock()
    w.prepare_bot("bot0")
    kept = w.kept_spares_dir("bot0")
    assert kept == os.path.join(w.shm_path, wd.SPARES, "bot0") and os.path.isdir(kept)
    os.makedirs(os.path.join(kept, "var_s0"))
    w.prepare_bot("bot0")                       # a new run's clean bot keeps them
    assert os.listdir(kept) == ["var_s0"]
    w.wipe_bots()
    assert sorted(os.listdir(w.shm_path)) == ["lock", "workdir"]


def test_no_kept_spares_without_the_tree(make_wd):
    assert make_wd(use_shm=False).kept_spares_dir("bot0") is None
