"""Unit tests for lib/servers/state.py (servers.json) and lib/platform/workdir.py (workdir creation and locking).

Covers: lib/servers/state.py, lib/platform/workdir.py
"""
import json
import os
import stat

import pytest

from lib.errors import UsageError
from lib.servers.state import StateFile
from lib.platform.workdir import MARKER, Workdir


# ---------------------------------------------------------------- StateFile

def test_write_read_roundtrip(tmp_path):
    state = StateFile(str(tmp_path / "servers.json"))
    run = {"pid": 1234, "workdir": str(tmp_path)}
    servers = [{"name": "s0", "pid": 111, "port": 9300, "create_time": 1.5},
               {"name": "s1", "pid": 222, "port": 9304}]
    state.write(run, servers)
    data = state.read()
    assert data["run"] == run
    assert data["servers"] == servers
    assert isinstance(data["updated"], str) and len(data["updated"]) == 19


def test_only_servers_with_a_pid_are_recorded(tmp_path):
    state = StateFile(str(tmp_path / "servers.json"))
    state.write({}, [{"name": "s0", "pid": 111}, {"name": "s1", "pid": None},
                     {"name": "s2"}, {"name": "s3", "pid": 0}])
    assert [s["name"] for s in state.read()["servers"]] == ["s0"]


def test_write_accepts_a_generator(tmp_path):
    state = StateFile(str(tmp_path / "servers.json"))
    state.write({}, ({"name": f"s{i}", "pid": 10 + i} for i in range(2)))
    assert [s["pid"] for s in state.read()["servers"]] == [10, 11]


def test_write_replaces_previous_content(tmp_path):
    state = StateFile(str(tmp_path / "servers.json"))
    state.write({"n": 1}, [{"pid": 1}])
    state.write({"n": 2}, [])
    data = state.read()
    assert data["run"] == {"n": 2}
    assert data["servers"] == []


def test_file_mode_is_0600_whatever_the_umask(tmp_path):
    path = tmp_path / "servers.json"
    old = os.umask(0o077)
    try:
        StateFile(str(path)).write({}, [])
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # options may hold passwords


def test_write_is_valid_json_and_leaves_no_temp_files(tmp_path):
    path = tmp_path / "servers.json"
    StateFile(str(path)).write({"a": 1}, [{"pid": 5}])
    json.loads(path.read_text())
    assert os.listdir(tmp_path) == ["servers.json"]


def test_read_missing_or_unreadable_is_empty(tmp_path):
    path = tmp_path / "servers.json"
    assert StateFile(str(path)).read() == {}
    path.write_text("{not json")
    assert StateFile(str(path)).read() == {}


def test_clear(tmp_path):
    path = tmp_path / "servers.json"
    state = StateFile(str(path))
    state.write({}, [{"pid": 1}])
    state.clear()
    assert not path.exists()
    assert state.read() == {}
    state.clear()  # clearing twice is fine


# ---------------------------------------------------------------- Workdir.create

def test_create_new_directory(tmp_path):
    wd = Workdir(str(tmp_path / "wd"), use_shm=False)
    wd.create()
    assert os.path.isdir(wd.path)
    assert os.path.isfile(os.path.join(wd.path, MARKER))
    assert stat.S_IMODE(os.stat(wd.path).st_mode) & 0o022 == 0


def test_create_accepts_an_empty_existing_directory(tmp_path):
    path = tmp_path / "wd"
    path.mkdir()
    Workdir(str(path), use_shm=False).create()
    assert (path / MARKER).is_file()


def test_create_refuses_a_non_empty_foreign_directory(tmp_path):
    path = tmp_path / "wd"
    path.mkdir()
    (path / "precious.txt").write_text("do not delete")
    with pytest.raises(UsageError, match="non-empty directory kewpie did not create"):
        Workdir(str(path), use_shm=False).create()
    assert not (path / MARKER).exists()
    assert (path / "precious.txt").read_text() == "do not delete"


def test_create_accepts_its_own_non_empty_directory(tmp_path):
    path = tmp_path / "wd"
    wd = Workdir(str(path), use_shm=False)
    wd.create()
    (path / "kewpie.log").write_text("old log")
    Workdir(str(path), use_shm=False).create()


def test_create_refuses_a_file(tmp_path):
    path = tmp_path / "wd"
    path.write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        Workdir(str(path), use_shm=False).create()


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o1777])
def test_create_refuses_a_directory_others_may_write(tmp_path, mode):
    path = tmp_path / "wd"
    path.mkdir()
    os.chmod(path, mode)
    with pytest.raises(UsageError, match=f"writable by group or others .*mode {mode:04o}.*chmod go-w"):
        Workdir(str(path), use_shm=False).create()
    assert os.listdir(path) == []  # nothing written before the refusal
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_paths_are_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    wd = Workdir("wd", use_shm=False)
    assert wd.path == str(tmp_path / "wd")
    assert wd.state_file_for("bot0") == str(tmp_path / "wd" / "servers.json")
    assert wd.bot_dir("bot0") == str(tmp_path / "wd" / "bot0")
    assert not wd.use_shm


# ---------------------------------------------------------------- Workdir.lock

def test_lock_twice_raises_in_use(tmp_path):
    path = str(tmp_path / "wd")
    first = Workdir(path, use_shm=False)
    first.create()
    first.lock()
    second = Workdir(path, use_shm=False)
    try:
        with pytest.raises(UsageError, match="in use") as info:
            second.lock()
        assert str(os.getpid()) in str(info.value)
        assert path in str(info.value)
    finally:
        first.unlock()
        second.unlock()


def test_lock_free_again_after_unlock(tmp_path):
    path = str(tmp_path / "wd")
    first = Workdir(path, use_shm=False)
    first.create()
    first.lock()
    first.unlock()
    first.unlock()  # idempotent
    second = Workdir(path, use_shm=False)
    second.lock()
    try:
        with open(os.path.join(path, "kewpie.lock")) as fh:
            assert fh.read().strip() == str(os.getpid())
    finally:
        second.unlock()
