"""--mode=replay: a corpus of reproducers replayed on every code tree (docs/hunting.md).

``options.py``: its options and section (:class:`~.options.ReplayOptions`); ``run.py``:
the replay over bots (its corpus, classification, matrix and reports are in
:mod:`lib.replay`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ModeSpec
from .options import NAME, add_options, misplaced, section, test_paths

if TYPE_CHECKING:
    from ...run.environment import RunEnvironment


def run(env: RunEnvironment) -> int:
    """--mode=replay over env; the exit status."""
    from .run import run_replay
    return run_replay(env)


MODE = ModeSpec(NAME, "a corpus of reproducers (the TEST arguments: .sql/.test files or "
                      "folders) on every code tree (docs/hunting.md)", run,
                add_options=add_options, section=section, misplaced=misplaced,
                known_bugs=True, test_paths=test_paths)
