"""Unit tests of the kewpie 2012 compatibility package's pure logic: the innobackupex
front end's mappings, --opt-matrix, --randgen-seed, sysbench 0.4 command lines,
randgen command lines, skip_checks and the 2012 server defaults.

Covers: lib/kewpie2012/innobackupex.py, lib/kewpie2012/context.py, lib/kewpie2012/code_manager.py,
lib/kewpie2012/matrix_manager.py, lib/kewpie2012/randgen_methods.py, lib/kewpie2012/sysbench_methods.py,
lib/kewpie2012/server_defaults.py, lib/suites/loader.py (class_server_defaults)
"""
import types

import pytest

from lib.config import RunConfig, Servers, Tools
from lib.cli import config_from_args
from lib.errors import KewpieError, SuiteError, UsageError
from lib.home import data_path
from lib.servers.codetree import CodeTree, ServerVersion
from lib.suites.loader import class_server_defaults
from lib.kewpie2012 import innobackupex
from lib.kewpie2012.code_manager import CodeManager
from lib.kewpie2012.context import default_innobackupex_path, skip_reason
from lib.kewpie2012.matrix_manager import matrixManager, parse_opt_matrix
from lib.kewpie2012.mysqlBaseTestCase import mysqlBaseTestCase
from lib.kewpie2012.randgen_methods import command_options, randgen_argv
from lib.kewpie2012.sysbench_methods import modern_sysbench_argv, process_sysbench_output

MB = "/usr/bin/mariadb-backup"
MARIADB = ServerVersion("10.11.6", "-MariaDB-0+deb12u1", "debian-linux-gnu", "x86_64", "Debian 12")
PERCONA = ServerVersion("5.5.28", "-rel29.1", "Linux", "x86_64", "Percona Server (GPL)")


# ---------------------------------------------------------------- innobackupex front end

def test_ibbackup_naming_mariabackup_runs_it_and_defaults_file_goes_first():
    plan = innobackupex.translate(["--user=root", "--defaults-file=/v/my.cnf",
                                   "--ibbackup=/opt/mariadb-backup", "--no-timestamp", "/v/b"])
    assert plan.argv == ["/opt/mariadb-backup", "--innobackupex", "--defaults-file=/v/my.cnf",
                         "--user=root", "--no-timestamp", "/v/b"]
    assert plan.target == "/v/b" and plan.defaults_file == "/v/my.cnf" and not plan.dropped


def test_xtrabackup_era_options_are_dropped_or_mapped():
    plan = innobackupex.translate(["--apply-log", "--redo-only", "--apply-log-only",
                                   "--ibbackup", "/usr/bin/xtrabackup_55", "--parallel=-1",
                                   "--use-memory=500M", "/b"], tool=MB)
    assert plan.argv == [MB, "--innobackupex", "--no-defaults", "--apply-log",
                         "--use-memory=500M", "/b"]
    assert plan.dropped == ["--redo-only", "--apply-log-only", "--ibbackup=/usr/bin/xtrabackup_55",
                            "--parallel=-1"]


def test_stream_tar_becomes_xbstream_and_parallel_is_kept():
    plan = innobackupex.translate(["--stream=tar", "--parallel", "4", "/tmp/x"], tool=MB)
    assert plan.stream_tar
    assert plan.argv == [MB, "--innobackupex", "--no-defaults", "--stream=xbstream",
                         "--parallel=4", "/tmp/x"]
    plan = innobackupex.translate(["--stream=xbstream", "/x"], tool=MB)
    assert not plan.stream_tar and "--stream=xbstream" in plan.argv


def test_copy_back_is_a_restore():
    plan = innobackupex.translate(["--defaults-file=/v/my.cnf", "--copy-back", "/b"], tool=MB)
    assert plan.restore and plan.argv[:3] == [MB, "--innobackupex", "--defaults-file=/v/my.cnf"]


def test_every_mapping_is_documented():
    for key in ("--ibbackup=PATH", "--redo-only", "--apply-log-only", "--stream=tar"):
        assert key in innobackupex.MAPPINGS
        assert key in (innobackupex.__doc__ or "")


def test_datadir_of(tmp_path):
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\ndatadir=/no\n[mysqld]\nport=1\ndatadir = /v/data\n")
    assert innobackupex.datadir_of(str(cnf)) == "/v/data"
    assert innobackupex.datadir_of(str(tmp_path / "none")) is None


def test_default_innobackupex_is_the_front_end_on_mariadb():
    tree = CodeTree("/usr", tools={"server": "/usr/sbin/mariadbd", "mariabackup": MB},
                    version=MARIADB)
    # kewpie's front end, where the package's data lives (lib/home.py), not under the root
    assert default_innobackupex_path(tree, "/k") == data_path("scripts", "innobackupex")
    percona = CodeTree("/p", tools={"server": "/p/bin/mysqld", "xtrabackup": "/p/bin/xtrabackup",
                                    "innobackupex": "/p/bin/innobackupex"}, version=PERCONA)
    assert default_innobackupex_path(percona, "/k") == "/p/bin/innobackupex"


# ---------------------------------------------------------------- options of the run

def test_opt_matrix():
    assert parse_opt_matrix("a=1, b=x=y,,") == {"a": "1", "b": "x=y"}
    assert parse_opt_matrix("") == {}
    with pytest.raises(UsageError, match="'b' is not name=value"):
        parse_opt_matrix("a=1,b")
    manager = matrixManager({"a": "1"})
    manager.matrix_check_req(["a"])
    with pytest.raises(KeyError, match="c missing from opt-matrix"):
        manager.matrix_check_req(["a", "c"])


def test_randgen_seed_and_opt_matrix_reach_the_config():
    config = config_from_args(["--randgen-seed=42", "--opt-matrix=k=v"])
    assert (config.tools.randgen_seed, config.tools.opt_matrix) == (42, "k=v")
    assert config_from_args([]).tools.randgen_seed == 1
    assert config_from_args(["--randgen-seed=time"]).tools.randgen_seed > 1_000_000_000
    with pytest.raises(KewpieError, match="must be a number or 'time'"):
        config_from_args(["--randgen-seed=soon"])
    with pytest.raises(KewpieError, match="not name=value"):
        config_from_args(["--opt-matrix=oops"])


# ---------------------------------------------------------------- code tree and skip_checks

def test_test_tree_on_mariadb_and_percona():
    tree = CodeManager(CodeTree("/usr", tools={}, version=MARIADB), "mysql").test_tree
    assert (tree.innodb_version, tree.xtradb_version) == ("10.11.6", None)
    assert tree.server_version == "10.11.6-MariaDB-0+deb12u1"
    tree = CodeManager(CodeTree("/p", tools={}, version=PERCONA), "percona").test_tree
    assert tree.xtradb_version == "5.5.28-rel29.1"


def _spec(source):
    module = types.ModuleType("m")
    exec(source, vars(module))  # noqa: S102 - a test's own snippet
    return types.SimpleNamespace(module=module, path="suite/m_test.py")


def _setup():
    tools = types.SimpleNamespace(randgen="/r", xtrabackup="", innobackupex="")
    config = RunConfig(servers=Servers(default_server_type="galera"),
                       tools=Tools(randgen_seed=5))
    return types.SimpleNamespace(workdir="/w", root="/k", code_tree=CodeTree(
        "/usr", tools={"mariabackup": MB}, version=MARIADB), config=config, tools=tools, seed=5)


def test_skip_checks():
    assert skip_reason(_spec("x = 1"), _setup()) is None
    spec = _spec("def skip_checks(system_manager):\n"
                 "    if system_manager.code_manager.test_type != 'mysql':\n"
                 "        return True, 'needs mysql, got %s seed %d' % (\n"
                 "            system_manager.code_manager.test_type, system_manager.randgen_seed)\n"
                 "    return False, ''\n")
    assert skip_reason(spec, _setup()) == "needs mysql, got galera seed 5"
    spec = _spec("def skip_checks(system_manager):\n    return False, ''\n")
    assert skip_reason(spec, _setup()) is None
    spec = _spec("def skip_checks(system_manager):\n    return system_manager.nope\n")
    with pytest.raises(SuiteError, match="m_test.py: skip_checks raised AttributeError"):
        skip_reason(spec, _setup())


def test_2012_modules_get_2012_server_defaults():
    old = types.ModuleType("old")
    old.mysqlBaseTestCase = mysqlBaseTestCase
    old.basicTest = type("basicTest", (mysqlBaseTestCase,), {"test_a": lambda self: None})
    new = types.ModuleType("new")
    new.mysqlBaseTestCase = mysqlBaseTestCase  # imported, not subclassed: no tests of its own
    names = {o.name: o.value for o in class_server_defaults(old)}
    assert names["log-bin"] and names["binlog-format"] == "ROW"
    assert names["character-set-server"] == "latin1"
    assert class_server_defaults(new) == []


def test_a_bad_declared_server_default_names_the_module():
    bad = types.ModuleType("bad")
    bad.T = type("T", (mysqlBaseTestCase,), {"test_a": lambda self: None,
                                             "kewpie_server_defaults": ("-x",)})
    with pytest.raises(SuiteError, match="bad_test.py: kewpie_server_defaults: .*long form"):
        class_server_defaults(bad, "bad_test.py")


# ---------------------------------------------------------------- randgen and sysbench

def test_gentest_with_gendata_and_no_grammar_runs_the_gendata(tmp_path):
    opts = command_options("./gentest.pl --gendata=conf/percona/percona.zz --seed=3", str(tmp_path))
    assert (opts.tool, opts.gendata, opts.seed) == ("gendata", "conf/percona/percona.zz", 3)
    assert command_options("./gentest.pl --gendata --queries=1", str(tmp_path)).tool == "gendata"
    assert command_options("./gentest.pl --gendata --grammar=x.yy", str(tmp_path)).tool == "gentest"
    (tmp_path / "gentest.pl").write_text("")  # a Perl checkout: the command as written
    assert command_options("./gentest.pl --gendata=x.zz", str(tmp_path)).tool == "gentest"


def test_randgen_argv_for_the_built_in_engine(tmp_path):
    argv = randgen_argv(["./gentest.pl", "--grammar=g.yy", "--seed=2"], str(tmp_path), "--dsn=D")
    assert argv[1:] == ["-m", "lib.randgen", "--randgen-path", str(tmp_path), "--grammar=g.yy",
                        "--seed=2", "--dsn=D"]
    perl = tmp_path / "perl"
    perl.mkdir()
    (perl / "gentest.pl").write_text("")
    assert randgen_argv(["./gentest.pl", "--grammar=g.yy"], str(perl), "--dsn=D") == \
        ["./gentest.pl", "--grammar=g.yy", "--dsn=D"]


def test_sysbench_04_command_lines_map_to_10():
    argv = modern_sysbench_argv("sysbench --test=oltp --max-time=240 --max-requests=0 "
                                "--num-threads=8 --oltp-table-size=1000 --oltp-read-only=on "
                                "--mysql-table-engine=innodb --init-rng=on --db-ps-mode=disable")
    assert argv == ["sysbench", "--time=240", "--events=0", "--threads=8", "--table-size=1000",
                    "--mysql-storage-engine=innodb", "--db-ps-mode=disable", "oltp_read_only"]
    assert modern_sysbench_argv(["sysbench", "--threads=2", "oltp_point_select"]) == \
        ["sysbench", "--threads=2", "oltp_point_select"]


def test_sysbench_output_both_layouts():
    old = ("    transactions:                        6000   (24.97 per sec.)\n"
           "    read/write requests:                 114000 (474.48 per sec.)\n"
           "         min:                                  13.60ms\n"
           "         approx.  95 percentile:               74.09ms\n")
    assert process_sysbench_output(old) == {"tps": 24.97, "rwreqps": 474.48,
                                            "min_req_lat_ms": 13.6, "95p_req_lat_ms": 74.09}
    new = ("    queries:                             2500   (2497.69 per sec.)\n"
           "         avg:                                   16.03\n"
           "         95th percentile:                       31.94\n")
    assert process_sysbench_output(new) == {"rwreqps": 2497.69, "avg_req_lat_ms": 16.03,
                                            "95p_req_lat_ms": 31.94}
