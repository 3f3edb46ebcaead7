"""The integration files' order: the long ones first.

scripts/run-tests runs these files two at a time (``-n 2 --dist loadfile``), with
``--no-loadscope-reorder`` so that pytest-xdist hands the files out in the order made
here.  Its own order (most tests first) put the one-test files last -- among them the
reductions, each confirmed on both code trees under both tools, the buildbot fleet and
the browser -- and xdist gives a worker its next file while its current one still has
two tests to run: at the end one worker could still hold one or two of those long files
while the other had nothing left.  LONG_FIRST names the files that start the most
servers or run the longest (reductions, hunts, clusters, the fleet, the mtr slice), in
that order; every other file follows, most tests first, as xdist ordered them.  A file
missing from the list only runs later: the order changes no test's result.
"""
from __future__ import annotations

import os

import pytest

LONG_FIRST = (
    "test_reduce.py", "test_mtr_mode.py", "test_reduce_travel.py", "test_reduce_run.py",
    "test_reduce_fresh.py", "test_reduce_errorlog.py", "test_reduce_interleaved.py",
    "test_reduce_concurrent.py", "test_reduce_dqe_cert.py", "test_reduce_radar.py",
    "test_reduce_pinolo.py",
    "test_fleet.py", "test_hunt.py", "test_hunt_pquery.py", "test_hunt_oracles.py",
    "test_history_page.py", "test_galera.py", "test_garbd.py", "test_replay.py",
    "test_replay_late.py", "test_replay_speed.py", "test_triage.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order this folder's items file by file: LONG_FIRST's files in its order, then the
    other files, most tests first (a stable sort: a file's own tests keep their order);
    the items of other folders (``pytest tests``) keep their places."""
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    slots = [n for n, item in enumerate(items) if str(item.path).startswith(here)]
    counts: dict[str, int] = {}
    for n in slots:
        counts[items[n].nodeid.split("::")[0]] = counts.get(items[n].nodeid.split("::")[0], 0) + 1

    def rank(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.split("::")[0]
        name = os.path.basename(path)
        if name in LONG_FIRST:
            return (LONG_FIRST.index(name), 0)
        return (len(LONG_FIRST), -counts[path])

    for n, item in zip(slots, sorted((items[n] for n in slots), key=rank)):
        items[n] = item
