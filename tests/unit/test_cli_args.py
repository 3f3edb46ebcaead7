"""Unit tests for lib/cli.py: argument parsing into a RunConfig, --help's groups, config
files and profiles through the command line, --list-options (no harness is started).

Covers: lib/cli.py, lib/config/, lib/run/configfile.py
"""
import argparse
import os

import pytest

from lib.cli import build_parser, config_from_args
from lib.config import ROOT, RunConfig
from lib.errors import KewpieError
from lib.platform.ports import DEFAULT_BASE_PORT


def test_defaults():
    cfg = config_from_args([])
    assert isinstance(cfg, RunConfig)
    assert cfg.selection.suites == []
    assert cfg.selection.tests == []
    assert cfg.selection.suitepaths == [os.path.join(ROOT, "percona_tests")]
    assert cfg.servers.basedir == "/usr"
    assert cfg.servers.default_server_type == "mysql"
    assert cfg.workdir == os.path.join(ROOT, "workdir")
    assert cfg.servers.use_shm is True
    assert cfg.mode == "native"
    assert cfg.selection.repeat == 1
    assert cfg.servers.base_port == DEFAULT_BASE_PORT
    assert cfg.servers.lock_dir == ""
    assert cfg.servers.server_user is None
    assert cfg.servers.start_timeout == 60.0
    assert not (cfg.reporting.force or cfg.selection.list_only or cfg.reporting.verbose or cfg.start_and_exit)


def test_parser_default_server_type():
    assert build_parser().parse_args([]).default_server_type == "mysql"


def test_suite_comma_and_repeated_flatten():
    cfg = config_from_args(["--suite", "main,replication_basic", "--suite=extra", "--suite", " a , ,b "])
    assert cfg.selection.suites == ["main", "replication_basic", "extra", "a", "b"]


def test_positional_tests():
    cfg = config_from_args(["--suite=main", "basic", "main.crash_test"])
    assert cfg.selection.tests == ["basic", "main.crash_test"]
    assert cfg.selection.suites == ["main"]


def test_suitepath_is_absolute_and_searched_before_percona_tests(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = config_from_args(["--suitepath", "one,two", "--suitepath", "/abs"])
    assert cfg.selection.suitepaths == [str(tmp_path / "one"), str(tmp_path / "two"), "/abs",
                              os.path.join(ROOT, "percona_tests")]


def test_workdir_is_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert config_from_args(["--workdir", "wd"]).workdir == str(tmp_path / "wd")


def test_flags():
    cfg = config_from_args(["--no-shm", "--force", "--list", "--verbose", "--start-and-exit",
                            "--mode=cleanup", "--repeat=3", "--test-timeout=2.5",
                            "--base-port=20000", "--lock-dir=/tmp/l", "--server-user=mysql",
                            "--server-start-timeout=9", "--basedir=/opt/mysql"])
    assert cfg.servers.use_shm is False
    assert cfg.reporting.force and cfg.selection.list_only and cfg.reporting.verbose and cfg.start_and_exit
    assert cfg.mode == "cleanup"
    assert cfg.selection.repeat == 3
    assert cfg.reporting.test_timeout == 2.5
    assert cfg.servers.base_port == 20000
    assert cfg.servers.lock_dir == "/tmp/l"
    assert cfg.servers.server_user == "mysql"
    assert cfg.servers.start_timeout == 9.0
    assert cfg.servers.basedir == "/opt/mysql"


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
    assert config_from_args([f"--base-port={port}"]).servers.base_port == port


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


# ---------------------------------------------------------------- --help's groups

HELP_GROUPS = {
    "selection": ["--suite", "--suitepath", "--do-test", "--list"],
    "the run": ["--mode", "--force", "--repeat", "--test-timeout", "--workdir"],
    "servers and Galera": ["--basedir", "--mysqld", "--wsrep-sst-method", "--cluster-snapshot"],
    "regression jobs": ["--parallel", "--junit-xml", "--shard", "--retry"],
    "debugging": ["--valgrind", "--gdb", "--keep-failed", "--check-warnings"],
    "mtr mode": ["--mtr-root", "--record", "--ps-protocol"],
    "sweeps": ["--sweep-file", "--baseline", "--tolerance"],
    "tools": ["--xtrabackup-path", "--randgen-path"],
    "kewpie 2012": ["--randgen-seed", "--opt-matrix", "--innobackupex-path", "--gendata"],
    "config files and profiles": ["--config", "--profile", "--list-options"],
}


def test_help_is_grouped_by_job(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = capsys.readouterr().out
    sections = {}
    for block in text.split("\n\n"):
        head = block.splitlines()[0]
        for title in HELP_GROUPS:
            if head.startswith(title) and head.endswith(":"):
                sections[title] = block
    assert set(sections) == set(HELP_GROUPS)
    for title, options in HELP_GROUPS.items():
        for option in options:
            assert f"  {option}" in sections[title], (title, option)
    other = text.split("\n\n")[2]  # argparse's own group holds only --help
    assert other.startswith("options:") and other.count("\n  -") == 1, other
    assert text.index("selection:") < text.index("the run:") < text.index("servers and Galera")


def test_on_off_options_have_a_no_form():
    for argv, read, value in (
            (["--force", "--no-force"], lambda c: c.reporting.force, False),
            (["--no-shm"], lambda c: c.servers.use_shm, False),
            (["--shm"], lambda c: c.servers.use_shm, True),
            (["--no-cluster-snapshot"], lambda c: c.servers.cluster_snapshots, False),
            (["--no-check-warnings"], lambda c: c.debugging.check_warnings, False)):
        assert read(config_from_args(argv)) is value, argv


def test_mtr_protocols_in_mtr_order():
    cfg = config_from_args(["--mode=mtr", "--view-protocol", "--ps-protocol", "--no-reorder"])
    assert cfg.mode_section.protocols == ("--ps-protocol", "--view-protocol")
    assert cfg.mode_section.reorder is False
    with pytest.raises(KewpieError, match="--ps-protocol: only with --mode=mtr"):
        config_from_args(["--ps-protocol"])


# ---------------------------------------------------------------- kewpie.toml

EXAMPLE = os.path.join(ROOT, "kewpie.toml.example")


def _config_file(tmp_path, text):
    path = tmp_path / "my.toml"
    path.write_text(text)
    return str(path)


def test_every_option_can_be_read_from_a_file():
    from lib.cli import COMMAND_LINE_ONLY, PATH_OPTIONS
    from lib.run.configfile import option_specs
    specs = option_specs(build_parser(), not_in_files=COMMAND_LINE_ONLY, paths=PATH_OPTIONS)
    assert {"repeat", "no-force", "force", "shm", "no-shm", "ps-protocol", "no-reorder",
            "test-timeout", "mysqld"} <= set(specs)
    assert not {"config", "profile", "sys-config", "list-options", "no-config"} & set(specs)
    assert {s.key for s in specs.values() if s.path} == set(PATH_OPTIONS)


def test_profile_applies_over_defaults_and_command_line_overrides(tmp_path):
    path = _config_file(tmp_path, '[defaults]\nrepeat = 2\nsuite = "main"\nparallel = 2\n'
                                  '[profiles.p]\nrepeat = 3\nforce = true\ntest-timeout = 30\n'
                                  'junit-xml = "reports/out.xml"\n')
    plain = config_from_args(["--config", path])
    assert plain.selection.repeat == 2 and plain.selection.suites == ["main"] and plain.reporting.parallel == 2
    assert not plain.reporting.force and plain.reporting.test_timeout == 0
    picked = config_from_args(["--config", path, "--profile", "p"])
    assert picked.selection.repeat == 3 and picked.reporting.force and picked.reporting.test_timeout == 30
    assert picked.reporting.junit_xml == str(tmp_path / "reports" / "out.xml")
    cli = config_from_args(["--config", path, "--sys-config=p", "--repeat=1", "--no-force",
                            "--suite=other"])
    assert cli.selection.repeat == 1 and not cli.reporting.force and cli.selection.suites == ["other"] and cli.reporting.test_timeout == 30


def test_suitepath_file_is_read_and_beats_nothing_given(tmp_path):
    (tmp_path / "kewpie.toml").write_text("[defaults]\nrepeat = 4\n")
    assert config_from_args([f"--suitepath={tmp_path}"]).selection.repeat == 4
    assert config_from_args([f"--suitepath={tmp_path}", "--no-config"]).selection.repeat == 1
    assert config_from_args([f"--suitepath={tmp_path}", "--repeat=2"]).selection.repeat == 2


def test_a_files_bad_value_names_the_file_and_key(tmp_path):
    path = _config_file(tmp_path, "[profiles.p]\nrepeat = 0\nparallel = 2\nkeep-failed = true\n")
    with pytest.raises(KewpieError, match=r"--repeat must be at least 1 \(set in .*my.toml: "
                                          r"\[profiles.p\] repeat\)"):
        config_from_args(["--config", path, "--profile=p"])
    with pytest.raises(KewpieError, match=r"--keep-failed needs --parallel 1 .*\(set in "
                                          r".*keep-failed; .*parallel\)"):
        config_from_args(["--config", path, "--profile=p", "--repeat=1"])
    with pytest.raises(KewpieError) as info:  # the command line's own mistakes blame no file
        config_from_args(["--config", path, "--repeat=0"])
    assert "set in" not in str(info.value)


@pytest.mark.parametrize("argv, message", [
    (["--config=x.toml", "--no-config"], "choose one of --config FILE and --no-config"),
    (["--profile=p", "--no-config"], "--profile p needs a config file"),
])
def test_config_options_that_contradict(argv, message):
    with pytest.raises(KewpieError, match=message):
        config_from_args(argv)


def test_example_file_profiles_all_make_valid_configs():
    from lib.cli import resolve_args
    profiles = ("xtrabackup", "percona-xtradb-cluster", "ci", "debug")
    for name in profiles:
        cfg = config_from_args(["--config", EXAMPLE, "--profile", name])
        assert isinstance(cfg, RunConfig)
    assert config_from_args(["--config", EXAMPLE, "--profile=xtrabackup"]).selection.suites == ["xtrabackup_basic"]
    pxc = config_from_args(["--config", EXAMPLE, "--profile=percona-xtradb-cluster"])
    assert pxc.servers.default_server_type == "galera" and pxc.selection.suites == ["cluster_basic", "cluster_sst"]
    import tomllib
    with open(EXAMPLE, "rb") as handle:
        assert set(tomllib.load(handle)["profiles"]) == set(profiles)
    assert resolve_args(["--config", EXAMPLE]).profile is None


def test_list_options_prints_settings_and_sources_and_starts_nothing(tmp_path, capsys):
    from lib.cli import main
    path = _config_file(tmp_path, "[defaults]\nrepeat = 2\n[profiles.p]\nno-shm = true\n")
    workdir = tmp_path / "wd"
    status = main(["--config", path, "--profile=p", "--list-options", "--parallel=3",
                   f"--workdir={workdir}"])
    out = capsys.readouterr().out
    assert status == 0
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in out.splitlines()
            if line.startswith("  --")}
    assert rows["--repeat"] == ["2", f"{path}: [defaults] repeat"]
    assert rows["--shm"] == ["false", f"{path}: [profiles.p] no-shm"]
    assert rows["--parallel"] == ["3", "command line"]
    assert rows["--force"] == ["false", "default"]
    assert f"# config files (weakest first): {path}" in out and "# profile: p" in out
    assert not workdir.exists()


def test_bad_config_file_is_one_error_line_and_exit_2(tmp_path, capsys):
    from lib.cli import main
    path = _config_file(tmp_path, "[defaults]\nrepeat = 'two'\n")
    assert main(["--config", path, f"--workdir={tmp_path / 'wd'}"]) == 2
    out = capsys.readouterr().out
    errors = [line for line in out.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and f"{path}: [defaults] repeat" in errors[0], out
    assert not (tmp_path / "wd").exists()


def test_run_config_server_timeouts_are_the_servers_own():
    """lib/config/ writes them down without importing lib.servers (--help stays fast)."""
    from lib.servers.server import ServerSettings
    assert RunConfig().servers.start_timeout == ServerSettings.start_timeout
    assert RunConfig().servers.shutdown_timeout == ServerSettings.shutdown_timeout
