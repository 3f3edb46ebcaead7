"""Where the results history's password may be given: KEWPIE_HISTORY_DSN, or a config
file only its owner may read (refused otherwise), never the command line (refused, for
``kewpie history`` and the pytest plugin too); ``--list-options`` shows every secret
as ``***``; kewpie drops the variable from its environment once read.

Covers: lib/cli.py (the store's DSN), lib/run/configfile.py (private files, the
environment's settings, --list-options), lib/history/commands.py (target_of),
lib/pytest_plugin/options.py (history_dsn), lib/pytest_plugin/plugin.py (the report header)
"""
from __future__ import annotations

import os
import re

import pytest

from lib.errors import UsageError
from lib.history.errors import HistoryUsageError
from lib.platform.secrets import HISTORY_DSN_ENV

PW = "Kx7-s3cr3t"
DSN = f"mysql://hist:{PW}@127.0.0.1:3306/kewpie_history"
SHOWN = "mysql://hist:***@127.0.0.1:3306/kewpie_history"


def _toml(tmp_path, text: str, mode: int) -> str:
    path = tmp_path / "private.toml"
    path.write_text(text)
    os.chmod(path, mode)
    return str(path)


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\d{8}-\d{6} ERROR ", line)]


@pytest.fixture(autouse=True)
def _no_dsn_in_env(monkeypatch):
    monkeypatch.delenv(HISTORY_DSN_ENV, raising=False)


def test_the_environment_gives_the_dsn_below_the_command_line(monkeypatch, tmp_path):
    from lib.cli import config_from_args, settings_from_args
    monkeypatch.setenv(HISTORY_DSN_ENV, DSN)
    config, resolved = settings_from_args(["--no-config"])
    assert config.history.dsn == DSN
    assert resolved.settings["history_dsn"].source == f"environment {HISTORY_DSN_ENV}"
    # a store named on the command line wins over the environment
    assert config_from_args(["--no-config", "--history-dsn=mysql://u@h:1/x"]).history.dsn \
        == "mysql://u@h:1/x"
    assert config_from_args(["--no-config", f"--history={tmp_path}/h.sqlite"]).history.dsn == ""
    # and the environment over a config file's
    path = _toml(tmp_path, '[defaults]\nhistory-dsn = "mysql://file@h:1/x"\n', 0o644)
    assert config_from_args([f"--config={path}"]).history.dsn == DSN
    monkeypatch.setenv(HISTORY_DSN_ENV, "not-a-dsn")
    with pytest.raises(UsageError, match=f"set in environment {HISTORY_DSN_ENV}"):
        config_from_args(["--no-config"])


@pytest.mark.parametrize("option", ["--history-dsn", "--results-db-dsn"])
def test_a_password_on_the_command_line_is_refused(option, capsys, tmp_path):
    from lib.cli import main
    assert main([f"{option}={DSN}", "--no-config", f"--workdir={tmp_path}/wd"]) == 2
    out = capsys.readouterr()
    text = out.out + out.err
    errors = _errors(text)
    assert len(errors) == 1 and PW not in text, text
    assert SHOWN in errors[0] and HISTORY_DSN_ENV in errors[0] and "(ps)" in errors[0]
    assert not os.path.exists(f"{tmp_path}/wd")  # nothing started, nothing made
    # without a password it is fine
    from lib.cli import config_from_args
    assert config_from_args([f"{option}=mysql://hist@h:1/db", "--no-config"]).history.dsn


def test_a_config_file_with_a_password_must_be_private(tmp_path):
    from lib.cli import config_from_args
    text = f'[defaults]\nrepeat = 1\n\n[profiles.ci]\nhistory-dsn = "{DSN}"\n'
    for mode, who in ((0o644, "its group and others"), (0o640, "its group"), (0o604, "others")):
        path = _toml(tmp_path, text, mode)
        with pytest.raises(UsageError) as caught:
            config_from_args([f"--config={path}"])
        message = str(caught.value)
        assert PW not in message
        assert message.startswith(f"{path}: [profiles.ci] history-dsn: holds a password, "
                                  f"and {who} may read {path} (mode {mode:04o})"), message
        assert f"chmod 600 {path}" in message and HISTORY_DSN_ENV in message
    path = _toml(tmp_path, text, 0o600)
    assert config_from_args([f"--config={path}", "--profile=ci"]).history.dsn == DSN
    # a file others may read is fine while it holds no password (a server option's
    # secret is the test servers' own: shown as ***, not refused)
    path = _toml(tmp_path, '[defaults]\nhistory-dsn = "mysql://hist@h:1/db"\n'
                           'mysqld = ["--loose-wsrep-sst-auth=u:x"]\n', 0o644)
    assert config_from_args([f"--config={path}"]).history.dsn == "mysql://hist@h:1/db"


def test_list_options_shows_no_secret(monkeypatch, capsys, tmp_path):
    from lib.cli import main
    path = _toml(tmp_path, f'[defaults]\nhistory-dsn = "{DSN}"\n'
                           f'mysqld = ["--loose-wsrep-sst-auth=u:{PW}", "--max-connections=9"]\n',
                 0o600)
    assert main([f"--config={path}", "--list-options"]) == 0
    text = capsys.readouterr().out
    assert PW not in text, text
    assert re.search(r"--history-dsn\s+\"" + re.escape(SHOWN) + r"\"\s+" + re.escape(path), text)
    assert '"--loose-wsrep-sst-auth=***", "--max-connections=9"' in text
    assert "< environment < command line" in text
    monkeypatch.setenv(HISTORY_DSN_ENV, DSN)
    assert main(["--no-config", "--list-options"]) == 0
    text = capsys.readouterr().out
    assert PW not in text and f"environment {HISTORY_DSN_ENV}" in text, text
    assert HISTORY_DSN_ENV not in os.environ  # read, then dropped: no child inherits it


def test_kewpie_history_takes_the_dsn_from_the_environment_not_its_command_line(monkeypatch,
                                                                                capsys):
    from lib.cli import main
    from lib.history.commands import Defaults, build_parser, target_of
    args = build_parser().parse_args(["runs", f"--history-dsn={DSN}"])
    with pytest.raises(HistoryUsageError, match="a password on the command line") as caught:
        target_of(args, Defaults(workdir="/w"))
    assert PW not in str(caught.value)
    assert main(["history", "runs", f"--history-dsn={DSN}", "--no-config"]) == 2
    out = capsys.readouterr()
    assert PW not in out.out + out.err and len(_errors(out.out + out.err)) == 1
    # from the environment: the settings' default
    target = target_of(build_parser().parse_args(["runs"]), Defaults(workdir="/w",
                                                                      history_dsn=DSN))
    assert target.dsn == DSN and target.display == SHOWN


class _PytestConfig:
    """The little of pytest.Config the plugin's DSN reads."""

    def __init__(self, option: str | None = None, ini: str = "", inipath=None) -> None:
        self.option, self.ini, self.inipath = option, ini, inipath

    def getoption(self, name: str, default=None):
        assert name == "kewpie_history_dsn"
        return self.option

    def getini(self, name: str) -> str:
        assert name == "kewpie_history_dsn"
        return self.ini


def test_the_pytest_plugin_takes_the_dsn_as_the_command_line_does(monkeypatch, tmp_path):
    from lib.pytest_plugin.options import history_dsn
    from lib.pytest_plugin.plugin import pytest_report_header
    assert history_dsn(_PytestConfig()) == "" and pytest_report_header(_PytestConfig()) == []
    with pytest.raises(pytest.UsageError, match="a password on the command line") as caught:
        history_dsn(_PytestConfig(option=DSN))
    assert PW not in str(caught.value)
    ini = tmp_path / "pytest.ini"
    ini.write_text(f"[pytest]\nkewpie_history_dsn = {DSN}\n")
    os.chmod(ini, 0o644)
    with pytest.raises(pytest.UsageError, match="others may read") as caught:
        history_dsn(_PytestConfig(ini=DSN, inipath=ini))
    assert PW not in str(caught.value)
    os.chmod(ini, 0o600)
    assert history_dsn(_PytestConfig(ini=DSN, inipath=ini)) == DSN
    assert history_dsn(_PytestConfig(option="mysql://hist@h:1/db")) == "mysql://hist@h:1/db"
    with pytest.raises(pytest.UsageError, match="expected mysql://"):
        history_dsn(_PytestConfig(option="http://x/y"))
    monkeypatch.setenv(HISTORY_DSN_ENV, DSN)
    assert history_dsn(_PytestConfig(ini="mysql://other@h:1/db", inipath=ini)) == DSN
    header = pytest_report_header(_PytestConfig())
    assert header == [f"kewpie: results history {SHOWN} (from {HISTORY_DSN_ENV})"]


def test_resolve_puts_the_environment_between_files_and_command_line():
    from lib.run.configfile import COMMAND_LINE, ConfigFile, Setting, resolve
    from types import MappingProxyType
    files = [ConfigFile("/f.toml", MappingProxyType({"history_dsn": Setting("file", "/f.toml")}),
                        MappingProxyType({}))]
    env = {"history_dsn": Setting("env", "environment X")}
    assert resolve({"history_dsn": ""}, {}, files, None, env).settings["history_dsn"].value == "env"
    given = resolve({}, {"history_dsn": "cli"}, files, None, env).settings["history_dsn"]
    assert (given.value, given.source) == ("cli", COMMAND_LINE)
