"""Where every mode's run ends: the dispatch, which says the RAM cache's size there, in
one place for every mode that runs servers (native, mtr, hunt, reduce, replay, sweep).

Covers: lib/modes/dispatch.py, lib/servers/ramcache.py (summary_line)
"""
import ast
import os
import types

import pytest

from tests.conftest import ROOT
from tests.parsed import parsed


def _calls_of(name):
    """The modules of lib/ that call a function named name."""
    found = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "lib")):
        for file in files:
            if not file.endswith(".py"):
                continue
            path = os.path.join(dirpath, file)
            tree = parsed(path)
            if any(isinstance(n, ast.Call) and name in (getattr(n.func, "attr", None),
                                                        getattr(n.func, "id", None))
                   for n in ast.walk(tree)):
                found.append(os.path.relpath(path, ROOT))
    return found


def test_the_cache_line_is_said_in_one_place():
    assert _calls_of("summary_line") == ["lib/modes/dispatch.py"]
    assert _calls_of("say_cache") == ["lib/modes/dispatch.py"]


def _run(tmp_path, monkeypatch, run, **config):
    """run_mode over a stand-in environment and a planted mode whose run is run; the
    lines the run logged."""
    from lib.config.run_config import RunConfig
    from lib.modes import dispatch
    from lib.modes.spec import ModeSpec
    lines = []
    monkeypatch.setattr(dispatch, "configure", lambda *args, **kwargs: None)
    monkeypatch.setattr(dispatch, "mode_named", lambda name: ModeSpec(name, "planted", run))
    env = types.SimpleNamespace(
        config=RunConfig(**config), open_workdir=lambda fresh: None, discover_tree=lambda: None,
        workdir=types.SimpleNamespace(log_file=str(tmp_path / "kewpie.log"),
                                      cache_root=str(tmp_path / "cache")),
        log=types.SimpleNamespace(info=lines.append))
    return dispatch.run_mode(env), lines


def test_a_run_ends_with_the_cache_line(tmp_path, monkeypatch):
    for mode in ("hunt", "replay", "sweep", "native"):
        status, lines = _run(tmp_path, monkeypatch, lambda env: 1, mode=mode)
        assert status == 1 and lines == [
            f"Cache {tmp_path / 'cache'}: 0 MB (cap 2048 MB; 0 datadir template(s), 0 cluster "
            f"snapshot(s)); --mode=cleanup --drop-cache empties it"], mode


def test_start_and_exit_and_a_run_that_raised_say_nothing_more(tmp_path, monkeypatch):
    """--start-and-exit's servers go on running; a run that raised ends with its error."""
    assert _run(tmp_path, monkeypatch, lambda env: 0, start_and_exit=True) == (0, [])

    def fails(env):
        raise KeyError("planted")
    with pytest.raises(KeyError):
        _run(tmp_path, monkeypatch, fails, mode="hunt")
