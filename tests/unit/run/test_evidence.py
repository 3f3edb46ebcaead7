"""Evidence kept per run: ``workdir/failed/<run>/<suite.test>/``, never emptied by the next
run, pruned to the newest runs, ``failed/latest`` on the newest.

Covers: lib/run/evidence.py, lib/run/environment.py (evidence_keeper)
"""
from __future__ import annotations

import os

from lib.run.evidence import KEEP_RUNS, EvidenceKeeper, prune_runs, run_folders


def keeper(root: str, run: str) -> EvidenceKeeper:
    return EvidenceKeeper(root, max_datadirs=0, harness_log=None, run=run)


def age(path: str, seconds_ago: float) -> None:
    stamp = os.stat(path).st_mtime - seconds_ago
    os.utime(path, (stamp, stamp))


def test_a_later_run_keeps_the_earlier_runs_evidence(tmp_path):
    root = str(tmp_path / "failed")
    first = keeper(root, "aaaa1111").save("main.basic_test", "boom", [], None)
    assert first.path == os.path.join(root, "aaaa1111", "main.basic_test")
    age(os.path.join(root, "aaaa1111"), 10)
    second = keeper(root, "bbbb2222").save("main.basic_test", "again", [], None)
    assert open(os.path.join(first.path, "failure.txt")).read() == "boom\n"
    assert open(os.path.join(second.path, "failure.txt")).read() == "again\n"
    assert os.readlink(os.path.join(root, "latest")) == "bbbb2222"
    assert os.path.isfile(os.path.join(root, "latest", "main.basic_test", "failure.txt"))
    assert run_folders(root) == ["bbbb2222", "aaaa1111"]


def test_a_passing_run_makes_no_folder_and_moves_nothing(tmp_path):
    root = str(tmp_path / "failed")
    keeper(root, "aaaa1111").save("main.t", "boom", [], None)
    keeper(root, "bbbb2222")  # never saves: all its tests passed
    assert run_folders(root) == ["aaaa1111"]
    assert os.readlink(os.path.join(root, "latest")) == "aaaa1111"


def test_retries_and_odd_names_get_their_own_folders(tmp_path):
    root = str(tmp_path / "failed")
    k = keeper(root, "run1")
    paths = [k.save("suite.test 'row'", "x", [], None).path for _ in range(3)]
    assert [os.path.basename(p) for p in paths] == [
        "suite.test-row", "suite.test-row-2", "suite.test-row-3"]
    assert os.path.basename(keeper(root, "../..").run_dir) == "run"  # never outside failed/


def test_only_the_newest_runs_are_kept(tmp_path):
    root = str(tmp_path / "failed")
    for i in range(KEEP_RUNS + 2):
        keeper(root, f"run{i}").save("main.t", str(i), [], None)
        for name in run_folders(root):  # every earlier run is older
            age(os.path.join(root, name), 5)
    kept = run_folders(root)
    assert len(kept) == KEEP_RUNS and "run0" not in kept and "run1" not in kept
    assert f"run{KEEP_RUNS + 1}" in kept
    assert os.readlink(os.path.join(root, "latest")) == f"run{KEEP_RUNS + 1}"


def test_pruning_never_removes_the_current_run_or_follows_links(tmp_path):
    root = tmp_path / "failed"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep me")
    root.mkdir()
    for name in ("old1", "old2", "current"):
        (root / name).mkdir()
    os.symlink(str(outside), str(root / "link"))
    age(str(root / "current"), 100)  # the current run may even look oldest
    removed = prune_runs(str(root), 1, keep="current")
    assert sorted(removed) == ["old1", "old2"]
    assert (root / "current").is_dir() and (outside / "precious").read_text() == "keep me"
