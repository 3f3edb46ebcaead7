"""Picks and runs the mode a run asked for over its environment: cleanup, --list,
sweep, mtr, hunt, --start-and-exit or the native test run."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import EXIT_OK
from ..platform.logsetup import configure

if TYPE_CHECKING:
    from ..run.environment import RunEnvironment

# Each mode's modules are imported when that mode runs (issue 34: a small fixed cost):
# --mode=cleanup needs none of the test runner's.


def list_tests(env: RunEnvironment) -> int:
    """--list: print this shard's selected tests, one suite.test a line (nothing starts)."""
    from ..run.filters import narrow
    from ..run.selection import apply_shard, require_tests
    from ..suites.loader import select_tests
    config = env.config
    specs = narrow(config, select_tests(config.suites, config.tests, config.suitepaths,
                                        config.default_server_type))
    require_tests(specs, config)
    for spec in apply_shard(config, specs):
        print(spec.full_name + (f"  # disabled: {spec.disabled}" if spec.disabled else ""))
    return EXIT_OK


def run_mode(env: RunEnvironment) -> int:
    """The chosen mode over env; returns the exit status (the caller closes env)."""
    config = env.config
    if config.mode == "cleanup":
        from ..run.cleanup import cleanup
        return cleanup(env)
    if config.list_only and config.mode == "mtr":
        from .mtr.run import list_mtr
        return list_mtr(env)
    if config.list_only:
        return list_tests(env)
    env.open_workdir(fresh=config.mode in ("native", "mtr", "hunt", "reduce"))
    configure(config.verbose, logfile=env.workdir.log_file)
    env.discover_tree()
    if config.mode == "sweep":
        from .sweep.run import run_sweep_mode
        return run_sweep_mode(env)
    if config.mode == "mtr":
        from .mtr.run import run_mtr
        return run_mtr(env)
    if config.mode == "hunt":
        from .hunt.run import run_hunt
        return run_hunt(env)
    if config.mode == "reduce":
        from .reduce.run import run_reduce
        return run_reduce(env)
    from ..run.selection import require_tests, select
    specs = select(env)
    if config.start_and_exit:
        from .native.start_and_exit import start_and_exit
        return start_and_exit(env, specs)
    require_tests(specs, config)  # an empty shard of a real selection is fine
    from .native.early_start import launch_first
    launch_first(env, specs)  # its boot overlaps what follows
    from ..run.native import run_tests
    return run_tests(env, specs)
