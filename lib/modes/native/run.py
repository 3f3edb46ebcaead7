"""The native run: select the suites' tests, --start-and-exit or start the first test's
servers early, then run them on the bots (:func:`lib.run.native.run_tests`)."""
from __future__ import annotations

from ...errors import EXIT_OK
from ...run.environment import RunEnvironment
from ...run.filters import narrow
from ...run.selection import apply_shard, require_tests, select
from ...suites.loader import select_tests


def list_tests(env: RunEnvironment) -> int:
    """--list: print this shard's selected tests, one suite.test a line (nothing starts)."""
    config = env.config
    chosen = config.selection
    specs = narrow(config, select_tests(chosen.suites, chosen.tests, chosen.suitepaths,
                                        config.servers.default_server_type))
    require_tests(specs, config)
    for spec in apply_shard(config, specs):
        print(spec.full_name + (f"  # disabled: {spec.disabled}" if spec.disabled else ""))
    return EXIT_OK


def run_native(env: RunEnvironment) -> int:
    """The selected tests over env (or --start-and-exit's servers); the exit status."""
    specs = select(env)
    if env.config.start_and_exit:
        from .start_and_exit import start_and_exit
        return start_and_exit(env, specs)
    require_tests(specs, env.config)  # an empty shard of a real selection is fine
    from .early_start import launch_first
    launch_first(env, specs)  # its boot overlaps what follows
    from ...run.native import run_tests
    return run_tests(env, specs)
