"""Harness-level failures end the same way: one ERROR line, exit 2 (or 129 for
SIGHUP), and no server left running.

Covers: lib/cli.py, lib/run/environment.py, lib/servers/state.py
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from lib import cli
from lib.servers.state import StateFile
from tests.conftest import FIXTURE_SUITES, KEWPIE, make_workdir, tagged


def _error_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if " ERROR " in line]


def test_sighup_mid_test_stops_everything(kewpie):
    proc = kewpie.popen(f"--suitepath={FIXTURE_SUITES}", "--suite=slow")
    for line in proc.stdout:
        if "SLEEPING" in line:
            break
    assert tagged(kewpie.workdir), "the server should be running"
    proc.send_signal(signal.SIGHUP)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 129, out
    assert "Interrupted by signal 1" in out
    assert tagged(kewpie.workdir) == []


def test_exception_in_cleanup_is_exit_2_and_servers_stopped(tmp_path_factory, monkeypatch, capsys):
    workdir = make_workdir(tmp_path_factory, "cleanupfail")

    def broken_clear(_self):
        raise RuntimeError("simulated failure while clearing state")

    monkeypatch.setattr(StateFile, "clear", broken_clear)
    status = cli.main([f"--workdir={workdir}", "--suite=main", "basic"])
    assert status == 2
    assert tagged(workdir) == []


@pytest.mark.parametrize("option", ["--test-timeout=-5", "--server-start-timeout=0",
                                    "--server-start-timeout=nan", "--tolerance=-1"])
def test_bad_numbers_are_usage_errors(kewpie, option):
    proc = kewpie.run("--suite=main", option)
    assert proc.returncode == 2, proc.stdout
    errors = _error_lines(proc.stdout)
    assert len(errors) == 1 and option.split("=")[0] in errors[0]


def test_empty_selection_is_a_usage_error(kewpie, tmp_path):
    suite = tmp_path / "suites" / "empty"
    suite.mkdir(parents=True)
    (suite / "suite_config.py").write_text("server_requirements = [[]]\nserver_requests = {}\n")
    for extra in ([], ["--list"]):
        proc = kewpie.run(f"--suitepath={tmp_path / 'suites'}", "--suite=empty", *extra)
        assert proc.returncode == 2, proc.stdout
        errors = _error_lines(proc.stdout)
        assert len(errors) == 1 and "no test selected" in errors[0], proc.stdout
    assert tagged(kewpie.workdir) == []


def test_unwritable_workdir_is_one_clear_line():
    """As an unprivileged user, a workdir under a root-owned directory cannot be made."""
    parent = tempfile.mkdtemp(prefix="kewpie-rootonly-", dir="/tmp")
    os.chmod(parent, 0o755)
    workdir = os.path.join(parent, "wd")
    argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
            sys.executable, KEWPIE, f"--workdir={workdir}", "--suite=main", "basic"]
    env = dict(os.environ, KEWPIE_NO_VENV="1")
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL, cwd="/")
    assert time.monotonic() - started < 30
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = _error_lines(proc.stdout)
    assert len(errors) == 1, proc.stdout + proc.stderr
    assert "internal error" not in errors[0]
    assert str(workdir) in errors[0] and "ermission denied" in errors[0]
    assert "Traceback" not in proc.stdout + proc.stderr
    shutil.rmtree(parent)
