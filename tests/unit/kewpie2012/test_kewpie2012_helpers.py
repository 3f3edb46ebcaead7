"""kewpie 2012's helpers without a server: the sysbench reports' text and arithmetic, the
results database DSN, mail reports (kept in the log directory, or sent through
KEWPIE_SMTP), crash-me's configuration and limits file, where sql-bench is looked for,
2012's working environment, the live server_options list, std_data, get_bzr_info and
server.server_manager.

Covers: lib/kewpie2012/sysbench_report.py, lib/kewpie2012/sysbench_methods.py,
lib/kewpie2012/database_connect.py, lib/kewpie2012/mailing_report.py, lib/kewpie2012/crashme_methods.py,
lib/kewpie2012/sqlbench_methods.py, lib/kewpie2012/context.py, lib/kewpie2012/server_compat.py,
lib/kewpie2012/manager_compat.py, std_data/
"""
import os
from types import SimpleNamespace

import pytest

from lib.platform.ports import PortLease
from lib.servers.codetree import CodeTree, ServerVersion
from lib.servers.options import parse_options
from lib.servers.server import Server, ServerSettings
from lib.kewpie2012 import crashme_methods, mailing_report, sqlbench_methods, sysbench_methods
from lib.kewpie2012.context import SystemManager, working_environment
from lib.kewpie2012.database_connect import Dsn, results_db_connect
from lib.kewpie2012.manager_compat import Kewpie2012Manager
from lib.kewpie2012.server_compat import Kewpie2012Server, ServerWrappers
from lib.kewpie2012.sysbench_report import getSysbenchReport, trend_rows

VERSION = ServerVersion("10.11.19", "-MariaDB", "debian-linux-gnu", "x86_64", "Debian 12")


class Log:
    def __init__(self):
        self.lines = []

    def info(self, text):
        self.lines.append(text)


def _server(tmp_path, options=("--max_connections=77", "--log-bin")):
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd",
                                           "client": "/usr/bin/mariadb",
                                           "dump": "/usr/bin/mariadb-dump"}, version=VERSION)
    lease = PortLease(first=47300, size=4, lock_path=str(tmp_path / "s0.lock"), fd=-1)
    settings = ServerSettings(user=None, env={}, die_with_parent=True,
                              socket_fallback_dir=str(tmp_path / "sock"))
    return Server("s0", 0, tree, str(tmp_path / "var_s0"), lease, parse_options(list(options)),
                  settings)


# ---------------------------------------------------------------- sysbench reports

def test_both_2012_names_are_importable_from_sysbench_methods():
    assert sysbench_methods.getSysbenchReport is getSysbenchReport
    assert callable(sysbench_methods.sysbench_db_analysis)


def test_get_sysbench_report_is_2012s_block():
    run = {"mode": "readonly", "tps": 130.0, "min_req_lat_ms": 1.0, "max_req_lat_ms": 9.0,
           "avg_req_lat_ms": 4.0, "95p_req_lat_ms": 7.0, "rwreqps": 2600.0}
    fetch = {"concurrency": 16, "iteration": 0, "tps": 100.0, "min_req_lat_ms": 1.5,
             "max_req_lat_ms": 9.0, "avg_req_lat_ms": 4.0, "95p_req_lat_ms": 7.0,
             "rwreqps": 2000.0, "deadlocksps": 0.0}
    lines = getSysbenchReport(run, fetch).splitlines()
    assert lines[:6] == ["=" * 30, "  SYSBENCH REGRESSION REPORT", "=" * 30,
                         "CONCURRENCY    :  16", "ITERATIONS     :  1", "MODE           :  readonly"]
    assert "TPS            :  130.000000      30.000000" in lines
    assert "MIN_REQ_LAT_MS :  1.000000      -0.500000" in lines
    assert "DEADLOCKSPS    :  0.000000      0.000000" in lines  # sysbench 1.0 prints none


def test_trend_rows_compare_a_run_with_its_window():
    runs = {1: {16: [100.0, 110.0]}, 2: {16: [120.0]}, 3: {16: [130.0, 130.0], 32: [50.0]}}
    assert trend_rows(runs, 3, None) == [
        ("16", "130.00", "+10.17%", "12.00", "100.00", "130.00", "118.00", "11.66"),
        ("32", "50.00", "+0.00%", "0.00", "50.00", "50.00", "50.00", "0.00")]
    assert trend_rows(runs, 3, 1)[0][:3] == ("16", "130.00", "+0.00%")
    assert trend_rows(runs, 2, 5)[0][:3] == ("16", "120.00", "+9.09%")  # later runs ignored


def test_dsn_strings():
    assert Dsn.parse("127.0.0.1:root::results:3306") == Dsn("127.0.0.1", "root", "", "results", 3306)
    assert Dsn.parse("db:qa:p:w:d:bench:3307").password == "p:w:d"
    for bad in ("127.0.0.1:root:results:3306", "h:u:p:db:port"):
        with pytest.raises(ValueError, match="host:user:password:database:port"):
            Dsn.parse(bad)
    with pytest.raises(ValueError, match="operation 'update'"):
        results_db_connect("h:u::db:1", "update", "SELECT 1")


# ---------------------------------------------------------------- mail reports

def test_without_a_mail_server_the_report_is_kept(tmp_path, monkeypatch):
    monkeypatch.delenv(mailing_report.SMTP_ENV, raising=False)
    executor = SimpleNamespace(logdir=str(tmp_path), logging=Log())
    path = mailing_report.sendMail(executor, "a@x, b@y", "line 1\nTPS: 1.0 ±")
    assert path == str(tmp_path / "mail_report.txt")
    text = open(path).read()
    assert "To: a@x, b@y\nSubject: kewpie report\n\nline 1\nTPS: 1.0 ±\n" in text
    assert mailing_report.kewpieSendMail(executor, ["c@z"], "again") == path
    assert open(path).read().count("Subject: kewpie report") == 2
    assert "set KEWPIE_SMTP=host[:port] to mail it" in executor.logging.lines[0]


def test_with_kewpie_smtp_the_report_is_sent(tmp_path, monkeypatch):
    sent = []

    class FakeSMTP:
        def __init__(self, host, port, timeout):
            sent.append((host, port, timeout))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def send_message(self, mail):
            sent.append(mail)

    monkeypatch.setattr(mailing_report.smtplib, "SMTP", FakeSMTP)
    monkeypatch.setenv(mailing_report.SMTP_ENV, "127.0.0.1:2525")
    monkeypatch.setenv(mailing_report.FROM_ENV, "qa@example.com")
    executor = SimpleNamespace(logdir=str(tmp_path), logging=Log())
    assert mailing_report.sendMail(executor, "dev@example.com", "report") == ""
    assert sent[0] == ("127.0.0.1", 2525, mailing_report.SMTP_TIMEOUT)
    assert (sent[1]["From"], sent[1]["To"]) == ("qa@example.com", "dev@example.com")
    assert sent[1].get_content().strip() == "report"
    assert not os.path.exists(tmp_path / "mail_report.txt")
    assert mailing_report.smtp_server("mail.example.com") == ("mail.example.com", 25)


# ---------------------------------------------------------------- sql-bench, crash-me

def test_crashme_config_and_limits_file(tmp_path):
    system = SimpleNamespace(workdir=str(tmp_path))
    path = crashme_methods.prepare_config(SimpleNamespace(system_manager=system))
    assert open(path).read().splitlines() == list(crashme_methods.CONFIG_LINES)
    (tmp_path / "limits").mkdir()
    limits = tmp_path / "limits" / "mysql.cfg"
    limits.write_text("a=yes\nfunc_x=error # X\n# why\n# more\nb=no\nc=error\n")
    output = "Running crash-me 1.61\n\nUsing limits file: limits/mysql.cfg\nrest: x.cfg\n"
    assert crashme_methods.limits_file(output, str(tmp_path)) == str(limits)
    assert crashme_methods.limits_file("nothing: here\n", str(tmp_path)) is None
    assert crashme_methods.error_entries(str(limits)) == ["func_x=error # X", "# why", "# more",
                                                         "c=error"]


def test_sqlbench_is_looked_for_in_the_working_environment_first(tmp_path, monkeypatch):
    monkeypatch.delenv("SQLBENCH_DIR", raising=False)
    home = tmp_path / "sql-bench"
    home.mkdir()
    (home / "run-all-tests").write_text("#!/bin/sh\n")
    system = SimpleNamespace(testdir=str(tmp_path / "nowhere"), code_tree=None)
    executor = SimpleNamespace(system_manager=system, working_environment={})
    assert sqlbench_methods.find_sqlbench(executor) is None
    assert sqlbench_methods.execute_sqlbench("x", executor, []) == \
        ("fail", 1, sqlbench_methods.missing_line())
    assert crashme_methods.execute_crashme("x", executor, []) == \
        ("fail", 1, sqlbench_methods.missing_line())
    executor.working_environment["SQLBENCH_DIR"] = str(home)
    assert sqlbench_methods.find_sqlbench(executor) == str(home)


def test_working_environment_has_2012s_variables(tmp_path, monkeypatch):
    monkeypatch.delenv("SQLBENCH_DIR", raising=False)
    wrapper = Kewpie2012Server(_server(tmp_path))
    system = SystemManager(str(tmp_path / "wd"), str(tmp_path), None)
    env = working_environment(system, [wrapper], "bot0")
    assert env["MASTER_MYPORT"] == "47300" and env["MASTER_MYSOCK"] == wrapper.socket_file
    assert env["MYSQL_TEST_WORKDIR"] == str(tmp_path / "wd")
    assert env["SQLBENCH_DIR"] == str(tmp_path / "sql-bench")
    assert env["MYSQLTEST_VARDIR"] == wrapper.vardir and env["EXE_MYSQL"] == "/usr/bin/mariadb"
    assert env["MYSQL_DUMP"].startswith("/usr/bin/mariadb-dump --no-defaults --user=root")
    assert "--port=47300" in env["MYSQL"] and "MYSQL_UPGRADE" not in env
    assert env["PATH"] == os.environ["PATH"] and "BOT0_S0" not in env


# ---------------------------------------------------------------- the server's 2012 names

def test_server_options_is_one_live_list(tmp_path):
    server = _server(tmp_path)
    wrapper = Kewpie2012Server(server)
    options = wrapper.server_options
    assert options == ["--max_connections=77", "--log-bin"]  # as the suite wrote them
    assert wrapper.server_options is options
    options.append("--innodb-file-per-table")
    assert wrapper.server_options is options  # not rebuilt until the server's options change
    server.user_options = parse_options(["--log-bin"])  # a modern restart(options=...)
    assert wrapper.server_options == ["--log-bin"]
    wrapper.server_options = ["--log-bin", "--max-connections=5"]
    assert wrapper.server_options == ["--log-bin", "--max-connections=5"]
    unchanged = Kewpie2012Server(server)
    before = server.user_options
    unchanged.server_options  # read, not changed: nothing to apply
    unchanged.apply_server_options()
    assert server.user_options is before


def test_std_data_bzr_info_and_server_manager(tmp_path):
    wrappers = ServerWrappers()
    wrapper = wrappers.wrap(_server(tmp_path))
    assert os.path.isfile(os.path.join(wrapper.std_data, "bug723097.sql"))
    sql = open(os.path.join(wrapper.std_data, "bug723097.sql"), encoding="utf-8").read()
    assert "CREATE TABLE `messages`" in sql and "CHARSET=greek" in sql
    assert wrapper.get_bzr_info() == (0, "10.11.19-MariaDB Debian 12")
    assert wrapper.server_manager is None
    manager = Kewpie2012Manager(SimpleNamespace(servers=[]), wrappers)
    assert wrapper.server_manager is manager
    with pytest.raises(FileNotFoundError, match="load_datadir: no folder"):
        manager.load_datadir("no_such_datadir", wrapper)
