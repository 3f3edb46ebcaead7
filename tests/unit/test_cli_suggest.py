"""A misspelt option on the command line gets "did you mean" (as in kewpie.toml), and
--list-options shows the defaults a mode really uses (mtr's 900 s test timeout).

Covers: lib/cli.py (KewpieParser, did_you_mean), lib/run/configfile.py
(with_mode_defaults), lib/modes/mtr/__init__.py
"""
from __future__ import annotations

import pytest

from lib.cli import build_parser, did_you_mean, main
from lib.config.sections import MTR_TEST_TIMEOUT
from lib.modes.table import mode_named
from lib.run.configfile import Resolved, Setting, with_mode_defaults


def test_an_unknown_option_names_the_closest(capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--paralel=2", "--suite=main"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --paralel=2 (did you mean --parallel?)" in \
        capsys.readouterr().err


def test_no_suggestion_for_what_is_close_to_nothing():
    assert did_you_mean("unrecognized arguments: --zzzzzz", ["--parallel"]) == ""
    assert did_you_mean("argument --parallel: invalid int value", ["--parallel"]) == ""


def test_mtr_mode_shows_its_test_timeout():
    resolved = Resolved({"test_timeout": Setting(0.0)}, (), None)
    shown = with_mode_defaults(resolved, "mtr", mode_named("mtr").defaults)
    assert shown.settings["test_timeout"].value == MTR_TEST_TIMEOUT == 900.0
    assert shown.settings["test_timeout"].source.startswith("default of --mode=mtr: ")
    given = Resolved({"test_timeout": Setting(30.0, "command line")}, (), None)
    assert with_mode_defaults(given, "mtr", mode_named("mtr").defaults) \
        .settings["test_timeout"].value == 30.0


def test_list_options_of_mtr_mode(capsys):
    assert main(["--mode=mtr", "--list-options"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if "--test-timeout" in l)
    assert "900.0" in line and "mtr's --testcase-timeout" in line
