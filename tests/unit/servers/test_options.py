"""Unit tests for lib/servers/options.py: parsing, merging, ownership checks and my.cnf rendering.

Covers: lib/servers/options.py, lib/servers/cnf.py (render_cnf)
"""
import shutil
import subprocess

import pytest

from lib.errors import SuiteError
from lib.servers.cnf import render_cnf
from lib.servers.options import (
    BOOTSTRAP_OPTIONS, HARNESS_OWNED, Option, bootstrap_subset, merge, normalise_name,
    parse_option, parse_options, reject_owned,
)


# ---------------------------------------------------------------- parse_option

def test_parse_option_flag_without_value():
    assert parse_option("--innodb-file-per-table") == Option("innodb-file-per-table")


def test_parse_option_with_value():
    assert parse_option("--log-bin=mysql-bin") == Option("log-bin", "mysql-bin")


def test_parse_option_empty_value_is_kept_distinct_from_no_value():
    assert parse_option("--init-file=") == Option("init-file", "")
    assert parse_option("--init-file").value is None


def test_parse_option_value_may_contain_equals_sign():
    assert parse_option("--init-connect=SET a=1") == Option("init-connect", "SET a=1")


def test_parse_option_strips_surrounding_whitespace():
    assert parse_option("  --skip-grant-tables  ") == Option("skip-grant-tables")


def test_parse_option_underscores_become_dashes_in_name_only():
    opt = parse_option("--innodb_buffer_pool_size=my_value")
    assert opt.name == "innodb-buffer-pool-size"
    assert opt.value == "my_value"


def test_parse_option_name_is_lowercased():
    assert parse_option("--Innodb_File_Per_Table").name == "innodb-file-per-table"


def test_parse_option_dotted_names_are_valid():
    assert parse_option("--plugin.option=1").name == "plugin.option"


@pytest.mark.parametrize("text", ["--loose-foo-bar=1", "--loose_foo_bar=1", "--LOOSE-foo_bar=1"])
def test_parse_option_loose_prefix(text):
    assert parse_option(text) == Option("foo-bar", "1", loose=True)


@pytest.mark.parametrize("text", ["-x", "-uroot", "-P3306"])
def test_parse_option_rejects_short_options(text):
    with pytest.raises(SuiteError, match="long form"):
        parse_option(text)


@pytest.mark.parametrize("text", ["", "--", "   "])
def test_parse_option_rejects_empty(text):
    with pytest.raises(SuiteError, match="empty"):
        parse_option(text)


@pytest.mark.parametrize("text", ["--=5", "--loose-", "--loose-=1", "--a b", "--a/b=1", "--a$b"])
def test_parse_option_rejects_invalid_names(text):
    with pytest.raises(SuiteError, match="invalid name"):
        parse_option(text)


def test_normalise_name():
    assert normalise_name(" Log_Bin ") == "log-bin"


# ---------------------------------------------------------------- parse_options

def test_parse_options_list_of_strings():
    assert parse_options(["--a=1", "--b"]) == [Option("a", "1"), Option("b")]


def test_parse_options_several_options_in_one_string():
    assert parse_options("--a=1 --b=2") == [Option("a", "1"), Option("b", "2")]
    assert parse_options(["--a=1 --b=2", "--c"]) == [Option("a", "1"), Option("b", "2"), Option("c")]


def test_parse_options_tuple_input():
    assert parse_options(("--a=1",)) == [Option("a", "1")]


def test_parse_options_double_quoted_value_with_spaces():
    result = parse_options('--init-connect="SET NAMES utf8" --b=2')
    assert result == [Option("init-connect", "SET NAMES utf8"), Option("b", "2")]


def test_parse_options_single_quoted_value():
    assert parse_options("--x='a b c'") == [Option("x", "a b c")]


def test_parse_options_empty_list_and_blank_string():
    assert parse_options([]) == []
    assert parse_options(["   "]) == []


def test_parse_options_keeps_order_and_duplicates():
    result = parse_options(["--a=1", "--b", "--a=2"])
    assert [o.name for o in result] == ["a", "b", "a"]


@pytest.mark.parametrize("bad", [5, None, ["--a"], b"--a"])
def test_parse_options_non_string_item_raises(bad):
    with pytest.raises(SuiteError, match="not a string"):
        parse_options(["--ok", bad])


def test_parse_options_unbalanced_quote_raises_suite_error():
    with pytest.raises(SuiteError, match="--x='oops"):
        parse_options(["--x='oops"])


def test_parse_options_short_option_inside_string_raises():
    with pytest.raises(SuiteError, match="long form"):
        parse_options("--a=1 -b")


# ---------------------------------------------------------------- merge

def test_merge_later_wins_and_first_position_kept():
    first = [Option("a", "1"), Option("b", "1"), Option("c")]
    second = [Option("b", "2"), Option("d", "x")]
    third = [Option("a", "3")]
    assert merge(first, second, third) == [Option("a", "3"), Option("b", "2"), Option("c"),
                                           Option("d", "x")]


def test_merge_within_one_group():
    assert merge([Option("a", "1"), Option("b"), Option("a", "2")]) == [Option("a", "2"), Option("b")]


def test_merge_loose_and_plain_share_a_name():
    assert merge([Option("a", "1")], [Option("a", "2", loose=True)]) == [Option("a", "2", loose=True)]


def test_merge_empty():
    assert merge() == []
    assert merge([], []) == []


def test_merge_does_not_mutate_inputs():
    group = [Option("a", "1"), Option("a", "2")]
    merge(group)
    assert group == [Option("a", "1"), Option("a", "2")]


# ---------------------------------------------------------------- reject_owned

@pytest.mark.parametrize("text", ["--port=3306", "--datadir=/var/lib/mysql", "--bind-address=0.0.0.0",
                                  "--bind_address=0.0.0.0", "--socket=/tmp/s", "--pid-file=/x",
                                  "--log-error=/x", "--tmpdir=/x", "--basedir=/x", "--user=mysql",
                                  "--loose-port=1"])
def test_reject_owned_raises(text):
    with pytest.raises(SuiteError, match="set by kewpie"):
        reject_owned(parse_options(text))


def test_reject_owned_names_the_option():
    with pytest.raises(SuiteError, match="--datadir"):
        reject_owned([Option("innodb-file-per-table"), Option("datadir", "/x")])


def test_reject_owned_accepts_ordinary_options():
    reject_owned(parse_options("--innodb-file-per-table --log-bin=mysql-bin --port-open-timeout=5"))
    reject_owned([])


def test_harness_owned_names_are_normalised():
    assert all(normalise_name(n) == n for n in HARNESS_OWNED)
    assert all(normalise_name(n) == n for n in BOOTSTRAP_OPTIONS)


# ---------------------------------------------------------------- bootstrap_subset

def test_bootstrap_subset_keeps_only_bootstrap_options_in_order():
    opts = parse_options("--log-bin=x --innodb_page_size=64k --server-id=3 "
                         "--lower-case-table-names=1 --innodb-file-per-table")
    assert bootstrap_subset(opts) == [Option("innodb-page-size", "64k"),
                                      Option("lower-case-table-names", "1"),
                                      Option("innodb-file-per-table")]


def test_bootstrap_subset_empty():
    assert bootstrap_subset(parse_options("--log-bin --server-id=2")) == []


# ---------------------------------------------------------------- render

def test_render_flag_and_plain_value():
    assert Option("skip-name-resolve").render() == "skip-name-resolve"
    assert Option("log-bin", "mysql-bin").render() == "log-bin=mysql-bin"
    assert Option("port-open-timeout", "5", loose=True).render() == "loose-port-open-timeout=5"
    assert Option("plugin-load", "a.so", loose=True).render() == "loose-plugin-load=a.so"


@pytest.mark.parametrize("value, expected", [
    ("", 'x=""'),
    ("a b", 'x="a b"'),
    ("a#b", 'x="a#b"'),
    ("a;b", 'x="a;b"'),
    ('say "hi"', r'x="say \"hi\""'),
    ("it's", "x=\"it's\""),
    ("a\\b c", r'x="a\\b c"'),
])
def test_render_quotes_values_needing_it(value, expected):
    assert Option("x", value).render() == expected


def test_render_escapes_backslash_in_unquoted_value():
    assert Option("x", "C:\\bin").render() in ('x="C:\\\\bin"', "x=C:\\\\bin")


def test_as_arg():
    assert Option("a").as_arg() == "--a"
    assert Option("a", "1 2").as_arg() == "--a=1 2"
    assert Option("a", "", loose=True).as_arg() == "--loose-a="


def test_parse_as_arg_roundtrip():
    for opt in [Option("a"), Option("b", "1"), Option("c", "x", loose=True), Option("d", "")]:
        assert parse_option(opt.as_arg()) == opt


def test_render_cnf_sections():
    text = render_cnf({"mysqld": [Option("port", "9300"), Option("skip-name-resolve")],
                       "client": [Option("user", "root"), Option("password", "")]})
    lines = text.split("\n")
    assert lines[0].startswith("#")
    assert lines[1:] == ["[mysqld]", "port=9300", "skip-name-resolve", "",
                         "[client]", "user=root", 'password=""', ""]


def test_render_cnf_empty_section_and_no_sections():
    assert "[mysqld]" in render_cnf({"mysqld": []}).split("\n")
    assert render_cnf({}).count("\n") == 0


@pytest.mark.skipif(shutil.which("my_print_defaults") is None, reason="my_print_defaults not installed")
def test_render_cnf_is_read_back_by_my_print_defaults(tmp_path):
    values = ["plain", "a b", "x#y", "semi;colon", 'say "hi"', "it's", "", "a\\b c"]
    options = [Option(f"opt{i}", v) for i, v in enumerate(values)] + [Option("flag")]
    cnf = tmp_path / "my.cnf"
    cnf.write_text(render_cnf({"mysqld": options}))
    out = subprocess.run(["my_print_defaults", f"--defaults-file={cnf}", "mysqld"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    assert out.splitlines() == [o.as_arg() for o in options]


# ---------------------------------------------------------------- written text

def test_parse_option_keeps_the_text_as_written_outside_comparisons():
    opt = parse_option("  --Bind_Addr=0.0.0.0 ")
    assert opt.text == "--Bind_Addr=0.0.0.0"
    assert opt == Option("bind-addr", "0.0.0.0") and hash(opt) == hash(Option("bind-addr", "0.0.0.0"))


def test_reject_owned_names_where_and_the_text_as_written():
    with pytest.raises(SuiteError, match=r"^x/suite_config.py: server option '--Socket=/tmp/s'"):
        reject_owned(parse_options("--Socket=/tmp/s"), "x/suite_config.py")


@pytest.mark.parametrize("text", ["--secure-file-priv=", "--wsrep-provider=/x.so",
                                  "--wsrep-sst-receive-address=127.0.0.1:4444"])
def test_reject_owned_covers_new_owned_options(text):
    with pytest.raises(SuiteError, match="set by kewpie"):
        reject_owned(parse_options(text))
