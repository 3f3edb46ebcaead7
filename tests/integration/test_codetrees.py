"""Several code trees at once: an unpacked second tree (scripts/get-tree), a mixed-version
replication pair and an upgrade, one Galera rolling-upgrade step, and bad trees.

Covers: lib/servers/trees.py, lib/servers/codetree.py, lib/servers/upgrade.py,
lib/consistency/upgrade.py, scripts/get-tree
"""
import csv
import json
import os
import re

import pytest

from tests.conftest import FIXTURE_SUITES, OLD_VERSION, ROOT




def test_unpacked_tree_is_discovered(old_tree):
    from lib.servers.codetree import discover
    from lib.servers.trees import TreeSet
    tree = discover(old_tree)
    prefix = os.path.join(old_tree, "usr")
    assert tree.basedir == prefix and tree.given == old_tree
    assert tree.label == OLD_VERSION and tree.version.flavor == "mariadb"
    for tool in ("server", "install_db", "client", "dump", "mariabackup", "upgrade"):
        assert tree.tools[tool].startswith(prefix + "/"), (tool, tree.tools[tool])
    opts = dict(tree.server_path_options())
    assert opts["basedir"] == prefix
    assert os.path.isfile(os.path.join(opts["lc-messages-dir"], "english", "errmsg.sys"))
    assert os.path.isfile(os.path.join(opts["plugin-dir"], "ha_blackhole.so"))
    assert os.path.isfile(os.path.join(tree.bin_dirs()[0], "wsrep_sst_rsync"))
    assert discover("/usr").server_path_options() == []
    trees = TreeSet(["/usr"], os.path.dirname(old_tree))
    assert trees.resolve("old").basedir == prefix
    assert trees.resolve("new").basedir == "/usr"
    assert trees.resolve(OLD_VERSION).basedir == prefix
    assert trees.resolve("").basedir == "/usr"


def test_mixed_version_pairs_and_upgrade(kewpie, old_tree):
    proc = kewpie.run("--basedir=/usr", f"--basedir={old_tree}",
                      "--suite=upgrade,replication_mixed")
    out = proc.stdout
    assert proc.returncode == 0, out[-5000:]
    assert "STATUS: PASS, 2/2 test cases" in out
    assert f"code trees: 10.11.19 (/usr), {OLD_VERSION} ({old_tree}/usr)" in out
    assert f"replication {OLD_VERSION}-MariaDB" in out and "-> 10.11.19-MariaDB" in out
    assert f"upgrade: {OLD_VERSION}-MariaDB" in out


def test_rolling_upgrade_step(kewpie, old_tree):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=rolling_step", timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out[-5000:]
    assert "state transfer: IST" in out
    assert f"mixed cluster: s0 {OLD_VERSION}-MariaDB" in out and "s1 10.11.19-MariaDB" in out


@pytest.mark.parametrize("second, expected", [
    ("/nonexistent/tree", "second code tree /nonexistent/tree: --basedir /nonexistent/tree is not a directory"),
    ("EMPTY", "second code tree EMPTY: no server binary (mariadbd or mysqld)"),
    ("/usr", "code tree 'old' needs two code trees of different versions, found only 10.11.19"),
])
def test_bad_or_missing_second_tree_is_one_error(kewpie, tmp_path, second, expected):
    if second == "EMPTY":  # a directory without a server
        second = str(tmp_path)
        expected = f"second code tree {tmp_path}: no server binary (mariadbd or mysqld)"
    proc = kewpie.run("--basedir=/usr", f"--basedir={second}", "--suite=upgrade")
    assert proc.returncode == 2, proc.stdout[-3000:]
    errors = [line for line in proc.stdout.splitlines() + proc.stderr.splitlines()
              if " ERROR " in line]
    assert len(errors) == 1 and expected in errors[0], errors
    assert "Test execution begins" not in proc.stdout


def test_version_against_version_sweep(kewpie, old_tree, tmp_path):
    spec = tmp_path / "vv.json"
    spec.write_text(json.dumps({"name": "vv", "workload": "oltp_point_select", "tables": 1,
                                "table_size": 500, "duration": 1, "warmup": 0, "repeats": 1,
                                "threads": [1, 2], "basedirs": ["old", "new"]}))
    out = tmp_path / "out"
    proc = kewpie.run("--mode=sweep", f"--sweep-file={spec}", f"--sweep-out={out}")
    assert proc.returncode == 0, proc.stdout[-3000:]
    header = [l for l in proc.stdout.splitlines() if re.search(r"INFO +threads ", l)]
    assert header and f"{OLD_VERSION}-MariaDB" in header[0] and "10.11.19-MariaDB" in header[0]
    turns = re.findall(r"sweep vv: (\S+) threads=(\d) repeat 1", proc.stdout)
    assert len(turns) == 4 and turns[0][0] != turns[1][0]  # the trees take turns
    with open(out / "results.csv") as fh:
        versions = {row["version"] for row in csv.DictReader(fh)}
    assert {v.split("-")[0] for v in versions} == {OLD_VERSION, "10.11.19"}
    assert os.path.getsize(out / "tps_vs_threads.png") > 0
