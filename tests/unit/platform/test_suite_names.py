"""Issue 27: suite names are names (lib/platform/suite_names.py); a path only as a
directory given through --suitepath.

Covers: lib/platform/suite_names.py
"""
from __future__ import annotations

import os

import pytest

from lib.cli import main
from lib.errors import UsageError
from lib.platform.suite_names import check_suite_name, display_name, given_directory, name_problem


@pytest.mark.parametrize("name", ["main", "cluster_basic", "sys_vars", "galera_3nodes_sr",
                                  "innodb-fts", "a+b"])
def test_plain_names_are_names(name):
    assert name_problem(name) is None and name_problem(name, nested=True) is None


@pytest.mark.parametrize("name, nested, words", [
    ("", False, "empty"), ("/tmp/x", False, "absolute"), ("/tmp/x", True, "absolute"),
    ("../x", False, "climbs out"), ("../../../tmp/x/trav", True, "climbs out"),
    ("main/..", True, "climbs out"), ("./main", True, "climbs out"), ("compat/oracle", False, "a path"),
    ("a/b/c", True, "deeper"), ("x y", False, "not a name"), ("-x", False, "not a name"),
    ("compat/*", True, "not a name"),
])
def test_paths_and_traversal_are_not_names(name, nested, words):
    assert words in name_problem(name, nested)


def test_mtr_group_suite_names_are_names_in_mtr_mode_only():
    assert name_problem("compat/oracle", nested=True) is None
    assert name_problem("compat/oracle") is not None


def test_a_directory_given_through_suitepath_is_accepted(tmp_path):
    suite = tmp_path / "suites" / "mine"
    suite.mkdir(parents=True)
    paths = [str(tmp_path / "suites")]
    assert check_suite_name(str(suite), paths) == os.path.realpath(suite)
    assert check_suite_name(str(tmp_path / "suites"), paths) == os.path.realpath(tmp_path / "suites")
    assert check_suite_name("mine", paths) is None  # a name: looked up as usual
    assert display_name(str(suite)) == "mine" and display_name("compat/oracle") == "compat/oracle"


def test_other_directories_and_missing_ones_are_refused(tmp_path):
    (tmp_path / "suites").mkdir()
    (tmp_path / "elsewhere" / "x").mkdir(parents=True)
    paths = [str(tmp_path / "suites")]
    assert given_directory(str(tmp_path / "elsewhere" / "x"), paths) is None
    with pytest.raises(UsageError, match="pass its parent directory with --suitepath"):
        check_suite_name(str(tmp_path / "elsewhere" / "x"), paths)
    with pytest.raises(UsageError, match="an absolute path"):
        check_suite_name(str(tmp_path / "suites" / ".." / "elsewhere" / "x"), paths, nested=True)
    with pytest.raises(UsageError):
        check_suite_name(str(tmp_path / "suites" / "missing"), paths)


@pytest.mark.parametrize("argv", [["--suite=../x"], ["--suite=main,../../../tmp/x/trav"],
                                  ["--suite=/etc"], ["--mode=mtr", "--suite=/tmp"],
                                  ["--mode=mtr", "--suite=../main"]])
def test_cli_refuses_paths_as_suites_with_exit_2(argv, tmp_path, caplog):
    assert main([f"--workdir={tmp_path / 'wd'}", *argv]) == 2
    assert not (tmp_path / "wd").exists()
