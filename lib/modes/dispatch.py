"""Runs the mode a run asked for over its environment, as lib/modes/table.py says."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..platform.logsetup import configure
from .table import DEFAULT, mode_named

if TYPE_CHECKING:
    from ..run.environment import RunEnvironment


def run_mode(env: RunEnvironment) -> int:
    """The chosen mode over env; returns the exit status (the caller closes env).
    Cleanup runs before the workdir is opened; ``--list`` prints the mode's selection
    (the native one's unless the mode has its own); the others open the workdir (fresh
    for a run's own logs), set up logging into it, find the code tree and run."""
    config = env.config
    mode = mode_named(config.mode)
    if mode.workdir == "none":
        return mode.run(env)
    if config.selection.list_only:
        lister = mode.list_tests or DEFAULT.list_tests
        assert lister is not None
        return lister(env)
    env.open_workdir(fresh=mode.workdir == "fresh")
    configure(config.reporting.verbose, logfile=env.workdir.log_file)
    env.discover_tree()
    return mode.run(env)
