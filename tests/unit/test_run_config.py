"""RunConfig as the one source of defaults: the checkout root, argparse's defaults and
--help's, and the header's shm line.

Covers: lib/run/config.py, lib/cli.py, lib/run/setup.py
"""
import os
import types
from dataclasses import fields, MISSING


from lib.cli import build_parser, config_from_args
from lib.run.config import ROOT, RunConfig
from lib.run.setup import shm_line


def test_root_is_the_checkout():
    assert os.path.isfile(os.path.join(ROOT, "kewpie.py"))
    assert os.path.isdir(RunConfig().suitepaths[0])


def test_argparse_defaults_are_runconfig_defaults():
    cfg = config_from_args([])
    for f in fields(RunConfig):
        if f.default is not MISSING and f.name not in ("root",):
            assert getattr(cfg, f.name) == f.default, f.name


def test_help_shows_the_config_defaults():
    text = " ".join(build_parser().format_help().split())
    for shown in ("(default: 9300)", "(default: 10)", "(default: 60)", "(default: /usr)"):
        assert shown in text


def test_shm_line_says_who_chose_disk():
    wd = types.SimpleNamespace(use_shm=False, path="/w", shm_path="/dev/shm/x")
    assert "--no-shm" in shm_line(RunConfig(use_shm=False), wd)
    low = shm_line(RunConfig(use_shm=True), wd)
    assert "--no-shm" not in low and "space" in low
    wd.use_shm = True
    assert shm_line(RunConfig(), wd) == "Linking workdir /w to /dev/shm/x"
