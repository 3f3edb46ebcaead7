"""Unit tests for lib/cli.py: argument parsing into a RunConfig (no harness is started).

Covers: lib/cli.py, lib/run/config.py
"""
import argparse
import os

import pytest

from lib.cli import build_parser, config_from_args
from lib.run.config import ROOT, RunConfig
from lib.errors import KewpieError
from lib.platform.ports import DEFAULT_BASE_PORT


def test_defaults():
    cfg = config_from_args([])
    assert isinstance(cfg, RunConfig)
    assert cfg.suites == []
    assert cfg.tests == []
    assert cfg.suitepaths == [os.path.join(ROOT, "percona_tests")]
    assert cfg.basedir == "/usr"
    assert cfg.default_server_type == "mysql"
    assert cfg.workdir == os.path.join(ROOT, "workdir")
    assert cfg.use_shm is True
    assert cfg.mode == "native"
    assert cfg.repeat == 1
    assert cfg.base_port == DEFAULT_BASE_PORT
    assert cfg.lock_dir == ""
    assert cfg.server_user is None
    assert cfg.start_timeout == 60.0
    assert not (cfg.force or cfg.list_only or cfg.verbose or cfg.start_and_exit)


def test_parser_default_server_type():
    assert build_parser().parse_args([]).default_server_type == "mysql"


def test_suite_comma_and_repeated_flatten():
    cfg = config_from_args(["--suite", "main,replication_basic", "--suite=extra", "--suite", " a , ,b "])
    assert cfg.suites == ["main", "replication_basic", "extra", "a", "b"]


def test_positional_tests():
    cfg = config_from_args(["--suite=main", "basic", "main.crash_test"])
    assert cfg.tests == ["basic", "main.crash_test"]
    assert cfg.suites == ["main"]


def test_suitepath_is_absolute_and_searched_before_percona_tests(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = config_from_args(["--suitepath", "one,two", "--suitepath", "/abs"])
    assert cfg.suitepaths == [str(tmp_path / "one"), str(tmp_path / "two"), "/abs",
                              os.path.join(ROOT, "percona_tests")]


def test_workdir_is_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert config_from_args(["--workdir", "wd"]).workdir == str(tmp_path / "wd")


def test_flags():
    cfg = config_from_args(["--no-shm", "--force", "--list", "--verbose", "--start-and-exit",
                            "--mode=cleanup", "--repeat=3", "--test-timeout=2.5",
                            "--base-port=20000", "--lock-dir=/tmp/l", "--server-user=mysql",
                            "--server-start-timeout=9", "--basedir=/opt/mysql"])
    assert cfg.use_shm is False
    assert cfg.force and cfg.list_only and cfg.verbose and cfg.start_and_exit
    assert cfg.mode == "cleanup"
    assert cfg.repeat == 3
    assert cfg.test_timeout == 2.5
    assert cfg.base_port == 20000
    assert cfg.lock_dir == "/tmp/l"
    assert cfg.server_user == "mysql"
    assert cfg.start_timeout == 9.0
    assert cfg.basedir == "/opt/mysql"


@pytest.mark.parametrize("value", ["0", "-1"])
def test_repeat_below_one_raises(value):
    with pytest.raises(KewpieError, match="--repeat"):
        config_from_args([f"--repeat={value}"])


@pytest.mark.parametrize("port", ["0", "80", "1023", "64001", "70000"])
def test_base_port_out_of_range_raises(port):
    with pytest.raises(KewpieError, match="--base-port"):
        config_from_args([f"--base-port={port}"])


@pytest.mark.parametrize("port", [1024, 64000])
def test_base_port_bounds_accepted(port):
    assert config_from_args([f"--base-port={port}"]).base_port == port


@pytest.mark.parametrize("argv", [["--repeat=x"], ["--mode=bogus"], ["--no-such-option"],
                                  ["--default-server-type=nosuchtype"]])
def test_malformed_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        config_from_args(argv)
    assert info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_help_mentions_every_option(capsys):
    parser = build_parser()
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    assert any(not a.option_strings for a in actions)  # the positional TEST
    for action in actions:
        if action.option_strings:
            for opt in action.option_strings:
                assert opt in text, opt
        else:
            assert action.metavar in text
        assert action.help, f"{action.dest} has no help text"
    assert "Exit status" in text
