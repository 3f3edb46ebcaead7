"""The first test's servers launched before the test runner's modules load (issue 34).

A native run on one in-process bot copies the first test's datadirs and
spawns its servers right after selection (every refusal check is done by
then), without waiting for them: importing the runner, opening the results
history and building the bot then overlap the servers' boot, and the
runner's ``get_servers`` for that test waits for them (see
``ServerManager.launch``).  Nothing is launched where the test might not
start its servers at all (disabled, broken, a 2012 ``skip_checks``), or
where the start is not the plain one (parallel bots, shards, namespaces,
server wrappers, kinds that start in one go)."""
from __future__ import annotations

from ...run.environment import RunEnvironment
from ...suites.loader import TestSpec


def first_test(env: RunEnvironment, specs: list[TestSpec]) -> TestSpec | None:
    """The test the run's one in-process bot starts with, when its servers can be
    launched early; None otherwise."""
    config = env.config
    if not specs or config.reporting.parallel > 1 or config.selection.shard or config.start_and_exit:
        return None
    spec = specs[0]
    if spec.disabled or spec.broken or spec.requirements.namespaced:
        return None
    if callable(vars(spec.module).get("skip_checks")):  # may skip before any server starts
        return None
    return spec


def launch_first(env: RunEnvironment, specs: list[TestSpec]) -> bool:
    """Launch the servers of the run's first test on bot0 (spawned, not waited for);
    True when launched."""
    spec = first_test(env, specs)
    return spec is not None and env.launch("bot0", spec.requirements)
