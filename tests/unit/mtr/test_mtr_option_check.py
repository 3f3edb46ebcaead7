"""Issue 27: mysql-test cases' server options under the option-safety rules
(lib/mtr/option_check.py), with mtr's placeholders resolved first.

Covers: lib/mtr/option_check.py
"""
from __future__ import annotations

import pytest

from lib.mtr.cnf import MtrConfig
from lib.mtr.config import expand_env
from lib.mtr.option_check import CaseBounds, case_problem, long_form, server_problem
from lib.mtr.options import loopback_only, to_options
from lib.servers.option_catalog import OptionCatalog

VARDIR = "/work/wd/bot1"
MTR_ROOT = "/usr/share/mysql/mysql-test"
SUITE = MTR_ROOT + "/suite/rpl"
PLUGINS = "/usr/lib/mysql/plugin"
CATALOG = OptionCatalog("mariadbd", frozenset({
    "port", "extra-port", "bind-address", "datadir", "tmpdir", "socket", "pid-file",
    "log-error", "general-log", "general-log-file", "slow-query-log-file", "log-bin",
    "log-basename", "relay-log", "slave-load-tmpdir", "secure-file-priv", "init-file",
    "plugin-dir", "plugin-load", "plugin-load-add", "basedir", "innodb-data-file-path",
    "wsrep-provider", "wsrep-provider-options", "wsrep-cluster-address", "wsrep-notify-cmd",
    "wsrep-sst-receive-address", "wsrep-node-incoming-address", "report-port", "report-host",
    "character-sets-dir", "ssl-ca", "debug", "max-connections", "lc-messages-dir",
    "aria-log-dir-path", "innodb-log-group-home-dir"}))
BOUNDS = CaseBounds(vardir=VARDIR, ports=frozenset({9300, 9301, 9302, 9303, 9304, 9305}),
                    sockets=frozenset({"/dev/shm/kewpie-0/kw-9300.sock"}),
                    plugin_dirs=(PLUGINS,), inputs=(MTR_ROOT, SUITE, "/usr/share/mariadb"),
                    providers=("/usr/lib/galera/libgalera_smm.so",), basedir="/usr")
ENV = {"MYSQLTEST_VARDIR": VARDIR, "MYSQL_TMP_DIR": VARDIR + "/tmp", "MYSQL_TEST_DIR": MTR_ROOT,
       "MTR_SUITE_DIR": SUITE, "ESCAPE": "/tmp/escape"}


def problem(*args: str) -> str | None:
    """The check over one server given .opt-style arguments ($VARs expanded as mtr does)."""
    options = loopback_only(to_options([expand_env(a, ENV) for a in args]))
    return server_problem(options, CATALOG, BOUNDS)


@pytest.mark.parametrize("arg", [
    "--general-log-file=$MYSQLTEST_VARDIR/log/master.log",
    "--general-log-file=general.log", "--log-bin=master-bin", "--log-basename=master",
    "--tmpdir=$MYSQL_TMP_DIR", "--tmpdir=$MYSQLTEST_VARDIR//tmp",
    "--relay-log-index=$MYSQLTEST_VARDIR/tmp/something-relay.index",
    "--loose-aria-log-dir-path=$MYSQLTEST_VARDIR/tmp", "--datadir=$MYSQLTEST_VARDIR/mysqld.1/data",
    "--pid-file=$MYSQLTEST_VARDIR/run/mysqld.1.pid", "--socket=/dev/shm/kewpie-0/kw-9300.sock",
    "--innodb-data-file-path=ibdata1:10M:autoextend",
    "--init-file=$MYSQL_TEST_DIR/std_data/init.sql", "--ssl-ca=/etc/ssl/anywhere.pem",
    "--character-sets-dir=$MYSQL_TEST_DIR/std_data/ldml/",
    "--secure-file-priv=$MYSQL_TEST_DIR", "--secure-file-priv=$MYSQL_TMP_DIR",
    "--secure-file-priv=NULL",
    "--loose-file-key-management-filename=$MYSQL_TEST_DIR/std_data/keys.txt",
    "--loose-file-key-management-filekey=FILE:$MTR_SUITE_DIR/filekeys-data.key",
    "--plugin-dir=$MYSQL_TMP_DIR", "--plugin-dir=/usr/lib/mysql/plugin",
    "--plugin-load-add=file_key_management.so", "--plugin-load=EXAMPLE=ha_example.so",
    "--port=9300", "--port=9301", "--extra-port=0", "--extra-port=9302",
    "--bind-address=127.0.0.1", "--bind-address=::1,127.0.0.1", "--bind-address=0.0.0.0",
    "--report-host=127.0.0.1", "--report-port=3306", "--skip-log-bin", "--general-log",
    "--max-connections=77", "--basedir=/usr", "--wsrep-provider=none",
    "--wsrep-provider=/usr/lib/galera/libgalera_smm.so",
    "--wsrep-cluster-address=not empty but invalid",
    "--wsrep-cluster-address=gcomm://127.0.0.1:9303",
    "--wsrep-provider-options=base_port=9303;gmcast.listen_addr=tcp://127.0.0.1:9303",
    "--wsrep-sst-receive-address=127.0.0.1:9304",
    "--wsrep-notify-cmd=$MYSQL_TEST_DIR/std_data/wsrep_notify.sh", "--wsrep-notify-cmd=/usr/bin/true",
    "--debug=d,info", "-V10.2.1-MariaDB",
])
def test_what_real_mysql_test_cases_use_is_accepted(arg):
    assert problem(arg) is None


@pytest.mark.parametrize("arg, words", [
    ("--general-log-file=$ESCAPE/general.log", "/tmp/escape/general.log is outside the case's vardir"),
    ("--general-log-f=/tmp/x", "resolves to --general-log-file=/tmp/x"),
    ("--loose-slow-query-log-file=/tmp/slow", "outside the case's vardir"),
    ("--log-error=/var/log/x.err", "outside"), ("--log-bin=/tmp/bin", "outside"),
    ("--datadir=/var/lib/mysql", "outside"), ("--pid-file=/run/x.pid", "outside"),
    ("--socket=/tmp/mysql.sock", "outside"), ("--tmpdir=$MYSQL_TMP_DIR:/tmp", "/tmp is outside"),
    ("--slave-load-tmpdir=../../../error", "climbs out of the case's vardir"),
    ("--general-log-file=$MYSQLTEST_VARDIR/../escape.log", "outside"),
    ("--innodb-data-file-path=/tmp/ibdata1:10M", "outside"),
    ("--debug=d:t:o,/tmp/trace", "outside"), ("--slow-query-log-file=~/s", "home directory"),
    ("-h/var/lib/mysql", "outside"),
    ("--port=3306", "port 3306, which kewpie did not lease"), ("-P3306", "port 3306"),
    ("--port=0", "3306"), ("--extra-port=3307", "port 3307"),
    ("--loose-handlersocket-port=9999", "9999"),
    ("--bind-address=192.168.0.1", "not a loopback address"),
    ("--skip-bind-address", "every interface"),
    ("--wsrep-sst-receive-address=AUTO", "automatic address"),
    ("--wsrep-sst-receive-address=127.0.0.1:4444", "port 4444"),
    ("--wsrep-node-incoming-address=0.0.0.0:9300", "not a loopback"),
    ("--wsrep-cluster-address=gcomm://10.0.0.1:4567", "points off this machine"),
    ("--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:4567", "port 4567"),
    ("--wsrep-provider-options=base_port=4567", "port 4567"),
    ("--wsrep-provider-options=gcache.dir=/tmp", "outside"),
    ("--wsrep-provider=/tmp/evil.so", "not the Galera library"),
    ("--plugin-load-add=x=/tmp/evil.so", "plugins load from the server's plugin directory"),
    ("--plugin-load=handlersocket.so", "opens its own TCP listeners"),
    ("--plugin-dir=/tmp/plugins", "not the server's plugin directory"),
    ("--secure-file-priv=/tmp", "neither in the case's vardir"),
    ("--loose-some-plugin-file=/tmp/data", "neither in the case's vardir"),
    ("--basedir=/opt/other", "not the code tree under test"),
    ("--wsrep-notify-cmd=/tmp/notify.sh", "neither in the case's vardir"),
    ("--wsrep-notify-cmd=/usr/bin/true;touch /tmp/x", "a command line"),
])
def test_writes_listeners_and_plugins_outside_the_bounds_are_refused(arg, words):
    found = problem(arg)
    assert found is not None and words in found, found


def test_a_refusal_names_the_option_as_written_and_resolved():
    found = problem("--loose-general_log_file=$ESCAPE/g.log")
    assert found.startswith("server option '--loose-general_log_file=/tmp/escape/g.log' "
                            "resolves to --loose-general-log-file=/tmp/escape/g.log: ")


def test_relative_paths_start_in_the_servers_datadir():
    assert problem("--datadir=$MYSQLTEST_VARDIR/mysqld.2/data", "--log-bin=../../x") is None
    assert "climbs out" in problem("--datadir=$MYSQLTEST_VARDIR/mysqld.2/data",
                                   "--log-bin=../../../x")


def test_the_last_checked_server_is_named():
    servers = [to_options(["--port=9300"]), to_options(["--port=9301", "--port=3306"])]
    assert case_problem(servers, CATALOG, BOUNDS).startswith("mysqld.2: server option '--port=3306'")
    assert case_problem(servers[:1], CATALOG, BOUNDS) == ""


def test_config_references_are_resolved_before_the_check(tmp_path):
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld.1]\nport=9300\n[mysqld.2]\nport=9301\n"
                   "report-port=@mysqld.1.port\nextra-port=@mysqld.1.port\n"
                   "[mysqld.3]\nport=3306\n[ENV]\nSERVER_MYPORT_1=@mysqld.1.port\n")
    config = MtrConfig.read(str(cnf))
    config.resolve()
    second = to_options(config.server_options("mysqld.2"))
    assert ("extra-port", "9300") in [(o.name, o.value) for o in second]
    assert server_problem(second, CATALOG, BOUNDS) is None  # another server's leased port
    third = to_options(config.server_options("mysqld.3"))
    assert "port 3306" in server_problem(third, CATALOG, BOUNDS)


def test_short_options_are_judged_as_their_long_forms():
    assert long_form(to_options(["-P3306"], defaults=False)[0]).name == "port"
    assert long_form(to_options(["-h/x"], defaults=False)[0]).value == "/x"
    assert long_form(to_options(["-V10.2.1"], defaults=False)[0]).name == "-V10.2.1"


def test_restart_protocol_options_are_checked_too():
    """A test's ``restart: --opt`` (the restart protocol) is checked against the case's
    bounds before the server starts again; refused, the server stays down."""
    from types import SimpleNamespace

    from lib.errors import UnsafeOptionError
    from lib.modes.mtr.lane import MtrLane

    started = []
    server = SimpleNamespace(name="s0", user_options=to_options(["--port=9300"]),
                             start=lambda: started.append(list(server.user_options)))
    lane = SimpleNamespace(originals={}, case_bounds=BOUNDS,
                           plan=SimpleNamespace(catalog=CATALOG))
    MtrLane._restart_server(lane, server, ["--general-log-file=/work/wd/bot1/log/x.log"])
    assert started and started[-1][-1].value == "/work/wd/bot1/log/x.log"
    with pytest.raises(UnsafeOptionError, match="restart: server option.*outside the case's vardir"):
        MtrLane._restart_server(lane, server, ["--general-log-file=/tmp/escape/x.log"])
    with pytest.raises(UnsafeOptionError, match="port 3306"):
        MtrLane._restart_server(lane, server, ["--port=3306"])
    assert len(started) == 1
    MtrLane._restart_server(lane, server, None)  # plain restart: the case's own options
    assert [o.value for o in started[-1]] == [o.value for o in to_options(["--port=9300"])]
