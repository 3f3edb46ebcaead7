"""--mode=cleanup: stop every server an earlier run recorded in (or tagged with) the
workdir, and empty its bots' directories."""
from __future__ import annotations

import os

from ..errors import EXIT_OK
from .environment import RunEnvironment
from ..servers.state import stop_recorded


def cleanup(env: RunEnvironment) -> int:
    """Lock the workdir (a missing one is nothing to do), stop what its state files and
    process tags name, wipe the bots; returns EXIT_OK (failures raise)."""
    workdir, log = env.workdir, env.log
    if not os.path.isdir(workdir.path):
        log.info(f"No workdir at {workdir.path}; nothing to clean up")
        return EXIT_OK
    env.lock()
    stopped = stop_recorded(env.state_files(), workdir.path)
    log.info("Stopping all running servers...")
    env.sweep_network()
    workdir.wipe_bots()
    log.info(f"Stopped {stopped} server process(es) of {workdir.path}")
    return EXIT_OK
