"""gentest.pl command lines, DSNs, results, and the Perl randgen passthrough (with a fake tool).

Covers: lib/randgen/cmdline.py, lib/randgen/connection.py, lib/randgen/perl_randgen.py,
lib/randgen/result.py, lib/randgen/api.py, lib/kewpie2012/randgen_methods.py
"""
import os

import pytest

from lib.randgen.cmdline import parse_command, resolve_paths
from lib.randgen.connection import ConnectionSpec, parse_dsn
from lib.randgen.errors import RandgenEnvironmentError
from lib.randgen.perl_randgen import PerlRandgen, is_perl_randgen, map_exit_code, options_to_args
from lib.randgen.result import RandgenResult


def test_kewpie_2012_command_line():
    o = parse_command("./gentest.pl --gendata=conf/percona/x.zz --grammar=conf/percona/y.yy "
                      "--queries=1000 --threads=1 --Validators=None --seed time")
    assert (o.tool, o.grammar, o.gendata, o.queries, o.threads) == \
        ("gentest", "conf/percona/y.yy", "conf/percona/x.zz", 1000, 1)
    assert o.ignored == [] and o.validators == ["None"] and o.seed > 1


def test_gendata_forms():
    assert parse_command("./gendata.pl --spec=conf/a.zz").tool == "gendata"
    o = parse_command("./gentest.pl --gendata --grammar g.yy --duration 30")
    assert o.gendata_simple and o.gendata is None and o.grammar == "g.yy" and o.duration == 30
    assert parse_command("gendata-old.pl").gendata_simple
    o = parse_command("./gentest.pl --grammar=g.yy --redefine=a.yy --redefine=b.yy --rows=1,2 "
                      "--engine=InnoDB --views --notnull --varchar-length=5 --sqltrace")
    assert o.redefine == ["a.yy", "b.yy"] and o.rows == [1, 2] and o.views == ""
    assert o.notnull and o.varchar_length == 5 and o.sqltrace and o.engine == "InnoDB"


def test_bad_command_lines():
    with pytest.raises(RandgenEnvironmentError, match="unknown randgen option"):
        parse_command("./gentest.pl --grammer=x.yy")
    with pytest.raises(RandgenEnvironmentError, match="needs a number"):
        parse_command("./gentest.pl --queries=many")
    with pytest.raises(RandgenEnvironmentError, match="unknown randgen tool"):
        parse_command("./runall.pl --grammar=x.yy")


def test_paths_resolve_against_the_randgen_folder(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "g.yy").write_text("query: A ;\n")
    o = resolve_paths(parse_command("./gentest.pl --grammar=conf/g.yy"), str(tmp_path))
    assert o.grammar == str(tmp_path / "conf" / "g.yy")


def test_dsns():
    c = parse_dsn("dbi:mysql:host=127.0.0.1:port=9306:user=root:password=\"\":database=test1")
    assert (c.host, c.port, c.user, c.database) == ("127.0.0.1", 9306, "root", "test1")
    c = parse_dsn("mysql://u:p@localhost:3307/db?socket=/tmp/s.sock")
    assert (c.user, c.password, c.port, c.database, c.unix_socket) == \
        ("u", "p", 3307, "db", "/tmp/s.sock")
    assert "port=9300" in ConnectionSpec(port=9300).dbi_dsn()
    with pytest.raises(RandgenEnvironmentError):
        parse_dsn("postgres:x")


def test_result_checks():
    r = RandgenResult(statements=10, errors={1213: 2, 1064: 1},
                      error_samples={1064: "syntax [sql: x]"})
    assert r.ok and r.error_count == 3 and r.error_rate == 0.3
    assert r.unexpected_errors({1213}) == {1064: 1}
    problems = r.check(allowed_errors={1213}, max_error_rate=0.1, min_statements=20)
    assert len(problems) == 3 and "1064" in problems[0]
    assert RandgenResult(status="server_lost", reason="gone").check() == ["status server_lost: gone"]
    assert r.to_json()["errors"] == {"1213": 2, "1064": 1}


@pytest.mark.parametrize("code,output,status", [
    (0, "all good", "ok"),
    (0, "# Internal grammar error: Can't locate object method", "grammar_error"),
    (0, "Rule x occured more than 3500 times. Possible endless loop in grammar.", "grammar_error"),
    (101, "", "server_lost"),
    (103, "", "failure"), (105, "", "failure"), (109, "", "failure"),
    (110, "", "environment_error"),
    (1, "", "tool_error"), (2, "", "tool_error"), (255, "", "tool_error"),
])
def test_exit_code_mapping(code, output, status):
    assert map_exit_code(code, output)[0] == status


FAKE = """#!/usr/bin/perl
$| = 1;
print "args: @ARGV\\n";
print "rqg_home: $ENV{RQG_HOME}\\n";
my ($code) = grep { /^--seed=/ } @ARGV; $code =~ s/--seed=//;
print "Possible endless loop in grammar\\n" if $code == 1000;
exit($code == 1000 ? 0 : $code);
"""


@pytest.fixture
def fake_randgen(tmp_path):
    (tmp_path / "gentest.pl").write_text(FAKE)
    (tmp_path / "gendata.pl").write_text(FAKE)
    os.chmod(tmp_path / "gentest.pl", 0o755)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "x.yy").write_text("query: SELECT 1 ;\n")
    return str(tmp_path)


@pytest.mark.parametrize("seed,status,exit_code", [(0, "ok", 0), (101, "server_lost", 101),
                                                   (104, "failure", 104), (255, "tool_error", 255),
                                                   (1000, "grammar_error", 110)])
def test_perl_passthrough(fake_randgen, tmp_path, seed, status, exit_code):
    assert is_perl_randgen(fake_randgen) and not is_perl_randgen(str(tmp_path / "nothing"))
    opts = parse_command(f"./gentest.pl --grammar=conf/x.yy --queries=5 --seed={seed} "
                         f"--dsn=dbi:mysql:host=elsewhere")
    log = tmp_path / "out.log"
    result = PerlRandgen(fake_randgen).run(opts, ConnectionSpec(port=9999), str(log))
    assert (result.status, result.exit_code) == (status, exit_code)
    text = log.read_text()
    assert "--grammar=conf/x.yy" in text and "--dsn=dbi:mysql:host=127.0.0.1:port=9999" in text
    assert "host=elsewhere" not in text.split("args:")[1]
    assert f"rqg_home: {fake_randgen}" in text


def test_options_to_args_for_keyword_runs():
    from lib.randgen.api import make_options
    args = options_to_args(make_options("conf/g.yy", "conf/d.zz", queries=7, threads=2, seed=3))
    assert args[:2] == ["--grammar=conf/g.yy", "--gendata=conf/d.zz"]
    assert "--queries=7" in args and "--threads=2" in args and "--seed=3" in args


class _FakeServer:
    port = 9999
    socket_file = "/nonexistent/my.sock"
    vardir = "/nonexistent"

    def is_alive(self):
        return True


def test_execute_randgen_uses_a_perl_checkout(fake_randgen, tmp_path):
    from types import SimpleNamespace

    from lib.kewpie2012.randgen_methods import execute_randgen
    executor = SimpleNamespace(logdir=str(tmp_path), verbose=False,
                               system_manager=SimpleNamespace(randgen_path=fake_randgen))
    servers = [_FakeServer()]
    assert execute_randgen("./gentest.pl --grammar=conf/x.yy --seed=0", executor, servers) == \
        (0, None)
    retcode, output = execute_randgen("./gentest.pl --grammar=conf/x.yy --seed=101", executor,
                                      servers, schema="test1")
    assert retcode == 101 and "database=test1" in output and "server_lost" in output
    assert os.path.exists(tmp_path / "randgen.out")
    retcode, output = execute_randgen("./gentest.pl --grammar=conf/x.yy --seed=1000", executor,
                                      servers)
    assert retcode == 110 and "Possible endless loop" in output


def test_execute_randgen_bad_command_is_an_environment_error(tmp_path):
    from types import SimpleNamespace

    from lib.kewpie2012.randgen_methods import execute_randgen
    executor = SimpleNamespace(logdir=str(tmp_path), verbose=False,
                               system_manager=SimpleNamespace(randgen_path=str(tmp_path)))
    retcode, output = execute_randgen("./gentest.pl --no-such-option", executor, [_FakeServer()])
    assert retcode == 110 and "unknown randgen option" in output
    retcode, output = execute_randgen("./gentest.pl --grammar=conf/none.yy", executor,
                                      [_FakeServer()])
    assert retcode == 110 and "grammar not found" in output
