"""kewpie.toml on real runs (lib/cli.py, lib/run/configfile.py): a suite path's file and its
profile change a run as docs/configuration.md says, and the command line overrides them.

Covers: lib/cli.py, lib/run/configfile.py
"""
import os

from tests.conftest import ROOT, tagged

CONFIGURED = os.path.join(ROOT, "tests", "fixtures", "configured")  # kewpie.toml + config_probe


def _errors(out: str) -> list[str]:
    return [line for line in out.splitlines() if " ERROR " in line]


def test_profile_changes_the_run_and_the_command_line_overrides_it(kewpie):
    plain = kewpie.run(f"--suitepath={CONFIGURED}")  # [defaults] picks the suite
    assert plain.returncode == 0, plain.stdout
    assert "config_probe.probe_test" in plain.stdout and "Executed 1/1 test cases" in plain.stdout
    assert "MAX_CONNECTIONS=77" not in plain.stdout

    profiled = kewpie.run(f"--suitepath={CONFIGURED}", "--profile=probe")
    assert profiled.returncode == 0, profiled.stdout
    assert "Executed 2/2 test cases" in profiled.stdout  # repeat = 2
    assert profiled.stdout.count("MAX_CONNECTIONS=77") == 2  # mysqld = ["--max-connections=77"]
    toml = os.path.join(CONFIGURED, "kewpie.toml")
    assert f"INFO Settings from {toml}, profile probe" in profiled.stdout

    overridden = kewpie.run(f"--suitepath={CONFIGURED}", "--profile=probe", "--repeat=1",
                            "--mysqld=--max-connections=66")
    assert overridden.returncode == 0, overridden.stdout
    assert "Executed 1/1 test cases" in overridden.stdout
    assert "MAX_CONNECTIONS=66" in overridden.stdout and "MAX_CONNECTIONS=77" not in overridden.stdout
    assert tagged(kewpie.workdir) == []


def test_list_options_shows_sources_and_starts_nothing(kewpie):
    proc = kewpie.run(f"--suitepath={CONFIGURED}", "--profile=probe", "--list-options",
                      "--repeat=3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    toml = os.path.join(CONFIGURED, "kewpie.toml")
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in proc.stdout.splitlines()
            if line.startswith("  --")}
    assert rows["--suite"] == ['["config_probe"]', f"{toml}: [defaults] suite"]
    assert rows["--mysqld"] == ['["--max-connections=77"]', f"{toml}: [profiles.probe] mysqld"]
    assert rows["--repeat"] == ["3", "command line"]
    assert rows["--parallel"] == ["1", "default"]
    assert not os.path.exists(kewpie.workdir)


def test_bad_config_file_is_one_error_line_exit_2_nothing_started(kewpie, tmp_path):
    bad = tmp_path / "kewpie.toml"
    bad.write_text("[profiles.probe]\ntest-timeout = 'soon'\n")
    proc = kewpie.run(f"--config={bad}", "--profile=probe", f"--suitepath={CONFIGURED}")
    assert proc.returncode == 2, proc.stdout
    errors = _errors(proc.stdout)
    assert len(errors) == 1 and f"{bad}: [profiles.probe] test-timeout" in errors[0], proc.stdout
    assert not os.path.exists(kewpie.workdir) and tagged(kewpie.workdir) == []
    unknown = kewpie.run(f"--suitepath={CONFIGURED}", "--profile=nosuch")
    assert unknown.returncode == 2
    errors = _errors(unknown.stdout)
    assert len(errors) == 1 and "no [profiles.nosuch]" in errors[0] and "probe" in errors[0]
