"""Runs the mode a run asked for over its environment, as lib/modes/table.py says, and
ends every run of servers the same way: with the RAM cache's line (its size and cap)."""
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
    for a run's own logs), set up logging into it, find the code tree and run, and a run
    that ends (not ``--start-and-exit``'s) says the cache's size (:func:`say_cache`)."""
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
    status = mode.run(env)
    if not config.start_and_exit:
        say_cache(env)
    return status


def say_cache(env: RunEnvironment) -> None:
    """The line that ends a run's summary, whatever its mode: the RAM cache of datadir
    templates and cluster snapshots its servers start from, its size and its cap
    (lib/servers/ramcache.py)."""
    from ..servers import ramcache
    env.log.info(ramcache.summary_line(env.workdir.cache_root,
                                       env.config.servers.cache_max_mb * ramcache.MB))
