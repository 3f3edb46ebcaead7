"""The one table of modes: the command line's ``--mode`` (its choices, help and option
groups) and the dispatch are built from it.  A mode is a folder of lib/modes/ whose
``__init__.py`` gives its :class:`~lib.modes.spec.ModeSpec` (light: its run function
imports the mode's modules when it runs); adding one is a folder and a line here
(docs/architecture.md, "Where new things plug in")."""
from __future__ import annotations

from . import cleanup, hunt, mtr, native, reduce, replay, sweep
from .spec import ModeSpec

MODES: tuple[ModeSpec, ...] = (native.MODE, cleanup.MODE, sweep.MODE, mtr.MODE, hunt.MODE,
                               reduce.MODE, replay.MODE)
DEFAULT = native.MODE


def mode_named(name: str) -> ModeSpec:
    """The mode called name (KeyError: none; argparse's choices keep it from users)."""
    for mode in MODES:
        if mode.name == name:
            return mode
    raise KeyError(name)
