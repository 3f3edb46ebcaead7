"""Bad input: one clear error line, exit status 2, nothing left running.

Covers: lib/cli.py, lib/errors.py, lib/run/selection.py, lib/suites/loader.py,
lib/platform/logtail.py
"""
import os

from tests.conftest import tagged


def _error_lines(out: str) -> list[str]:
    return [l for l in out.splitlines() if " ERROR " in l]


def test_unknown_suite(kewpie):
    proc = kewpie.run("--suite=no_such_suite")
    assert proc.returncode == 2
    errors = _error_lines(proc.stdout)
    assert len(errors) == 1 and "unknown suite 'no_such_suite'" in errors[0]
    assert "main" in errors[0]


def test_unknown_test(kewpie):
    proc = kewpie.run("--suite=main", "nonexistent_test")
    assert proc.returncode == 2
    assert len(_error_lines(proc.stdout)) == 1


def test_suite_config_syntax_error(kewpie, tmp_path):
    suite = tmp_path / "suites" / "broken"
    suite.mkdir(parents=True)
    (suite / "suite_config.py").write_text("server_requirements = [[]\nserver_requests = {}\n")
    (suite / "x_test.py").write_text("import unittest\n")
    proc = kewpie.run(f"--suitepath={tmp_path / 'suites'}", "--suite=broken")
    assert proc.returncode == 2
    errors = _error_lines(proc.stdout)
    assert len(errors) == 1
    assert "suite_config.py:1: syntax error" in errors[0]


def test_basedir_without_server(kewpie, tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "mariadb").write_text("#!/bin/sh\n")
    proc = kewpie.run(f"--basedir={tmp_path}")
    assert proc.returncode == 2
    errors = _error_lines(proc.stdout)
    assert len(errors) == 1
    assert "no server binary (mariadbd or mysqld)" in errors[0] and str(tmp_path) in errors[0]


def test_server_that_cannot_start_fails_fast_with_log_tail(kewpie):
    suites = os.path.join(os.path.dirname(__file__), "..", "fixtures", "suites")
    proc = kewpie.run(f"--suitepath={suites}", "--suite=badserver")
    assert proc.returncode == 1, proc.stdout
    assert "[ fail ]" in proc.stdout
    assert "exited with status" in proc.stdout
    assert "no-such-option-kewpie" in proc.stdout  # the error log tail names it
    assert tagged(kewpie.workdir) == []
