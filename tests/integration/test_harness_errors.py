"""Failures inside the harness and at server start still leave nothing running.

Covers: lib/run/environment.py, lib/run/runner.py, lib/run/attempt.py, lib/servers/bootstrap.py
"""
import os
import re

from lib import cli

from lib.run import attempt
from tests.conftest import KewpieRunner, make_workdir, tagged


def test_exception_in_harness_stops_servers(tmp_path_factory, monkeypatch):
    workdir = make_workdir(tmp_path_factory, "internal")

    def broken_judge(*_args, **_kwargs):
        raise RuntimeError("simulated bug in kewpie")

    monkeypatch.setattr(attempt.Attempt, "judge", broken_judge)
    status = cli.main([f"--workdir={workdir}", "--suite=main", "basic"])
    assert status == 2
    assert tagged(workdir) == []
    assert not os.path.exists(os.path.join(workdir, "servers.json"))


def test_start_timeout_reports_error_log_tail(kewpie):
    proc = kewpie.run("--suite=main", "basic", "--server-start-timeout=0.001")
    assert proc.returncode == 1, proc.stdout
    assert re.search(r"did not answer within [0-9.]+s", proc.stdout)
    assert "--- error log tail ---" in proc.stdout


def test_bootstrap_cached_between_runs_and_workdirs(kewpie, tmp_path_factory):
    """The pristine datadir is built at most once per user, whatever the workdir."""
    first = kewpie.run("--suite=main", "basic")
    second = kewpie.run("--suite=main", "basic")
    other = KewpieRunner(make_workdir(tmp_path_factory, "otherwd")).run("--suite=main", "basic")
    assert first.returncode == 0 and second.returncode == 0 and other.returncode == 0
    assert "Taking clean db snapshot" not in second.stdout
    assert "Taking clean db snapshot" not in other.stdout
