"""Unit tests for several code trees: labels resolved by version, unpacked package trees,
server_basedirs declarations, repeated --basedir, and how a rejoining node caught up."""
import os
import stat

import pytest

from lib.cli import config_from_args
from lib.consistency.upgrade import state_transfer
from lib.errors import CodeTreeError, SuiteError
from lib.servers.codetree import CodeTree, ServerVersion, install_prefix
from lib.servers.requirements import Requirements
from lib.servers.trees import TreeSet
from lib.suites.loader import validate_basedirs


def fake_tree(basedir, version):
    return CodeTree(basedir=basedir, tools={"server": f"{basedir}/sbin/mariadbd"},
                    version=ServerVersion(version, "-MariaDB", "linux", "x86_64", ""),
                    given=basedir)


def tree_set(*trees):
    ts = TreeSet([t.basedir for t in trees])
    for t in trees:
        ts._trees[t.basedir] = t
    return ts


def test_old_and_new_are_resolved_by_version_whatever_the_order():
    new, old = fake_tree("/usr", "10.11.19"), fake_tree("/opt/old", "10.11.18")
    ts = tree_set(new, old)
    assert ts.resolve("old") is old and ts.resolve("new") is new
    assert ts.resolve("") is new and ts.resolve("default") is new  # the tree under test
    assert ts.resolve("10.11.18") is old
    ts2 = tree_set(old, new)
    assert ts2.resolve("new") is new and ts2.resolve("") is old
    assert "10.11.19 (/usr), 10.11.18 (/opt/old)" == ts.describe()


def test_a_single_version_has_no_old_and_new():
    ts = tree_set(fake_tree("/usr", "10.11.19"))
    with pytest.raises(CodeTreeError, match="two code trees of different versions, found only "
                                            "10.11.19.*scripts/get-tree"):
        ts.resolve("old")
    with pytest.raises(CodeTreeError, match="a 10.6.1 code tree"):
        ts.resolve("10.6.1")
    with pytest.raises(CodeTreeError, match="unknown code tree 'older'"):
        ts.resolve("older")


def test_fetched_trees_only_count_with_a_single_basedir(tmp_path):
    for name, complete in (("10.11.18", True), ("10.11.17", False)):
        os.makedirs(tmp_path / name)
        if complete:
            (tmp_path / name / ".complete").write_text("1:10.11.18-0+deb12u1\n")
    assert TreeSet(["/usr"], str(tmp_path)).fetched() == [str(tmp_path / "10.11.18")]
    assert TreeSet(["/usr", "/opt/x"], str(tmp_path)).fetched() == []


def test_install_prefix_of_an_unpacked_package_tree(tmp_path):
    sbin = tmp_path / "usr" / "sbin"
    os.makedirs(sbin)
    server = sbin / "mariadbd"
    server.write_text("#!/bin/sh\n")
    server.chmod(server.stat().st_mode | stat.S_IXUSR)
    assert install_prefix(str(tmp_path)) == str(tmp_path / "usr")
    assert install_prefix(str(tmp_path / "usr")) == str(tmp_path / "usr")
    assert install_prefix("/nonexistent") == "/nonexistent"


def test_relocated_tree_tells_its_server_where_its_files_are(tmp_path):
    os.makedirs(tmp_path / "lib" / "mysql" / "plugin")
    os.makedirs(tmp_path / "share" / "mysql" / "english")
    (tmp_path / "share" / "mysql" / "english" / "errmsg.sys").write_bytes(b"x")
    os.makedirs(tmp_path / "bin")
    tree = fake_tree(str(tmp_path), "10.11.18")
    assert tree.relocated
    assert dict(tree.server_path_options()) == {
        "basedir": str(tmp_path), "plugin-dir": str(tmp_path / "lib" / "mysql" / "plugin"),
        "lc-messages-dir": str(tmp_path / "share" / "mysql")}
    assert tree.bin_dirs() == [str(tmp_path / "bin")]
    system = fake_tree("/usr", "10.11.19")
    assert not system.relocated and system.server_path_options() == [] and system.bin_dirs() == []


def test_server_basedirs_declarations():
    assert validate_basedirs(None, 3, "x") == []
    assert validate_basedirs("old", 3, "x") == ["old", "old", "old"]
    assert validate_basedirs(["old", "new"], 2, "x") == ["old", "new"]
    with pytest.raises(SuiteError, match="server_basedirs must be a list of 2"):
        validate_basedirs(["old"], 2, "x")
    with pytest.raises(SuiteError):
        validate_basedirs([1, 2], 2, "x")
    reqs = Requirements.declared("mysql", [[], []], basedirs=["old", "new"])
    assert reqs.basedir_of(1) == "new" and Requirements.declared("mysql", [[]]).basedir_of(0) == ""
    assert reqs != Requirements.declared("mysql", [[], []])  # another tree: no reuse


def test_basedir_repeated_on_the_command_line():
    cfg = config_from_args(["--basedir=/usr", "--basedir=/opt/old"])
    assert cfg.basedir == "/usr" and cfg.extra_basedirs == ["/opt/old"]
    cfg = config_from_args([])
    assert cfg.basedir == "/usr" and cfg.extra_basedirs == []


def test_state_transfer_read_from_the_joiner_log():
    assert state_transfer("WSREP: Receiving IST: 120 writesets, seqnos 10-130\n"
                          "WSREP: IST received: 3f..:130") == "IST"
    assert state_transfer("WSREP: Proceeding with SST.........\nrsync SST completed on joiner") \
        == "SST"
    assert state_transfer("WSREP: Shifting JOINED -> SYNCED") == "none"


def test_trees_take_turns_in_a_version_sweep():
    from lib.sysbench.interleave import turn_order
    assert turn_order(["old", "new"], 1) == ["old", "new"]
    assert turn_order(["old", "new"], 2) == ["new", "old"]
    assert turn_order(["a", "b", "c"], 3) == ["a", "b", "c"]
