"""--help is laid out for the terminal's width as argparse lays it out, without the
shutil import argparse would make for it (a few ms of every ``--help``), and the
command line's imports leave the run's modules, logging and the stop signals' relay
for the run (docs/startup.md).

Covers: lib/cli.py (terminal_columns, HelpFormatter, build_parser, main)
"""
from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys

import pytest

from lib.cli import HelpFormatter, build_parser, terminal_columns
from tests.conftest import ROOT


@pytest.mark.parametrize("columns", ["40", "80", "132", "250"])
def test_help_is_argparse_layout_at_that_width(monkeypatch: pytest.MonkeyPatch,
                                                columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    ours = build_parser().format_help()
    parser = build_parser()
    parser.formatter_class = argparse.HelpFormatter  # argparse's own, asking shutil
    assert ours == parser.format_help()


@pytest.mark.parametrize("value", ["", "0", "-3", "wide"])
def test_a_missing_or_bad_columns_is_the_terminal_or_80(monkeypatch: pytest.MonkeyPatch,
                                                         value: str) -> None:
    monkeypatch.setenv("COLUMNS", value)
    import shutil
    assert terminal_columns() == shutil.get_terminal_size().columns


def test_an_explicit_width_is_kept() -> None:
    ours, theirs = build_parser(), build_parser()
    ours.formatter_class = functools.partial(HelpFormatter, width=60)  # type: ignore[assignment]
    theirs.formatter_class = functools.partial(argparse.HelpFormatter, width=60)  # type: ignore[assignment]
    assert ours.format_help() == theirs.format_help()


RUN_ONLY = ("shutil", "logging", "json", "signal", "queue", "lib.run.environment",
            "lib.platform.interrupts", "lib.platform.logsetup")


def test_help_imports_no_run_module_logging_or_shutil() -> None:
    code = ("import os, sys\n"
            "sys.argv = ['kewpie.py', '--help']\n"
            "sys.stdout = open(os.devnull, 'w')\n"
            "from lib.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"sys.stderr.write(' '.join(n for n in {RUN_ONLY!r} if n in sys.modules))\n")
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, env={**os.environ, "COLUMNS": "100"})
    assert out.stderr.split() == []
