"""--mode=reduce: a hunt's finding reduced to a minimal mysql-test case (docs/hunting.md).

``options.py``: its options and section (:class:`~.options.ReduceOptions`); ``run.py``:
the reduction (its engine is :mod:`lib.reduce`); ``wholerun.py``: a hunt's run folder,
one finding per signature reduced by ``run.py``, and the triage table."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ModeSpec
from .options import NAME, add_options, section, test_paths

if TYPE_CHECKING:
    from ...run.environment import RunEnvironment


def run(env: RunEnvironment) -> int:
    """--mode=reduce over env (a finding folder, or a hunt's run folder); the exit status."""
    from .wholerun import run_mode
    return run_mode(env)


MODE = ModeSpec(NAME, "a hunt finding (the TEST argument: its folder) to a minimal "
                      "mysql-test case, or every signature of a hunt's run folder "
                      "(docs/hunting.md)", run,
                add_options=add_options, section=section, test_paths=test_paths)
