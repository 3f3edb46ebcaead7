"""--mode=sweep: a sysbench sweep file and its regression check (docs/sysbench.md).

``options.py``: its options and section (:class:`~.options.SweepOptions`); ``run.py``:
the sweep (sysbench's parts are in :mod:`lib.sysbench`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ModeSpec
from .options import NAME, add_options, section

if TYPE_CHECKING:
    from ...run.environment import RunEnvironment


def run(env: RunEnvironment) -> int:
    """--mode=sweep over env; the exit status."""
    from .run import run_sweep_mode
    return run_sweep_mode(env)


MODE = ModeSpec(NAME, "run a sysbench sweep file (docs/sysbench.md)", run,
                add_options=add_options, section=section, workdir="kept")
