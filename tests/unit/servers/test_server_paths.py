"""Server file layout: vardir tree, socket fallback for long paths, my.cnf contents.

Covers: lib/servers/layout.py, lib/servers/server.py, lib/servers/cnf_rules.py
"""
import os

from lib.servers.codetree import CodeTree, ServerVersion
from lib.servers.options import parse_options
from lib.platform.ports import PortLease
from lib.servers.server import Server, ServerSettings, write_files


def _server(vardir, tmp_path, options=()):
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd"},
                    version=ServerVersion("10.11.19", "-MariaDB", "debian-linux-gnu", "x86_64", "Debian 12"))
    lease = PortLease(first=47200, size=4, lock_path=str(tmp_path / "l.lock"), fd=-1)
    settings = ServerSettings(user=None, env={}, die_with_parent=True,
                              socket_fallback_dir=str(tmp_path / "sock"))
    return Server("s0", 0, tree, str(vardir), lease, parse_options(list(options)), settings)


def test_layout_under_vardir(tmp_path):
    s = _server(tmp_path / "var_s0", tmp_path)
    assert s.paths.datadir == str(tmp_path / "var_s0" / "data")
    assert s.paths.pid_file.endswith("var_s0/run/my.pid")
    assert s.paths.error_log.endswith("var_s0/log/error.log")
    assert s.paths.socket_file == str(tmp_path / "var_s0" / "my.sock")
    assert s.port == 47200


def test_long_vardir_falls_back_to_short_socket(tmp_path):
    deep = tmp_path / ("x" * 60) / ("y" * 60) / "var_s0"
    s = _server(deep, tmp_path)
    assert s.paths.socket_file == str(tmp_path / "sock" / "kw-47200.sock")
    assert len(s.paths.socket_file) < 108


def test_cnf_binds_loopback_and_suite_options_come_last(tmp_path):
    s = _server(tmp_path / "var_s0", tmp_path, ["--max-connections=77", "--innodb-log-file-size=32M"])
    write_files(s)
    text = open(s.paths.cnf_path).read()
    assert "bind-address=127.0.0.1" in text
    assert "port=47200" in text
    assert "max-connections=77" in text
    assert "innodb-log-file-size=32M" in text and "innodb-log-file-size=16M" not in text
    assert not os.stat(s.paths.cnf_path).st_mode & 0o002
