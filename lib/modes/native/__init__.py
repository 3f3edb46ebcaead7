"""--mode=native (the default): kewpie's own suites of unittest tests (docs/writing-tests.md).

``run.py``: select, start the first test's servers early, run the bots (the run's
machinery is :mod:`lib.run`); ``start_and_exit.py``: --start-and-exit; ``early_start.py``:
the first test's servers booted while the rest is prepared."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ModeSpec

if TYPE_CHECKING:
    from ...run.environment import RunEnvironment


def run(env: RunEnvironment) -> int:
    """The native run over env; the exit status."""
    from .run import run_native
    return run_native(env)


def list_tests(env: RunEnvironment) -> int:
    """--list: the selected tests of this shard."""
    from .run import list_tests as list_selected
    return list_selected(env)


MODE = ModeSpec("native", "run tests", run, list_tests=list_tests, known_bugs=True)
