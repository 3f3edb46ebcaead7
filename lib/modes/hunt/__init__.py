"""--mode=hunt: random loads in trials, judged by oracles (docs/hunting.md).

``options.py``: its options and section (:class:`~.options.HuntOptions`); ``run.py``:
the hunt (its trials, oracles and findings are in :mod:`lib.hunt`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ModeSpec
from .options import NAME, add_options, misplaced, section

if TYPE_CHECKING:
    from ...run.environment import RunEnvironment


def run(env: RunEnvironment) -> int:
    """--mode=hunt over env; the exit status."""
    from .run import run_hunt
    return run_hunt(env)


MODE = ModeSpec(NAME, "random loads in trials with oracles (docs/hunting.md)", run,
                add_options=add_options, section=section, misplaced=misplaced,
                known_bugs=True)
