"""Code trees: version parsing, flavors and binary discovery of one tree; several trees
at once (labels resolved by version, unpacked package trees, server_basedirs
declarations, repeated --basedir) and how a rejoining node caught up.

Covers: lib/servers/codetree.py, lib/servers/trees.py, lib/suites/loader.py (server_basedirs),
lib/consistency/upgrade.py (state_transfer)
"""
import os
import stat

import pytest

from lib.cli import config_from_args
from lib.consistency.upgrade import state_transfer
from lib.errors import CodeTreeError, SuiteError
from lib.servers.codetree import (
    CodeTree, ServerVersion, discover, find_tool, install_prefix, parse_version_output,
    uses_initialize_insecure,
)
from lib.servers.requirements import Requirements
from lib.servers.trees import TreeSet
from lib.suites.loader import validate_basedirs

MARIADB = "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)"
MYSQL8 = "/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)"
PERCONA8 = ("mysqld  Ver 8.0.35-27 for Linux on x86_64 (Percona Server (GPL), Release 27, "
            "Revision 2f8eeb0b)")
MYSQL56 = "mysqld  Ver 5.6.51 for Linux on x86_64 (MySQL Community Server (GPL))"
MYSQL57 = "mysqld  Ver 5.7.44 for Linux on x86_64 (MySQL Community Server (GPL))"
MARIADB103 = "mysqld  Ver 10.3.39-MariaDB-0+deb10u1 for debian-linux-gnu on x86_64 (Debian 10)"
PXC = ("mysqld  Ver 8.0.35-27.1 for Linux on x86_64 (Percona XtraDB Cluster (GPL), Release rel27, "
       "Revision 2f8eeb0, WSREP version 26.1.4.3)")

SYSTEM_SERVER = "/usr/sbin/mariadbd"
SYSTEM_INSTALL_DB = "/usr/bin/mariadb-install-db"
needs_system_mariadb = pytest.mark.skipif(
    not (os.access(SYSTEM_SERVER, os.X_OK) and os.access(SYSTEM_INSTALL_DB, os.X_OK)),
    reason="system MariaDB not installed")


def version(major, minor, patch, flavor_suffix="", comment=""):
    return ServerVersion(version=f"{major}.{minor}.{patch}", suffix=flavor_suffix,
                         compile_os="Linux", platform="x86_64", comment=comment)


# ---------------------------------------------------------------- parse_version_output

def test_parse_mariadb():
    v = parse_version_output(MARIADB)
    assert v.version == "10.11.19"
    assert v.suffix == "-MariaDB-0+deb12u1"
    assert v.compile_os == "debian-linux-gnu"
    assert v.platform == "x86_64"
    assert v.comment == "Debian 12"
    assert v.flavor == "mariadb"
    assert v.version_tuple == (10, 11, 19)
    assert not uses_initialize_insecure(v)
    assert not v.is_galera


def test_parse_mysql8():
    v = parse_version_output(MYSQL8)
    assert v.version == "8.0.36"
    assert v.suffix == ""
    assert v.compile_os == "Linux"
    assert v.comment == "MySQL Community Server - GPL"
    assert v.flavor == "mysql"
    assert v.version_tuple == (8, 0, 36)
    assert uses_initialize_insecure(v)


def test_parse_percona8_nested_parentheses():
    v = parse_version_output(PERCONA8)
    assert v.version == "8.0.35"
    assert v.suffix == "-27"
    assert v.comment == "Percona Server (GPL), Release 27, Revision 2f8eeb0b"
    assert v.flavor == "percona"
    assert v.version_tuple == (8, 0, 35)
    assert uses_initialize_insecure(v)


def test_parse_mysql56():
    v = parse_version_output(MYSQL56)
    assert v.version_tuple == (5, 6, 51)
    assert v.flavor == "mysql"
    assert v.comment == "MySQL Community Server (GPL)"
    assert not uses_initialize_insecure(v)


def test_parse_mysql57():
    v = parse_version_output(MYSQL57)
    assert v.flavor == "mysql"
    assert uses_initialize_insecure(v)


def test_parse_old_mariadb_named_mysqld():
    v = parse_version_output(MARIADB103)
    assert v.flavor == "mariadb"
    assert v.version_tuple == (10, 3, 39)


def test_parse_galera_build():
    v = parse_version_output(PXC)
    assert v.flavor == "percona"
    assert v.is_galera


def test_parse_without_comment():
    v = parse_version_output("mysqld  Ver 8.0.36 for Linux on x86_64")
    assert v.comment == ""
    assert v.flavor == "mysql"


def test_parse_with_surrounding_noise():
    v = parse_version_output("warning: something\n" + MYSQL8 + "\n")
    assert v.version == "8.0.36"


@pytest.mark.parametrize("text", ["", "garbage", "mysqld: command not found",
                                  "mysqld  Ver 8.0 for Linux on x86_64",
                                  "mysql  Ver 15.1 Distrib 10.11.19-MariaDB"])
def test_parse_garbage_raises(text):
    with pytest.raises(CodeTreeError, match="cannot read the server version"):
        parse_version_output(text)


@pytest.mark.parametrize("v, expected", [
    (version(5, 7, 5), False),
    (version(5, 7, 6), True),
    (version(5, 6, 99), False),
    (version(8, 4, 0), True),
    (version(5, 7, 6, "-29", "Percona Server (GPL)"), True),
    (version(5, 5, 60, "-38.12", "Percona Server (GPL)"), False),
    (version(10, 11, 6, "-MariaDB"), False),
    (version(11, 4, 2, "", "MariaDB Server"), False),
])
def test_uses_initialize_insecure(v, expected):
    assert uses_initialize_insecure(v) is expected


def test_flavor_is_case_insensitive():
    assert version(10, 6, 1, "-mariadb").flavor == "mariadb"
    assert version(8, 0, 1, "", "PERCONA server").flavor == "percona"


# ---------------------------------------------------------------- CodeTree

def test_codetree_initializer():
    assert CodeTree("/x", version=version(8, 0, 36)).initializer() == "initialize-insecure"
    assert CodeTree("/x", version=version(10, 11, 1, "-MariaDB")).initializer() == "install-db"
    assert CodeTree("/x", version=version(5, 6, 51)).initializer() == "install-db"
    assert CodeTree("/x").initializer() == "install-db"


def test_codetree_tool_missing_names_what_was_searched():
    tree = CodeTree("/opt/mysql", searched={"xtrabackup": ["/opt/mysql/bin/xtrabackup",
                                                           "/opt/mysql/sbin/xtrabackup"]})
    with pytest.raises(CodeTreeError) as info:
        tree.tool("xtrabackup")
    msg = str(info.value)
    assert "xtrabackup" in msg
    assert "/opt/mysql/bin/xtrabackup" in msg
    assert "/opt/mysql/sbin/xtrabackup" in msg


def test_codetree_tool_missing_without_search_record_names_basedir_and_all_names():
    with pytest.raises(CodeTreeError) as info:
        CodeTree("/opt/mysql").tool("dump")
    msg = str(info.value)
    assert "mariadb-dump/mysqldump" in msg
    assert "/opt/mysql" in msg


def test_codetree_tool_present_and_clientbindir():
    tree = CodeTree("/b", tools={"client": "/b/bin/mysql", "server": "/b/sbin/mysqld"})
    assert tree.tool("client") == "/b/bin/mysql"
    assert tree.server == "/b/sbin/mysqld"
    assert tree.clientbindir == "/b/bin"
    assert CodeTree("/b").clientbindir == ""


# ---------------------------------------------------------------- discover

def make_fake_mysqld(path, line=MYSQL8):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{line}'\n")
    path.chmod(0o755)
    return path


def test_discover_fake_mysql8_tree(tmp_path):
    server = make_fake_mysqld(tmp_path / "bin" / "mysqld")
    tree = discover(str(tmp_path))
    assert tree.basedir == str(tmp_path)
    assert tree.server == str(server)
    assert tree.version.flavor == "mysql"
    assert tree.version.version == "8.0.36"
    assert tree.initializer() == "initialize-insecure"
    assert "install_db" not in tree.tools


def test_discover_prefers_tree_over_path_for_server(tmp_path, monkeypatch):
    server = make_fake_mysqld(tmp_path / "tree" / "sql" / "mysqld")
    monkeypatch.setenv("PATH", "/usr/sbin:/usr/bin:/bin")
    tree = discover(str(tmp_path / "tree"))
    assert tree.server == str(server)


def test_discover_ignores_non_executable_server(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "mysqld").write_text("#!/bin/sh\necho hi\n")
    (tmp_path / "bin" / "mysqld").chmod(0o644)
    if os.access(tmp_path / "bin" / "mysqld", os.X_OK):
        pytest.skip("running with privileges that make every file executable")
    with pytest.raises(CodeTreeError, match="no server binary"):
        discover(str(tmp_path))


def test_discover_unreadable_version_raises(tmp_path):
    make_fake_mysqld(tmp_path / "bin" / "mysqld", line="hello")
    with pytest.raises(CodeTreeError, match="cannot read the server version"):
        discover(str(tmp_path))


def test_discover_tool_overrides(tmp_path):
    make_fake_mysqld(tmp_path / "bin" / "mysqld")
    tree = discover(str(tmp_path), tool_overrides={"xtrabackup": "/opt/xb/xtrabackup", "dump": ""})
    assert tree.tool("xtrabackup") == "/opt/xb/xtrabackup"


def test_discover_missing_xtrabackup(tmp_path, monkeypatch):
    make_fake_mysqld(tmp_path / "tree" / "bin" / "mysqld")
    empty = tmp_path / "emptypath"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    tree = discover(str(tmp_path / "tree"))
    with pytest.raises(CodeTreeError) as info:
        tree.tool("xtrabackup")
    msg = str(info.value)
    assert "xtrabackup" in msg
    assert os.path.join(str(tmp_path / "tree"), "bin", "xtrabackup") in msg
    assert os.path.join(str(empty), "xtrabackup") in msg


@needs_system_mariadb
def test_discover_fake_mariadb_tree_with_symlinks(tmp_path):
    (tmp_path / "sbin").mkdir()
    (tmp_path / "bin").mkdir()
    os.symlink(SYSTEM_SERVER, tmp_path / "sbin" / "mariadbd")
    os.symlink(SYSTEM_INSTALL_DB, tmp_path / "bin" / "mariadb-install-db")
    tree = discover(str(tmp_path))
    assert tree.server == str(tmp_path / "sbin" / "mariadbd")
    assert tree.tool("install_db") == str(tmp_path / "bin" / "mariadb-install-db")
    assert tree.version.flavor == "mariadb"
    assert tree.initializer() == "install-db"


@pytest.mark.parametrize("line", [MARIADB, MYSQL56])
def test_discover_without_initialiser_raises_when_install_db_is_needed(tmp_path, line):
    make_fake_mysqld(tmp_path / "bin" / "mysqld", line=line)
    with pytest.raises(CodeTreeError) as info:
        discover(str(tmp_path))
    msg = str(info.value)
    assert "mariadb-install-db" in msg and "mysql_install_db" in msg
    assert str(tmp_path / "bin") in msg


def test_discover_fake_mysql56_tree_with_install_db(tmp_path):
    make_fake_mysqld(tmp_path / "bin" / "mysqld", line=MYSQL56)
    install_db = make_fake_mysqld(tmp_path / "scripts" / "mysql_install_db", line="unused")
    tree = discover(str(tmp_path))
    assert tree.initializer() == "install-db"
    assert tree.tool("install_db") == str(install_db)


def test_discover_empty_basedir_raises(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "sbin").mkdir()
    with pytest.raises(CodeTreeError) as info:
        discover(str(tmp_path))
    msg = str(info.value)
    assert "mariadbd" in msg and "mysqld" in msg
    assert str(tmp_path / "bin") in msg
    assert str(tmp_path / "sbin") in msg


def test_discover_bare_empty_basedir_names_it(tmp_path):
    with pytest.raises(CodeTreeError) as info:
        discover(str(tmp_path))
    assert str(tmp_path) in str(info.value)


def test_discover_server_on_path_only_is_not_used(tmp_path, monkeypatch):
    pathdir = tmp_path / "pathdir"
    make_fake_mysqld(pathdir / "mysqld")
    (tmp_path / "tree").mkdir()
    monkeypatch.setenv("PATH", str(pathdir))
    with pytest.raises(CodeTreeError, match="no server binary"):
        discover(str(tmp_path / "tree"))


def test_discover_non_directory_basedir_raises(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(CodeTreeError, match="not a directory"):
        discover(str(f))
    with pytest.raises(CodeTreeError, match="not a directory"):
        discover(str(tmp_path / "missing"))


def test_find_tool_reports_candidates(tmp_path):
    (tmp_path / "bin").mkdir()
    path, searched = find_tool(str(tmp_path), ("a", "b"))
    assert path is None
    assert searched == [str(tmp_path / "bin" / "a"), str(tmp_path / "bin" / "b"),
                        str(tmp_path / "a"), str(tmp_path / "b")]


@pytest.mark.skipif(not os.access(SYSTEM_SERVER, os.X_OK), reason="system MariaDB not installed")
def test_discover_usr():
    tree = discover("/usr")
    assert tree.server in ("/usr/sbin/mariadbd", "/usr/sbin/mysqld", "/usr/bin/mariadbd",
                           "/usr/bin/mysqld")
    for key in ("client", "dump", "install_db"):
        assert os.access(tree.tool(key), os.X_OK), key
    assert tree.tool("install_db").startswith("/usr/")
    assert tree.version.flavor == "mariadb"
    assert tree.initializer() == "install-db"


# ---------------------------------------------------------------- several trees
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
    assert cfg.servers.basedir == "/usr" and cfg.servers.extra_basedirs == ["/opt/old"]
    cfg = config_from_args([])
    assert cfg.servers.basedir == "/usr" and cfg.servers.extra_basedirs == []


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


def test_server_version_is_cached_per_binary(tmp_path, monkeypatch):
    """The second read of one binary's version runs nothing; a rewritten binary (another
    identity) is asked again; no cache without a RAM tree that is ours."""
    from lib.platform.workdir import user_shm_root
    from lib.servers import codetree
    monkeypatch.setenv("KEWPIE_SHM_ROOT", str(tmp_path / "shm"))
    os.makedirs(tmp_path / "shm")
    server = make_fake_mysqld(tmp_path / "bin" / "mysqld")
    calls = []
    real_run_tool = codetree.run_tool
    monkeypatch.setattr(codetree, "run_tool", lambda argv, **kw: calls.append(argv) or
                        real_run_tool(argv, **kw))
    assert codetree.version_cache_file(server) is None  # no RAM tree yet: nothing kept
    assert codetree.read_server_version(server).version == "8.0.36"
    os.makedirs(os.path.join(user_shm_root(), "cache"), mode=0o711)
    for _ in range(2):
        assert codetree.read_server_version(server).version == "8.0.36"
    assert len(calls) == 2   # the first read without a cache, the second filled it
    os.unlink(server)
    make_fake_mysqld(tmp_path / "bin" / "mysqld", line=MARIADB)
    assert codetree.read_server_version(server).flavor == "mariadb"
    assert len(calls) == 3
    cached = codetree.version_cache_file(server)
    with open(cached, "w") as fh:   # an unreadable entry: the binary is asked again
        fh.write("garbage")
    assert codetree.read_server_version(server).flavor == "mariadb"
    assert len(calls) == 4
    os.chmod(os.path.join(user_shm_root(), "cache"), 0o777)   # writable by others: unused
    assert codetree.version_cache_file(server) is None
