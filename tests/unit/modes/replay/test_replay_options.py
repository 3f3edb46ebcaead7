"""--mode=replay's options and section: the corpus made absolute, its options only with
its mode, a timeout that can work, --allow-known refused, the mode in the one table and
its output folder and corpus classified in PATH_TABLE.

Covers: lib/modes/replay/options.py, lib/modes/replay/__init__.py, lib/modes/table.py,
lib/cli.py (PATH_TABLE's TEST and replay-out)
"""
import pytest

from lib.cli import PATH_TABLE, config_from_args, path_values
from lib.errors import KewpieError
from lib.modes.replay.options import ReplayOptions
from lib.modes.table import MODES, mode_named
from lib.platform.pathoptions import PathRole, PathShape


def test_the_corpus_is_the_test_arguments_made_absolute(tmp_path, monkeypatch):
    (tmp_path / "bugs").mkdir()
    monkeypatch.chdir(tmp_path)
    config = config_from_args(["--mode=replay", "bugs", "--replay-timeout=5",
                               f"--replay-out={tmp_path / 'out'}"])
    own = config.section(ReplayOptions)
    assert own.corpus == (str(tmp_path / "bugs"),) and own.timeout == 5.0
    assert own.out == str(tmp_path / "out")
    paths = path_values(config)
    assert paths["TEST"] == [str(tmp_path / "bugs")]
    assert paths["replay-out"] == [str(tmp_path / "out")]


def test_another_modes_run_reads_the_defaults():
    config = config_from_args([])
    assert config.section(ReplayOptions) == ReplayOptions()


@pytest.mark.parametrize("argv, message", [
    (["--replay-timeout=5"], "--replay-timeout: only with --mode=replay"),
    (["--replay-out=/tmp/x"], "--replay-out: only with --mode=replay"),
    (["--mode=replay", "--replay-timeout=0.5", "x"], "at least 1"),
    (["--mode=replay", "--replay-timeout=nan", "x"], "at least 1"),
    (["--mode=replay", "--allow-known", "x"], "--allow-known: not with --mode=replay"),
    (["--mode=sweep", "--sweep-file=/etc/hostname", "--known-bugs=/etc/hostname",
      "--allow-known"], "--mode=replay; this run is --mode=sweep"),
])
def test_options_that_cannot_work_are_one_error(argv, message):
    with pytest.raises(KewpieError, match=message.replace("-", r"\-")):
        config_from_args(argv)


def test_the_mode_is_in_the_table_and_judges_known_bugs():
    mode = mode_named("replay")
    assert mode in MODES and mode.known_bugs and mode.test_paths("a/b.sql")


def test_its_paths_are_classified():
    assert "replay.corpus" in PATH_TABLE["TEST"].fields
    assert PATH_TABLE["TEST"].role is PathRole.input
    assert PATH_TABLE["TEST"].shape is PathShape.tree
    out = PATH_TABLE["replay-out"]
    assert out.role is PathRole.output and out.shape is PathShape.folder
    assert out.fields == ("replay.out",)
