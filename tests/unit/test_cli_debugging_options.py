"""The debugging options of the command line (docs/debugging.md): into the RunConfig,
refused when bad, and each in --help.

Covers: lib/cli.py, lib/config/
"""
import re

import pytest

from lib.cli import build_parser, config_from_args
from lib.errors import KewpieError


def test_debugging_options_reach_the_config():
    cfg = config_from_args(["--valgrind", "--valgrind-option=--track-origins=yes",
                            "--keep-failed", "--do-test=main", "--skip-test", "crash",
                            "--combination=row,mixed", "--start-from=main.basic",
                            "--mysqld=--max-connections=77", "--mysqld=--sql-mode=",
                            "--no-check-warnings", "--enable-disabled", "--test-debug",
                            "--start-dirty", "--libeatmydata"])
    assert cfg.debugging.valgrind and cfg.debugging.valgrind_options == ["--track-origins=yes"]
    assert cfg.debugging.keep_failed and cfg.selection.do_test == ["main"] and cfg.selection.skip_test == ["crash"]
    assert cfg.selection.combinations == ["row", "mixed"] and cfg.selection.start_from == "main.basic"
    assert cfg.servers.mysqld_options == ["--max-connections=77", "--sql-mode="]
    assert not cfg.debugging.check_warnings and cfg.selection.enable_disabled and cfg.debugging.test_debug
    assert cfg.tools.start_dirty and cfg.debugging.libeatmydata


@pytest.mark.parametrize("argv, message", [
    (["--valgrind", "--gdb"], "choose one of --valgrind, --gdb"),
    (["--keep-failed", "--parallel=2"], "--keep-failed needs --parallel 1"),
    (["--do-test=("], "--do-test='(' is not a regular expression"),
])
def test_bad_debugging_options(argv, message):
    with pytest.raises(KewpieError, match=re.escape(message)):
        config_from_args(argv)


def test_help_documents_every_debugging_option():
    text = build_parser().format_help()
    for option in ("--valgrind", "--valgrind-option", "--rr", "--gdb", "--manual-gdb",
                   "--server-wrapper", "--libeatmydata", "--keep-failed", "--no-check-warnings",
                   "--do-test", "--skip-test", "--enable-disabled", "--start-from",
                   "--combination", "--test-debug", "--gendata", "--start-dirty", "--mysqld"):
        assert option in text
    for action in build_parser()._actions:
        assert action.help, f"{action.option_strings} has no help"
