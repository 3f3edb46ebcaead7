"""The user's cache in RAM (``/dev/shm/kewpie-<uid>/cache``): its size, its cap, eviction.

Two stores live there, shared by every workdir of the user: the pristine
datadirs (:mod:`lib.servers.bootstrap`, ``cache/bootstrap/<key>``) and the
formed clusters' snapshots (:mod:`lib.servers.galera_snapshots`,
``cache/galera/<key>``).  Each keeps a few entries by count; together they
could still hold the machine's memory (860 MB after an afternoon of runs), so
the cache has a size cap (``--cache-max-mb``, 2048 MB by default: the
``servers`` section's ``cache_max_mb``): when a new set of servers has started, the least recently used
entries are evicted until the cache fits (:func:`enforce`), never the most
recently used one and never one another run holds (each store's lock).  The
run's summary says its size (:func:`summary_line`); ``--mode=cleanup
--drop-cache`` empties it (:func:`drop_all`).  Sizes count the blocks a file
holds (sparse InnoDB files hold less than their length); an entry's is measured once and
kept in its ``SIZE`` file (:func:`entry_size`): walking 2 GB of cache took ~300 ms of
every run's start and again of its summary.
"""
from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from typing import Callable, Sequence

from .bootstrap import drop_template
from .galera_snapshots import drop_snapshot

MB = 1024 * 1024
SIZE_FILE = "SIZE"   # an entry's size in bytes, beside its READY / meta.json mark


@dataclass(frozen=True)
class CacheEntry:
    """One entry of the cache: a template or a snapshot, its size and last use."""

    kind: str          # "template" or "snapshot"
    path: str
    size: int          # bytes it holds
    used: float        # when it was last used (its mark's mtime)


def tree_size(path: str) -> int:
    """The bytes the files under path hold (their blocks; links not followed)."""
    total = 0
    stack = [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as items:
                for item in items:
                    st = item.stat(follow_symlinks=False)
                    total += st.st_blocks * 512
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(item.path)
        except OSError:
            continue
    return total


def _marked(root: str, mark: str) -> list[tuple[str, float]]:
    """The folders of root holding mark (a whole entry), with the mark's mtime."""
    found = []
    try:
        names = os.listdir(root)
    except OSError:
        return []
    for name in names:
        try:
            found.append((os.path.join(root, name),
                          os.stat(os.path.join(root, name, mark)).st_mtime))
        except OSError:
            continue
    return found


def entry_size(path: str) -> int:
    """The bytes a whole entry holds: read from its SIZE_FILE, else measured once
    (:func:`tree_size`, ~15 ms per 100 MB) and written there for every later run (an entry
    never changes once whole), so a run's start and summary do not walk the cache."""
    recorded = os.path.join(path, SIZE_FILE)
    try:
        with open(recorded, encoding="ascii") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        pass
    size = tree_size(path)
    temporary = f"{recorded}.{os.getpid()}"
    try:
        with open(temporary, "w", encoding="ascii") as fh:
            fh.write(f"{size}\n")
        os.replace(temporary, recorded)
    except OSError:   # a read-only or vanishing entry: measured again next time
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return size


def entries(cache_root: str, sizes: dict[str, int] | None = None) -> list[CacheEntry]:
    """The cache's whole entries, least recently used first.  sizes: a memo of earlier
    sizes by path (entries never change once whole)."""
    memo = {} if sizes is None else sizes
    found = []
    for kind, folder, mark in (("template", "bootstrap", "READY"),
                               ("snapshot", "galera", "meta.json")):
        for path, used in _marked(os.path.join(cache_root, folder), mark):
            if path not in memo:
                memo[path] = entry_size(path)
            found.append(CacheEntry(kind, path, memo[path], used))
    return sorted(found, key=lambda e: (e.used, e.path))


def evictions(found: Sequence[CacheEntry], max_bytes: int) -> list[CacheEntry]:
    """Which entries to evict so the cache fits max_bytes: least recently used first,
    never the most recently used one (pure)."""
    total = sum(e.size for e in found)
    chosen = []
    for entry in list(found)[:-1]:
        if total <= max_bytes:
            break
        chosen.append(entry)
        total -= entry.size
    return chosen


def drop_entry(entry: CacheEntry) -> bool:
    """Remove an entry under its store's lock, only when no run holds it; True when gone."""
    if entry.kind == "template":
        return drop_template(os.path.dirname(entry.path), os.path.basename(entry.path))
    return drop_snapshot(entry.path, wait=False)


def enforce(cache_root: str, max_bytes: int, sizes: dict[str, int] | None = None,
            drop: Callable[[CacheEntry], bool] = drop_entry) -> list[CacheEntry]:
    """Evict least recently used entries until the cache fits max_bytes (0: no cap);
    the entries removed."""
    if max_bytes <= 0:
        return []
    removed = [e for e in evictions(entries(cache_root, sizes), max_bytes) if drop(e)]
    if sizes is not None:
        for entry in removed:
            sizes.pop(entry.path, None)
    return removed


def drop_all(cache_root: str) -> tuple[list[CacheEntry], list[CacheEntry]]:
    """Empty the cache: (the entries removed, those another run holds and kept)."""
    removed: list[CacheEntry] = []
    kept: list[CacheEntry] = []
    for entry in entries(cache_root):
        (removed if drop_entry(entry) else kept).append(entry)
    return removed, kept


def cap_text(max_bytes: int) -> str:
    """The cap in words (``cap 2048 MB``, ``no cap``)."""
    return f"cap {max_bytes / MB:.0f} MB" if max_bytes > 0 else "no cap"


def summary_line(cache_root: str, max_bytes: int) -> str:
    """The run summary's line: where the cache is, its size, its cap, what it holds."""
    found = entries(cache_root)
    templates = sum(1 for e in found if e.kind == "template")
    cap = cap_text(max_bytes)
    return (f"Cache {cache_root}: {sum(e.size for e in found) / MB:.0f} MB ({cap}; "
            f"{templates} datadir template(s), {len(found) - templates} cluster "
            f"snapshot(s)); --mode=cleanup --drop-cache empties it")
