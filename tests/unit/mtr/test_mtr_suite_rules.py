"""What mtr's suite.pm files decide (read without Perl), its default suite list, and
combinations made as mtr's make_combinations makes them; where mysqld writes its error
log for a bare --log-error.

Covers: lib/mtr/suite_rules.py, lib/mtr/cases.py, lib/mtr/server.py
"""
import os

import pytest

from lib.errors import UsageError
from lib.mtr.cases import Collector, Combination, MtrCase, make_combinations
from lib.mtr.options import to_options
from lib.mtr.server import mysqld_error_log
from lib.mtr.suite_rules import (BuildFacts, Condition, Unknown, default_suites, is_default,
                                 skip_rules, suite_skip, top_level_statements)

FACTS = BuildFacts(features={"archive": "ON", "wsrep-on": "FALSE"},
                   env={"DISKS_SO": "disks.so"}, user=None)


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text, value", [
    ('$ENV{DISKS_SO}', "disks.so"),
    ('$ENV{HA_X_SO} or $::mysqld_variables{\'archive\'} eq "ON"', True),
    ("not $::opt_embedded_server", True),
    ("defined $::mysqld_variables{'aria-recover-options'}", False),
    ("exists($::mysqld_variables{'archive'})", True),
    ("!$ENV{A} && !IS_WINDOWS", True),
    ("1", "1"),
])
def test_conditions_over_the_build(text, value):
    assert Condition(text, FACTS).value() == value


def test_what_kewpie_cannot_read_is_unknown():
    with pytest.raises(Unknown):
        Condition("$exe_sphinx_indexer", FACTS).value()
    with pytest.raises(Unknown):
        Condition("`sh -c foo`", FACTS).value()


def test_statements_blocks_and_comments():
    text = ('package X;\n# return "not this";\nif ($^O eq "MSWin32") { return "w"; }\n'
            'else { my $x = 1; }\nreturn "No Disks" unless $ENV{DISKS_SO}; # trailing\n'
            'sub is_default { 1 }\nbless { };\n')
    statements = top_level_statements(text)
    assert 'return "No Disks" unless $ENV{DISKS_SO}' in statements
    assert "sub is_default { 1 }" in statements
    assert not any("not this" in s for s in statements)


def test_suite_skip_and_default(tmp_path):
    runs = _write(tmp_path / "disks" / "suite.pm",
                  'return "No Disks plugin" unless $ENV{DISKS_SO};\nsub is_default { 1 }\n')
    missing = _write(tmp_path / "sphinx" / "suite.pm",
                     "my $exe = locate();\nreturn \"'indexer' binary not found\" unless $exe;\n"
                     "sub is_default { 1 }\n")
    plain = _write(tmp_path / "seq" / "suite.pm", "sub is_default { not $::opt_embedded_server }\n")
    off = _write(tmp_path / "rocks" / "suite.pm", "#sub is_default { 1 }\nbless { };\n")
    assert suite_skip(os.path.dirname(runs), FACTS) == ""
    assert is_default(os.path.dirname(runs), FACTS)
    assert suite_skip(os.path.dirname(missing), FACTS) == "'indexer' binary not found"
    assert not is_default(os.path.dirname(missing), FACTS)
    assert is_default(os.path.dirname(plain), FACTS)
    assert not is_default(os.path.dirname(off), FACTS)


def test_default_list_as_mtr_builds_it(tmp_path):
    root = tmp_path / "mysql-test"
    _write(root / "mariadb-test-run.pl", "my @DEFAULT_SUITES= qw(\n    main-\n    foo-\n  );\n")
    (root / "suite" / "foo").mkdir(parents=True)
    _write(root / "plugin" / "p" / "bar" / "suite.pm", "sub is_default { 1 }\n")
    _write(root / "plugin" / "q" / "baz" / "suite.pm",
           'return "No baz" unless $ENV{BAZ_SO};\nsub is_default { 1 }\n')
    _write(root / "plugin" / "r" / "foo" / "suite.pm", "sub is_default { 1 }\n")  # an overlay
    _write(root / "plugin" / "s" / "grp" / "sub1" / "suite.pm", "sub is_default { 1 }\n")
    assert default_suites(str(root), FACTS) == ["main-", "foo-", "bar", "grp/sub1"]


def test_pam_tests_skip_as_under_mtr(tmp_path):
    rules = skip_rules(str(tmp_path), {}, {}, user=None)
    reason = rules[str(tmp_path / "suite" / "plugins" / "t" / "pam_init.combinations")]
    assert reason == "Not run as user owning auth_pam_tool_dir"   # mtr's plugindir is unset


def _case(opts=()):
    return MtrCase(suite="binlog", name="t", path="t.test", suite_dir="", result_file=None,
                   record_file="", template="", master_opt=list(opts), slave_opt=list(opts))


FORMATS = [Combination("row", ("--binlog-format=row",)),
           Combination("stmt", ("--binlog-format=statement",)),
           Combination("mix", ("--binlog-format=mixed",))]


def test_suite_and_test_combinations_as_mtr_names_them():
    forced: dict[str, int] = {}
    cases = [c for base in make_combinations(_case(), forced, FORMATS)
             for c in make_combinations(base, forced, FORMATS)]
    # rpl_init.inc's row is taken once row,row used it: mtr runs mix,row / row,row / row,stmt
    assert sorted(",".join(sorted(c.combinations)) for c in cases) == [
        "mix,row", "row,row", "row,stmt"]
    stmt = next(c for c in cases if "stmt" in c.combinations)
    assert stmt.master_opt[-1] == "--binlog-format=statement"   # the later option wins


def test_combinations_fixed_by_options_named_or_skipped():
    fixed = make_combinations(_case(["--binlog-format=row"]), {}, FORMATS)
    assert [c.combinations for c in fixed] == [("row",)]
    assert fixed[0].master_opt == ["--binlog-format=row"]
    named = make_combinations(_case(), {"mix": 1}, FORMATS)
    assert [c.combinations for c in named] == [("mix",)]
    skipped = make_combinations(_case(), {}, "Requires debug build")
    assert skipped[0].skip == "Requires debug build" and not skipped[0].combinations


def test_include_combinations_in_mtrs_order(tmp_path):
    """A test's own .combinations come first, then its includes' lists in reverse
    (mtr's 'sort ::uniq'): a skip met before an include's list keeps it from expanding."""
    root = tmp_path / "mtr"
    _write(root / "include" / "default_my.cnf", "")
    _write(root / "include" / "sizes.inc", "")
    _write(root / "include" / "sizes.combinations", "[4k]\nx=4\n[8k]\nx=8\n")
    _write(root / "include" / "debug.inc", "")
    _write(root / "include" / "debug.combinations", "[d]\ny=1\n")
    suite = root / "suite" / "s" / "t"
    _write(suite / "a.test", "--source include/sizes.inc\n--source include/debug.inc\n")
    _write(suite / "a.combinations", "[c1]\nz=1\n[c2]\nz=2\n")
    skips = {str(root / "include" / "debug.combinations"): "Requires debug build"}
    cases = Collector(str(root), skips).collect(["s"], [])
    assert sorted(c.combinations for c in cases) == [("c1",), ("c2",)]
    assert all(c.skip == "Requires debug build" for c in cases)
    with pytest.raises(UsageError, match="combination"):
        Collector(str(root), {}).collect(["s"], ["s.a,nosuch"])


def test_error_log_of_a_bare_log_error():
    opts = to_options(["--pid-file=/v/run/mysqld.1.pid", "--log-error=/v/log/mysqld.1.err",
                       "--log-error"])
    assert mysqld_error_log(opts, "/v/data") == "/v/run/mysqld.err"
    assert mysqld_error_log(to_options(["--log-error=x"]), "/v/data") == "/v/data/x.err"
    assert mysqld_error_log(to_options(["--log-error"]), "/d", "db1.example") == "/d/db1.err"
    assert mysqld_error_log(to_options(["--port=1"]), "/d") == ""


def test_overlays_as_mtr_reads_them(tmp_path):
    root = tmp_path / "mtr"
    _write(root / "include" / "default_my.cnf", "")
    for name in ("a", "b"):
        _write(root / "suite" / "s" / "t" / f"{name}.test", "select 1;\n")
    _write(root / "plugin" / "p" / "s" / "t" / "a.test", "--source a.inc\n")
    _write(root / "plugin" / "p" / "s" / "t" / "c.test", "select 3;\n")
    collector = Collector(str(root), {})

    def names(suites):
        return sorted(c.full_name for c in collector.collect(suites, []))
    assert names(["s"]) == ["s.a", "s.b"]
    assert names(["s-"]) == ["s-p.a", "s-p.c", "s.a", "s.b"]
    assert names(["s-p"]) == ["s-p.a", "s-p.c"]
    case = next(c for c in collector.collect(["s-p"], []) if c.name == "a")
    assert case.overlay_dir == str(root / "plugin" / "p" / "s")
    assert case.suite_dir == str(root / "suite" / "s")
    assert case.path == str(root / "plugin" / "p" / "s" / "t" / "a.test")
    with pytest.raises(UsageError, match="no overlay"):
        collector.collect(["s-q"], [])


def test_have_debug_sync_skips_before_any_server_on_a_build_without_it():
    from lib.mtr.suite_rules import known_runtime_skips, skip_rules
    assert known_runtime_skips({}) == {"include/have_debug_sync.inc": "debug_sync is not available"}
    assert known_runtime_skips({"debug-sync-timeout": "0"}) == {}
    rules = skip_rules("/m", {}, {})
    assert rules["/m/include/have_debug_sync.combinations"] == "debug_sync is not available"
    assert "/m/include/have_debug_sync.combinations" not in skip_rules(
        "/m", {"debug-sync-timeout": "0"}, {})
