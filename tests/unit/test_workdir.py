"""Unit tests for lib/workdir.py: the shared cache link when bots prepare it at once."""
import os

import pytest

from lib import workdir as wd


@pytest.fixture
def shm_workdir(tmp_path, monkeypatch):
    """A Workdir whose 'shm' is a private directory; returns (workdir, its path)."""
    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setattr(wd, "SHM_ROOT", str(shm))
    path = tmp_path / "wd"
    path.mkdir()
    return wd.Workdir(str(path)), path


def test_cache_link_made_by_another_bot_meanwhile_is_accepted(shm_workdir, monkeypatch):
    w, path = shm_workdir
    assert w.use_shm
    target = os.path.join(w.shm_path, "cache")
    link = str(path / "cache")
    real_islink = os.path.islink
    calls = []

    def racing_islink(p):
        """The other bot creates the link just after this bot's last look."""
        calls.append(p)
        if p == link and len(calls) == 2:
            os.makedirs(target, exist_ok=True)
            os.symlink(target, link)
            return False
        return real_islink(p)

    monkeypatch.setattr(wd.os.path, "islink", racing_islink)
    assert w._link_or_dir("cache", wipe=False) == link
    assert len(calls) >= 2
    monkeypatch.undo()
    assert os.path.realpath(path / "cache") == os.path.realpath(target)


def test_disk_bot_dir_is_fresh_and_only_with_shm(shm_workdir):
    w, path = shm_workdir
    disk = w.prepare_disk_bot("bot0")
    assert disk == os.path.join(str(path), "disk", "bot0") and os.path.isdir(disk)
    open(os.path.join(disk, "old"), "w").close()
    assert os.listdir(w.prepare_disk_bot("bot0")) == []
    assert wd.Workdir(str(path), use_shm=False).prepare_disk_bot("bot0") is None
