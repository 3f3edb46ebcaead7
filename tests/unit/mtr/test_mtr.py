"""lib/mtr's pure logic: mtr configs, .opt splitting, names, result files, bootstrap SQL,
option order, warnings patterns.

Covers: lib/mtr/cnf.py, lib/mtr/config.py, lib/mtr/options.py, lib/mtr/cases.py,
lib/mtr/bootstrap.py, lib/mtr/warnings.py
"""
import os

import pytest

from lib.errors import UsageError
from lib.mtr.bootstrap import sql_to_bootstrap
from lib.mtr.cases import Collector, opts_from_file, parse_disabled, split_name
from lib.mtr.cnf import MtrConfig
from lib.mtr.config import expand_env, server_option_args
from lib.mtr.options import to_options
from lib.mtr.warnings import WarningScanner, read_pattern_lists
from tests.conftest import ROOT

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "mtr", "kw_mtr")


def _write(path, text):
    path.write_text(text)
    return str(path)


def test_config_include_groups_magic_and_references(tmp_path):
    _write(tmp_path / "base.cnf", "[mysqld]\nlog-basename=mysqld\nplugin-load-add=a.so\n"
                                  "[mysqld.1]\n#!run-master-sh\n")
    cnf = _write(tmp_path / "test.cnf",
                 "!include base.cnf\n[mysqld]\nplugin-load-add=b.so\nkey_buffer_size = 1M\n"
                 "[mysqld.1]\nport=1234\n[mysqld.2]\nmaster-port=@mysqld.1.port\n"
                 "[ENV]\nMASTER_MYPORT= @mysqld.1.port\nX='quoted'\n")
    config = MtrConfig.read(cnf)
    config.resolve()
    assert [g.name for g in config.servers()] == ["mysqld.1", "mysqld.2"]
    assert config.group("mysqld.2").value("master-port") == "1234"
    assert config.env()["MASTER_MYPORT"] == "1234"
    assert config.env()["X"] == "quoted"
    assert config.group("mysqld.1").has("#!run-master-sh")
    # plugin-load-add repeats; other options keep their first position
    assert config.server_options("mysqld.1") == [
        "--log-basename=mysqld", "--plugin-load-add=a.so", "--plugin-load-add=b.so",
        "--key_buffer_size=1M", "--port=1234"]
    assert "[ENV]" not in config.render() and "#!run-master-sh" in config.render()


def test_opt_file_splitting_keeps_quoted_spaces(tmp_path):
    opt = _write(tmp_path / "t.opt", "--a=1 --b='x y'\n  --init-connect=\"set @a=1\"  \n")
    assert opts_from_file(opt) == ["--a=1", "--b=x y", "--init-connect=set @a=1"]


def test_names_and_disabled(tmp_path):
    assert split_name("main.select,nm") == ("main", "select", ["nm"])
    assert split_name("select") == (None, "select", [])
    assert split_name("t/alias.test") == (None, "alias", [])
    with pytest.raises(UsageError):
        split_name("a.b.c")
    dis = _write(tmp_path / "disabled.def", "# c\nfoo : bug 1\nrpl.bar* : later\n")
    assert parse_disabled(dis, "rpl") == {"rpl.foo": "bug 1", "rpl.bar*": "later"}


def test_collector_reads_the_fixture_suite():
    collector = Collector("/nonexistent-mtr-root", {}, suitepaths=(os.path.dirname(FIXTURE),))
    cases = {c.name: c for c in collector.collect(["kw_mtr"], [])}
    assert cases["disabled_one"].skip.startswith("disabled:")
    assert cases["opt"].master_opt == ["--max-connections=77", "--sql-mode=ANSI_QUOTES"]
    assert cases["plain"].result_file.endswith("r/plain.result")
    assert cases["plain"].full_name == "kw_mtr.plain"


def test_to_options_keep_order_repeats_loose_and_short_options():
    opts = to_options(["--loose-innodb", "--plugin-load-add=a.so", "--plugin-load=b.so",
                       "--plugin-load-add=c.so", "-V10.2.1-MariaDB"])
    assert opts[0].name == "skip-name-resolve" and opts[0].value == "0"
    assert opts[1].loose and opts[1].name == "innodb"
    assert [(o.name, o.value) for o in opts[2:5]] == [
        ("plugin-load-add", "a.so"), ("plugin-load", "b.so"), ("plugin-load-add", "c.so")]
    assert opts[5].name == "-V10.2.1-MariaDB"  # a short option: MtrServer's command line
    assert to_options(["--a=1"], defaults=False)[0].name == "a"


def test_server_command_line_as_mtr_builds_it(tmp_path):
    cnf = _write(tmp_path / "my.cnf", "[mysqld]\nlog-bin-trust-function-creators=1\n"
                                      "[mysqld.1]\nlog-slave-updates\n")
    config = MtrConfig.read(cnf)
    args = server_option_args(config, "mysqld.1",
                              ["--binlog-format=row", "--loose-skip-log-bin", "--x=$HOME_X",
                               "--skip-core-file"], {"HOME_X": "1"})
    assert "--binlog-format=row" not in args  # no --log-bin among the test's options
    assert "--loose-skip-log-bin" not in args  # the server has log-slave-updates
    assert "--x=1" in args and "--core-file" not in args
    assert args[-1] == "--loose-debug-sync-timeout=300"
    assert expand_env("a${B}c$D", {"B": "b"}) == "abc"


def test_sql_to_bootstrap_delimiters_and_comments():
    text = "-- comment\nCREATE TABLE t (a INT);\ndelimiter ||\nCREATE PROCEDURE p()\nBEGIN\nSELECT 1;\nEND||\ndelimiter ;\n"
    out = sql_to_bootstrap(text)
    assert "comment" not in out
    assert "CREATE PROCEDURE p() BEGIN SELECT 1; END;\n" in out


@pytest.mark.skipif(not os.path.isfile("/usr/share/mysql/mysql-test/mysql-test-run.pl"),
                    reason="mariadb-test is not installed")
def test_warning_patterns_come_from_mtr():
    patterns, antipatterns = read_pattern_lists("/usr/share/mysql/mysql-test/mysql-test-run.pl")
    assert len(patterns) >= 5 and len(antipatterns) >= 50
    scanner = WarningScanner(patterns, antipatterns)
    assert scanner.suspicious(["x [Warning] Aborted connection 3 to db\n",
                               "x [ERROR] something broke\n"]) == ["x [ERROR] something broke"]


def test_servers_stay_on_the_loopback():
    from lib.mtr.option_check import CaseBounds, server_problem
    from lib.mtr.options import loopback_only
    from lib.servers.option_catalog import OptionCatalog
    catalog = OptionCatalog("mariadbd", frozenset({"bind-address", "x"}))
    bounds = CaseBounds(vardir="/wd/bot1")
    narrowed = loopback_only(to_options(["--bind-address=*", "--x=1"], defaults=False))
    assert narrowed[0].value == "::1,127.0.0.1"
    assert server_problem(narrowed, catalog, bounds) is None
    assert loopback_only(to_options(["--bind-address=0.0.0.0"]))[1].value == "127.0.0.1"
    assert "192.168.0.1 is not a loopback address" in server_problem(
        to_options(["--bind-address=localhost,192.168.0.1"], defaults=False), catalog, bounds)
    assert "every interface" in server_problem(to_options(["--skip-bind-address"], defaults=False),
                                               catalog, bounds)



def test_an_end_comment_goes_as_mysqld_drops_it(tmp_path):
    # galera_3nodes.MDEV-38147.cnf: mysqld reads "6", never the comment
    cnf = tmp_path / "t.cnf"
    cnf.write_text("[mysqld.1]\nwsrep_sync_wait=6 # allow SHOW to reproduce \"error 1950\"\n"
                   "ssl-cipher='a#b' # c\n[ENV]\nX=1 # kept, as mtr exports it\n")
    config = MtrConfig.read(str(cnf))
    assert config.group("mysqld.1").value("wsrep_sync_wait") == "6"
    assert config.group("mysqld.1").value("ssl-cipher") == "a#b"
    assert config.env()["X"] == "1 # kept, as mtr exports it"


def test_generated_options_go_after_another_spelling(tmp_path):
    # mtr's My::Config tells server_id from server-id: ConfigFactory adds server-id=1
    # after a test's server_id=10999, and mysqld applies the last
    # (galera_3nodes.galera_gtid_consistency expects gtid 1111-1-N)
    from lib.mtr.config import build_config
    from lib.mtr.vardir import MtrVardir, ServerSlot
    from lib.servers.codetree import CodeTree
    cnf = tmp_path / "t.cnf"
    cnf.write_text("[mysqld.1]\nserver_id=10999\n")
    vardir = MtrVardir(str(tmp_path / "var"), str(tmp_path), None)
    slot = ServerSlot(1, str(tmp_path / "s0"), 9300, str(tmp_path / "s.sock"),
                      str(tmp_path / "e.err"), str(tmp_path / "tmp"))
    tree = CodeTree.__new__(CodeTree)
    tree.basedir = str(tmp_path)
    config = build_config(str(cnf), str(tmp_path), vardir, [slot], tree, {}, frozenset())
    args = config.server_options("mysqld.1")
    assert args.index("--server_id=10999") < args.index("--server-id=1")
