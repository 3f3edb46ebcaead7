"""RunConfig as the one source of defaults: the checkout root, argparse's defaults and
--help's (every section's and every mode's), and the header's shm line.

Covers: lib/config/, lib/cli.py, lib/run/setup.py, lib/modes/table.py
"""
import os
import types

import pytest
from dataclasses import fields, MISSING


from lib.cli import build_parser, config_from_args
from lib.config import ROOT, RunConfig, Servers
from lib.modes.table import MODES
from lib.run.setup import shm_line


def test_root_is_the_checkout():
    assert os.path.isfile(os.path.join(ROOT, "kewpie.py"))
    assert os.path.isdir(RunConfig().selection.suitepaths[0])


def _plain_defaults(section):
    return {f.name: f.default for f in fields(section) if f.default is not MISSING}


def test_argparse_defaults_are_runconfig_defaults():
    cfg = config_from_args([])
    for name, default in _plain_defaults(RunConfig).items():
        if name != "root":
            assert getattr(cfg, name) == default, name
    for f in fields(RunConfig):
        if f.default is MISSING and f.name != "mode_section":  # a section
            section = getattr(cfg, f.name)
            for name, default in _plain_defaults(type(section)).items():
                assert getattr(section, name) == default, f"{f.name}.{name}"


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_argparse_defaults_are_each_modes_defaults(mode):
    """A mode's section from the command line's defaults is its section's defaults."""
    argv = {"hunt": ["--grammar=x.yy"], "sweep": ["--sweep-file=s.json"]}.get(mode.name, [])
    cfg = config_from_args([f"--mode={mode.name}", *argv])
    section = cfg.mode_section
    for name, default in _plain_defaults(type(section)).items():
        if f"--{name}" not in " ".join(argv) and name not in ("grammars", "file", "findings"):
            assert getattr(section, name) == default, f"{mode.name}.{name}"


def test_help_shows_the_config_defaults():
    text = " ".join(build_parser().format_help().split())
    for shown in ("(default: 9300)", "(default: 10)", "(default: 60)", "(default: /usr)"):
        assert shown in text


def test_shm_line_says_who_chose_disk():
    wd = types.SimpleNamespace(use_shm=False, path="/w", shm_path="/dev/shm/x")
    assert "--no-shm" in shm_line(RunConfig(servers=Servers(use_shm=False)), wd)
    low = shm_line(RunConfig(servers=Servers(use_shm=True)), wd)
    assert "--no-shm" not in low and "space" in low
    wd.use_shm = True
    assert shm_line(RunConfig(), wd) == "Linking workdir /w to /dev/shm/x"
