"""Issue 27: the option probe's throwaway datadir (lib/servers/help_probe.py) and the
pure parts of the leftover-process check (lib/run/leftovers.py).

Covers: lib/servers/help_probe.py, lib/run/leftovers.py
"""
from __future__ import annotations

import os

import pytest

from lib.errors import SuiteError
from lib.platform.process import TAG_BOT, TAG_RUN, TAG_TEST, TAG_WORKDIR, tool_env
from lib.run.leftovers import Leftover, leftover_report, tagged_environment, tags_for_test
from lib.servers.help_probe import PROBE_PREFIX, help_argv, server_help
from lib.suites.loader import load_suite_config

FAKE_SERVER = """#!/bin/sh
# a stand-in for mariadbd: says where it runs and writes into its --datadir
for arg in "$@"; do
  case "$arg" in --datadir=*) dir="${arg#--datadir=}";; esac
done
echo "args: $*"
echo "cwd: $(pwd)"
touch "$dir/host.lower-test"
"""


def test_probe_argv_keeps_no_defaults_first_and_gives_a_datadir():
    argv = help_argv("/usr/sbin/mariadbd", "/wd/.help-probe-x")
    assert argv[:2] == ["/usr/sbin/mariadbd", "--no-defaults"]
    assert "--datadir=/wd/.help-probe-x" in argv and "--tmpdir=/wd/.help-probe-x" in argv
    assert argv[-2:] == ["--verbose", "--help"]


def test_probe_runs_in_a_throwaway_directory_of_the_workdir(tmp_path):
    fake = tmp_path / "mariadbd"
    fake.write_text(FAKE_SERVER)
    fake.chmod(0o755)
    workdir = tmp_path / "wd"
    workdir.mkdir()
    ran = server_help(str(fake), str(workdir), 30)
    assert ran.ok, ran.stderr
    datadir = ran.stdout.split("--datadir=", 1)[1].split()[0]
    assert os.path.dirname(datadir) == str(workdir)
    assert os.path.basename(datadir).startswith(PROBE_PREFIX)
    assert f"cwd: {datadir}" in ran.stdout
    assert os.listdir(workdir) == []  # removed, with what the probe wrote there


def test_run_tags_and_the_test_tag():
    run = {TAG_WORKDIR: "/wd", TAG_RUN: "r1", TAG_BOT: "r1/bot1", "PATH": "/bin"}
    assert tags_for_test(run, "r1/bot1/3") == {TAG_WORKDIR: "/wd", TAG_RUN: "r1", TAG_BOT: "r1/bot1",
                                           TAG_TEST: "r1/bot1/3"}


def test_tags_are_in_the_environment_only_while_the_test_runs(monkeypatch):
    monkeypatch.setenv(TAG_RUN, "outer")
    monkeypatch.delenv(TAG_TEST, raising=False)
    with tagged_environment({TAG_RUN: "r1", TAG_TEST: "r1/bot1/1"}):
        assert os.environ[TAG_RUN] == "r1" and os.environ[TAG_TEST] == "r1/bot1/1"
        assert TAG_TEST not in tool_env(None, None)  # kewpie's own tools never carry it
        assert tool_env({TAG_TEST: "x"}, None)[TAG_TEST] == "x"
    assert os.environ[TAG_RUN] == "outer" and TAG_TEST not in os.environ


def test_report_names_pid_and_command_and_how_to_keep():
    left = [Leftover(12, "sleep", "sleep 1000"), Leftover(13, "sh", "sh -c 'x'")]
    text = leftover_report(left)
    assert "left 2 process(es) running, stopped by kewpie: pid 12 (sleep 1000); pid 13" in text
    assert "kept_processes" in text and "kept_processes" not in leftover_report(left, False)
    assert leftover_report([]) == ""


def test_kept_processes_in_suite_config(tmp_path):
    (tmp_path / "suite_config.py").write_text("kept_processes = ['sleep', 'socat']\n")
    assert load_suite_config("s", str(tmp_path)).kept_processes == ("sleep", "socat")
    (tmp_path / "suite_config.py").write_text("kept_processes = [3]\n")
    with pytest.raises(SuiteError, match="kept_processes must be a list of process names"):
        load_suite_config("s", str(tmp_path))
