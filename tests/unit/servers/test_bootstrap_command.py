"""Unit tests for lib/servers/bootstrap.py: the bootstrap command line and the template cache key.

Covers: lib/servers/bootstrap.py
"""
import os

import pytest

from lib.servers.bootstrap import BootstrapCache
from lib.servers.codetree import CodeTree, ServerVersion
from lib.errors import CodeTreeError
from lib.servers.options import Option

MYSQL8 = ServerVersion(version="8.0.36", suffix="", compile_os="Linux", platform="x86_64",
                       comment="MySQL Community Server - GPL")
MARIADB = ServerVersion(version="10.11.19", suffix="-MariaDB-0+deb12u1",
                        compile_os="debian-linux-gnu", platform="x86_64", comment="Debian 12")
MYSQL56 = ServerVersion(version="5.6.51", suffix="", compile_os="Linux", platform="x86_64",
                        comment="MySQL Community Server (GPL)")


def make_tree(tmp_path, version, with_install_db=True):
    basedir = tmp_path / "base"
    (basedir / "bin").mkdir(parents=True, exist_ok=True)
    server = basedir / "bin" / "mysqld"
    server.write_bytes(b"\x7fELF fake server binary")
    tools = {"server": str(server)}
    if with_install_db:
        tools["install_db"] = str(basedir / "bin" / "mysql_install_db")
    return CodeTree(basedir=str(basedir), tools=tools, version=version)


def make_cache(tmp_path, tree, user=None):
    return BootstrapCache(str(tmp_path / "cache"), tree, user)


# ---------------------------------------------------------------- _command

def test_mysql8_command(tmp_path):
    tree = make_tree(tmp_path, MYSQL8)
    cache = make_cache(tmp_path, tree)
    data = str(tmp_path / "data")
    argv = cache._command(data, [Option("innodb-page-size", "64k")])
    assert argv[0] == tree.server
    assert argv[1] == "--no-defaults"  # must come first for mysqld
    assert "--initialize-insecure" in argv
    assert f"--datadir={data}" in argv
    assert f"--basedir={tree.basedir}" in argv
    assert argv[-1] == "--innodb-page-size=64k"
    # no server user: as kewpie itself (--user=root only when that is root: mysqld insists)
    expected = ["--user=root"] if os.geteuid() == 0 else []
    assert [a for a in argv if a.startswith("--user=")] == expected
    assert not any("auth-root" in a for a in argv)


def test_mysql8_command_with_user(tmp_path):
    cache = make_cache(tmp_path, make_tree(tmp_path, MYSQL8), user="mysql")
    argv = cache._command("/d", [])
    assert "--user=mysql" in argv
    assert argv.index("--user=mysql") > argv.index("--initialize-insecure")


def test_mariadb_command(tmp_path):
    tree = make_tree(tmp_path, MARIADB)
    cache = make_cache(tmp_path, tree, user="mysql")
    argv = cache._command("/d", [Option("lower-case-table-names", "1"),
                                 Option("innodb-checksum-algorithm", "crc32", loose=True)])
    assert argv[0] == tree.tools["install_db"]
    assert argv[1] == "--no-defaults"
    assert "--datadir=/d" in argv
    assert f"--basedir={tree.basedir}" in argv
    assert "--auth-root-authentication-method=normal" in argv
    assert "--skip-test-db" in argv
    assert "--force" in argv
    assert "--user=mysql" in argv
    assert "--initialize-insecure" not in argv
    assert argv[-2:] == ["--lower-case-table-names=1", "--loose-innodb-checksum-algorithm=crc32"]


def test_unknown_version_is_treated_like_mariadb(tmp_path):
    cache = make_cache(tmp_path, make_tree(tmp_path, None))
    argv = cache._command("/d", [])
    assert argv[0].endswith("mysql_install_db")
    assert "--auth-root-authentication-method=normal" in argv


def test_mysql56_uses_install_db_without_mariadb_flags(tmp_path):
    tree = make_tree(tmp_path, MYSQL56)
    argv = make_cache(tmp_path, tree)._command("/d", [])
    assert argv[0] == tree.tools["install_db"]
    assert "--initialize-insecure" not in argv
    assert not any("auth-root" in a for a in argv)


def test_mariadb_without_install_db_raises(tmp_path):
    cache = make_cache(tmp_path, make_tree(tmp_path, MARIADB, with_install_db=False))
    with pytest.raises(CodeTreeError, match="mariadb-install-db"):
        cache._command("/d", [])


def test_cache_dir_is_created(tmp_path):
    make_cache(tmp_path, make_tree(tmp_path, MYSQL8))
    assert os.path.isdir(tmp_path / "cache")


# ---------------------------------------------------------------- key

def test_key_is_stable(tmp_path):
    tree = make_tree(tmp_path, MYSQL8)
    opts = [Option("innodb-page-size", "16k")]
    k1 = make_cache(tmp_path, tree).key(opts)
    k2 = make_cache(tmp_path, tree).key(list(opts))
    assert k1 == k2
    assert len(k1) == 16
    int(k1, 16)


def test_key_ignores_option_order(tmp_path):
    cache = make_cache(tmp_path, make_tree(tmp_path, MYSQL8))
    a, b = Option("innodb-page-size", "16k"), Option("lower-case-table-names", "1")
    assert cache.key([a, b]) == cache.key([b, a])


def test_key_changes_with_bootstrap_options(tmp_path):
    cache = make_cache(tmp_path, make_tree(tmp_path, MYSQL8))
    keys = {cache.key([]),
            cache.key([Option("innodb-page-size", "16k")]),
            cache.key([Option("innodb-page-size", "64k")]),
            cache.key([Option("innodb-page-size", "64k", loose=True)]),
            cache.key([Option("innodb-page-size", "64k"), Option("lower-case-table-names", "1")])}
    assert len(keys) == 5


def test_key_changes_when_binary_mtime_changes(tmp_path):
    tree = make_tree(tmp_path, MYSQL8)
    cache = make_cache(tmp_path, tree)
    st = os.stat(tree.server)
    before = cache.key([])
    os.utime(tree.server, (st.st_atime, st.st_mtime - 100))
    after = cache.key([])
    assert before != after
    assert after == cache.key([])


def test_key_changes_when_binary_size_changes(tmp_path):
    tree = make_tree(tmp_path, MYSQL8)
    cache = make_cache(tmp_path, tree)
    st = os.stat(tree.server)
    before = cache.key([])
    with open(tree.server, "ab") as fh:
        fh.write(b"more")
    os.utime(tree.server, (st.st_atime, st.st_mtime))  # same mtime: only the size differs
    assert cache.key([]) != before


def test_key_unchanged_when_only_atime_changes(tmp_path):
    tree = make_tree(tmp_path, MYSQL8)
    cache = make_cache(tmp_path, tree)
    st = os.stat(tree.server)
    before = cache.key([])
    os.utime(tree.server, (st.st_atime - 1000, st.st_mtime))
    assert cache.key([]) == before


def test_key_changes_with_version_initializer_and_user(tmp_path):
    mysql_tree = make_tree(tmp_path, MYSQL8)
    base = make_cache(tmp_path, mysql_tree).key([])
    maria_tree = CodeTree(basedir=mysql_tree.basedir, tools=dict(mysql_tree.tools), version=MARIADB)
    assert make_cache(tmp_path, maria_tree).key([]) != base
    assert make_cache(tmp_path, mysql_tree, user="mysql").key([]) != base


def test_key_changes_with_server_path(tmp_path):
    tree = make_tree(tmp_path, MYSQL8)
    other = tmp_path / "other-mysqld"
    other.write_bytes(open(tree.server, "rb").read())
    st = os.stat(tree.server)
    os.utime(other, (st.st_atime, st.st_mtime))
    moved = CodeTree(basedir=tree.basedir, tools={"server": str(other)}, version=MYSQL8)
    assert make_cache(tmp_path, moved).key([]) != make_cache(tmp_path, tree).key([])


def test_key_changes_with_basedir(tmp_path):
    tree = make_tree(tmp_path, MYSQL8)
    moved = CodeTree(basedir=str(tmp_path), tools=dict(tree.tools), version=MYSQL8)
    assert make_cache(tmp_path, moved).key([]) != make_cache(tmp_path, tree).key([])


def test_key_changes_with_install_db_target(tmp_path):
    tree = make_tree(tmp_path, MARIADB)
    other = CodeTree(basedir=tree.basedir, tools=dict(tree.tools, install_db="/opt/other/install_db"),
                     version=MARIADB)
    assert make_cache(tmp_path, other).key([]) != make_cache(tmp_path, tree).key([])


def test_key_same_for_symlink_to_same_install_db(tmp_path):
    tree = make_tree(tmp_path, MARIADB)
    target = tmp_path / "real_install_db"
    target.write_text("#!/bin/sh\n")
    link = tmp_path / "link_install_db"
    os.symlink(target, link)
    a = CodeTree(basedir=tree.basedir, tools=dict(tree.tools, install_db=str(target)), version=MARIADB)
    b = CodeTree(basedir=tree.basedir, tools=dict(tree.tools, install_db=str(link)), version=MARIADB)
    assert make_cache(tmp_path, a).key([]) == make_cache(tmp_path, b).key([])
