"""The cache in RAM keeps under its cap: least recently used entries are evicted, never
the newest and never one another run holds; its size is summed from the blocks files
hold; --drop-cache empties it.

Covers: lib/servers/ramcache.py, lib/servers/bootstrap.py (drop_template)
"""
from __future__ import annotations

import fcntl
import os

from lib.servers import ramcache
from lib.servers.ramcache import MB, CacheEntry, drop_all, enforce, entries, evictions


def _entry(name: str, size_mb: int, used: float) -> CacheEntry:
    return CacheEntry("template", f"/c/bootstrap/{name}", size_mb * MB, used)


def test_least_recently_used_go_first_until_the_cache_fits():
    found = [_entry("a", 400, 1), _entry("b", 300, 2), _entry("c", 500, 3)]
    assert [e.path for e in evictions(found, 900 * MB)] == ["/c/bootstrap/a"]
    assert [e.path for e in evictions(found, 500 * MB)] == ["/c/bootstrap/a", "/c/bootstrap/b"]
    assert evictions(found, 1200 * MB) == []


def test_the_newest_entry_stays_even_over_the_cap():
    found = [_entry("a", 400, 1), _entry("b", 3000, 2)]
    assert [e.path for e in evictions(found, 100 * MB)] == ["/c/bootstrap/a"]


def _template(root, key: str, mb: int, used: float) -> str:
    path = root / "bootstrap" / key
    (path / "data").mkdir(parents=True)
    (path / "data" / "ibdata1").write_bytes(b"x" * (mb * MB))
    (path / "READY").write_text("built\n")
    os.utime(path / "READY", (used, used))
    return str(path)


def _snapshot(root, key: str, mb: int, used: float) -> str:
    path = root / "galera" / key
    (path / "n0").mkdir(parents=True)
    (path / "n0" / "ibdata1").write_bytes(b"y" * (mb * MB))
    (path / "meta.json").write_text("{}")
    os.utime(path / "meta.json", (used, used))
    return str(path)


def test_entries_sizes_and_eviction_on_disk(tmp_path):
    old = _template(tmp_path, "t-old", 2, 1000)
    snap = _snapshot(tmp_path, "s-mid", 2, 2000)
    new = _template(tmp_path, "t-new", 2, 3000)
    (tmp_path / "bootstrap" / "t-half.building").mkdir()   # no READY: no entry
    found = entries(str(tmp_path))
    assert [(e.kind, e.path) for e in found] == [("template", old), ("snapshot", snap),
                                                 ("template", new)]
    assert all(2 * MB <= e.size < 3 * MB for e in found)
    sizes: dict[str, int] = {}
    removed = enforce(str(tmp_path), 5 * MB, sizes)
    assert [e.path for e in removed] == [old]
    assert not os.path.exists(old) and os.path.isdir(snap) and os.path.isdir(new)
    assert old not in sizes and new in sizes
    assert enforce(str(tmp_path), 0, sizes) == []   # 0: no cap
    line = ramcache.summary_line(str(tmp_path), 5 * MB)
    assert line.startswith(f"Cache {tmp_path}: 4 MB (cap 5 MB; 1 datadir template(s), "
                           f"1 cluster snapshot(s))"), line


def test_an_entry_another_run_holds_is_never_dropped(tmp_path):
    held = _template(tmp_path, "t-held", 1, 1000)
    _snapshot(tmp_path, "s-free", 1, 2000)
    fd = os.open(os.path.join(os.path.dirname(held), "t-held.lock"), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)   # a run copies it now
        removed, kept = drop_all(str(tmp_path))
    finally:
        os.close(fd)
    assert [e.path for e in kept] == [held] and os.path.isdir(held)
    assert [e.kind for e in removed] == ["snapshot"]
    assert entries(str(tmp_path))[0].path == held


def test_an_entrys_size_is_measured_once_and_kept_in_it(tmp_path):
    path = _template(tmp_path, "t-one", 1, 1000)
    first = ramcache.entry_size(path)
    assert MB <= first < 2 * MB
    recorded = os.path.join(path, ramcache.SIZE_FILE)
    assert open(recorded).read().strip() == str(first)
    (tmp_path / "bootstrap" / "t-one" / "data" / "more").write_bytes(b"z" * MB)
    assert ramcache.entry_size(path) == first   # read back, not walked again
    assert [e.size for e in entries(str(tmp_path))] == [first]
    os.unlink(recorded)
    assert ramcache.entry_size(path) >= first + MB   # measured again when it is missing
    assert not [n for n in os.listdir(path) if n.startswith(ramcache.SIZE_FILE + ".")]
